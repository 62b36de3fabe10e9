package pylit

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func TestFormatParseRoundTrip(t *testing.T) {
	for _, doc := range []string{
		`{}`, `{"a": 1}`, `{"site_id": "1001", "limit": 50, "ok": true, "no": false, "x": null}`,
		`{"q": "it's \"quoted\"\n\t\\ é ✓ \u2028"}`, `{"n": [1, 2.5, -3, 1e20, "s", [], {}]}`,
		`{"nested": {"deep": {"er": [{"a": [null]}]}}}`,
	} {
		var v any
		if err := json.Unmarshal([]byte(doc), &v); err != nil {
			t.Fatal(err)
		}
		lit, err := Format(v)
		if err != nil {
			t.Fatalf("Format(%s): %v", doc, err)
		}
		got, rest, err := Parse(lit)
		if err != nil || rest != "" {
			t.Fatalf("Parse(%s) = %v, rest %q, %v", lit, got, rest, err)
		}
		if !reflect.DeepEqual(got, v) {
			t.Errorf("round trip of %s through %s: got %#v", doc, lit, got)
		}
	}
}

func TestFormatWritesPython(t *testing.T) {
	v := map[string]any{"b": true, "a": nil, "c": []any{false, 2.0, 0.5, "x"}}
	got, err := Format(v)
	if want := `{"a": None, "b": True, "c": [False, 2, 0.5, "x"]}`; err != nil || got != want {
		t.Errorf("Format = %s, %v; want %s", got, err, want)
	}
}

func TestParsePythonSpellings(t *testing.T) {
	for _, c := range []struct {
		src  string
		want any
		rest string
	}{
		{`'single'`, "single", ""},
		{`"""tri"ple"""`, `tri"ple`, ""},
		{`'\x41\u00e9\U0001F600\q'`, "Aé😀\\q", ""},
		{`( 1, 'a', )`, []any{1.0, "a"}, ""},
		{"{\n  'a': 1,  # why\n  'b': [True, None],\n}", map[string]any{"a": 1.0, "b": []any{true, nil}}, ""},
		{`1_000)`, 1000.0, ")"},
		{`  -2.5e3, rest`, -2500.0, ", rest"},
	} {
		got, rest, err := Parse(c.src)
		if err != nil || rest != c.rest || !reflect.DeepEqual(got, c.want) {
			t.Errorf("Parse(%q) = %#v, rest %q, %v; want %#v, rest %q", c.src, got, rest, err, c.want, c.rest)
		}
	}
}

func TestParseRefusesWhatIsNoLiteral(t *testing.T) {
	for _, src := range []string{`site_id`, `{"a": x}`, `f"{x}"`, `0x10`, `{1: 2}`, `[1 2]`, `Truth`, ``, `{"a": 1`} {
		if v, _, err := Parse(src); !errors.Is(err, ErrNotLiteral) {
			t.Errorf("Parse(%q) = %#v, %v; want ErrNotLiteral", src, v, err)
		}
	}
	for _, src := range []string{`'open`, "'line\nbreak'", `'\u12'`} {
		if _, _, err := Parse(src); err == nil || errors.Is(err, ErrNotLiteral) {
			t.Errorf("Parse(%q): err %v, want a syntax error", src, err)
		}
	}
	deep := ""
	for i := 0; i < MaxDepth+2; i++ {
		deep += "["
	}
	if _, _, err := Parse(deep); err == nil {
		t.Error("Parse of a list nested past MaxDepth: no error")
	}
}

// FuzzParse: any input parses or fails without panic, and whatever parses
// formats back to a literal that parses to the same value.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a": [1, 'b', None]}`, `'\x41'`, `(1,)`, `"""x"""`, `-1e5`, `{`, `'\U0010FFFF'`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		v, _, err := Parse(src)
		if err != nil {
			return
		}
		lit, err := Format(v)
		if err != nil {
			return // a number past float64 (inf): no literal
		}
		back, rest, err := Parse(lit)
		if err != nil || rest != "" {
			t.Fatalf("Format(Parse(%q)) = %s does not parse: %v", src, lit, err)
		}
		a, _ := json.Marshal(v)
		b, _ := json.Marshal(back)
		if string(a) != string(b) {
			t.Fatalf("%q: %s then %s", src, a, b)
		}
	})
}
