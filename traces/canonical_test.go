package traces

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestCanonical(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"keys sorted", `{"b":1,"a":2}`, `{"a":2,"b":1}`},
		{"nested keys sorted", `{"z":{"y":1,"x":[{"d":0,"c":0}]}}`, `{"z":{"x":[{"c":0,"d":0}],"y":1}}`},
		{"whitespace dropped", " {\n\t\"a\" : [ 1 , 2 ] }\r\n", `{"a":[1,2]}`},
		{"array order kept", `[3,1,2]`, `[3,1,2]`},
		{"empty containers", `{"a":{},"b":[]}`, `{"a":{},"b":[]}`},
		{"literals", `[true,false,null]`, `[true,false,null]`},
		{"integer beyond int64 via double", `12345678901234567890`, `12345678901234567000`},
		{"int64 exact digits", `9007199254740993`, `9007199254740993`},
		{"negative zero", `-0`, `0`},
		{"negative zero float", `-0.0`, `0`},
		{"float trailing zeros", `1.50`, `1.5`},
		{"exponent integer", `1e2`, `100`},
		{"large float", `1e21`, `1e+21`},
		{"just below 1e21", `1e20`, `100000000000000000000`},
		{"small float", `0.0000001`, `1e-7`},
		{"small float boundary", `0.000001`, `0.000001`},
		{"shortest round trip", `0.1`, `0.1`},
		{"es6 mantissa", `1.5e-7`, `1.5e-7`},
		{"unicode escape decoded", `"\u00e9"`, `"é"`},
		{"surrogate pair decoded", `"\ud83d\ude00"`, `"😀"`},
		{"solidus unescaped", `"a\/b"`, `"a/b"`},
		{"control chars short escapes", `"\b\f\n\r\t"`, `"\b\f\n\r\t"`},
		{"other control lower hex", `"\u001f\u0001"`, `"\u001f\u0001"`},
		{"html not escaped", `"<a&b>"`, `"<a&b>"`},
		{"quote and backslash", `"\"\\"`, `"\"\\"`},
		{"DEL literal", "\"\u007f\"", "\"\u007f\""},
		// RFC 8785 §3.2.3: keys ordered by UTF-16 code units, so U+1F600
		// (surrogates D83D DE00) sorts before U+FB01 although its code point
		// is larger.
		{"utf16 key order", `{"\ufb01":1,"😀":2,"a":3}`, `{"a":3,"😀":2,"ﬁ":1}`},
		{"escaped and raw keys equal order", `{"\u0062":1,"a":2}`, `{"a":2,"b":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Canonical([]byte(tt.in))
			if err != nil {
				t.Fatalf("Canonical(%q): %v", tt.in, err)
			}
			if string(got) != tt.want {
				t.Errorf("Canonical(%q) = %s, want %s", tt.in, got, tt.want)
			}
			again, err := Canonical(got)
			if err != nil || string(again) != string(got) {
				t.Errorf("not idempotent: %s -> %s (%v)", got, again, err)
			}
		})
	}
}

func TestCanonicalRejects(t *testing.T) {
	tests := []struct{ name, in string }{
		{"empty", ``},
		{"two values", `1 2`},
		{"trailing comma", `[1,]`},
		{"duplicate key", `{"a":1,"a":2}`},
		{"duplicate key after unescape", `{"a":1,"\u0061":2}`},
		{"lone high surrogate", `"\ud800"`},
		{"lone low surrogate", `"\udc00"`},
		{"invalid utf8", "\"\xff\""},
		{"raw control char", "\"a\nb\""},
		{"leading zero", `01`},
		{"bare dot", `1.`},
		{"exponent without digits", `1e`},
		{"overflow", `1e400`},
		{"nan", `NaN`},
		{"single quotes", `'a'`},
		{"unterminated", `{"a":1`},
		{"bad escape", `"\x"`},
		{"too deep", strings.Repeat("[", maxDepth+2) + strings.Repeat("]", maxDepth+2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Canonical([]byte(tt.in))
			if !errors.Is(err, ErrSyntax) {
				t.Errorf("Canonical(%q) error = %v, want ErrSyntax", tt.in, err)
			}
		})
	}
}

// The ES6 number form, against values computed by hand from
// Number.prototype.toString (ECMA-262 §6.1.6.1.20).
func TestES6Numbers(t *testing.T) {
	tests := []struct {
		f    float64
		want string
	}{
		{1, "1"}, {-1.25, "-1.25"}, {123456789012, "123456789012"},
		{1e21, "1e+21"}, {1.2e-7, "1.2e-7"}, {5e-324, "5e-324"},
		{math.MaxFloat64, "1.7976931348623157e+308"}, {0.000001, "0.000001"},
	}
	for _, tt := range tests {
		if got := string(appendES6Number(nil, tt.f)); got != tt.want {
			t.Errorf("appendES6Number(%v) = %s, want %s", tt.f, got, tt.want)
		}
	}
}

func TestIDRoundTrip(t *testing.T) {
	id := Hash([]byte(`{"a":1}`))
	got, err := ParseID(id.String())
	if err != nil || got != id {
		t.Fatalf("ParseID(String()) = %v, %v; want %v", got, err, id)
	}
	b, _ := json.Marshal(id)
	var back ID
	if err := json.Unmarshal(b, &back); err != nil || back != id {
		t.Fatalf("JSON round trip = %v, %v", back, err)
	}
	for _, bad := range []string{"", "abc", strings.Repeat("g", 64), id.String() + "00"} {
		if _, err := ParseID(bad); err == nil {
			t.Errorf("ParseID(%q) accepted", bad)
		}
	}
	if len(id.Short()) != 12 || !strings.HasPrefix(id.String(), id.Short()) {
		t.Errorf("Short() = %q", id.Short())
	}
}

// FuzzCanonical checks that canonicalisation never panics, is idempotent,
// agrees with encoding/json on validity for what it accepts, and preserves
// the value.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`{"b":[1,2.5,"x"],"a":null}`, `"\ud83d\ude00"`, `-0.0e-0`, `[{"a":{"b":{}}}]`, `1e21`, `"\u0000"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := Canonical(in)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("output is not valid JSON: %q -> %q", in, out)
		}
		again, err := Canonical(out)
		if err != nil || string(again) != string(out) {
			t.Fatalf("not idempotent: %q -> %q -> %q (%v)", in, out, again, err)
		}
		var a, b any
		if err := json.Unmarshal(in, &a); err != nil {
			t.Fatalf("accepted input encoding/json rejects: %q: %v", in, err)
		}
		if err := json.Unmarshal(out, &b); err != nil {
			t.Fatal(err)
		}
		if !sameJSON(a, b) {
			t.Fatalf("value changed: %q -> %q", in, out)
		}
	})
}

// sameJSON compares decoded JSON values; numbers compare as float64, so
// -0 equals 0 as canonicalisation intends.
func sameJSON(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			if w, ok := b[k]; !ok || !sameJSON(v, w) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !sameJSON(a[i], b[i]) {
				return false
			}
		}
		return true
	default:
		return a == b
	}
}

func TestBodyJSON(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"JSON kept as is", `{"b":1, "a":2}`, `{"b":1, "a":2}`},
		{"text becomes a string", "Not Found", `"Not Found"`},
		{"duplicate keys are not canonical JSON: kept as text", `{"a":1,"a":2}`, `"{\"a\":1,\"a\":2}"`},
		{"invalid UTF-8 replaced", "a\xffb", "\"a\ufffdb\""},
	}
	for _, tt := range tests {
		if got := string(BodyJSON([]byte(tt.in))); got != tt.want {
			t.Errorf("%s: BodyJSON(%q) = %s, want %s", tt.name, tt.in, got, tt.want)
		}
		// CanonicalBody is the same value in canonical form.
		want := tt.want
		if c, err := Canonical([]byte(tt.want)); err == nil {
			want = string(c)
		}
		if got := string(CanonicalBody([]byte(tt.in))); got != want || got != "" && !isCanonical([]byte(got)) {
			t.Errorf("%s: CanonicalBody(%q) = %s, want %s", tt.name, tt.in, got, want)
		}
	}
}

// FuzzCanonicalMember: on a canonical object, CanonicalMember finds what
// decoding finds; on anything else it never panics.
func FuzzCanonicalMember(f *testing.F) {
	f.Add(`{"messages":[{"content":"a \"tools\": [1]","role":"user"}],"sampling":{},"tools":[{"name":"x"}]}`, "tools")
	f.Add(`{"a":1,"b":"}","c":{"d":[]}}`, "c")
	f.Add(`{ "a" : 1 }`, "a")
	f.Fuzz(func(t *testing.T, doc, key string) {
		got, ok := CanonicalMember([]byte(doc), key)
		c, err := Canonical([]byte(doc))
		if err != nil {
			return // not JSON: only "no panic" is asked
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(c, &m) != nil {
			if _, ok := CanonicalMember(c, key); ok {
				t.Fatalf("member %q found in a canonical non-object %s", key, c)
			}
			return
		}
		want, has := m[key]
		got, ok = CanonicalMember(c, key)
		if ok != has || ok && !bytes.Equal(got, want) {
			t.Fatalf("CanonicalMember(%s, %q) = %s, %v; decoding gives %s, %v", c, key, got, ok, want, has)
		}
	})
}

// FuzzCanonicalLastMember: on a canonical object, CanonicalLastMember
// finds the member key exactly when it is the object's last, with the
// value decoding finds; on anything else it never panics.
func FuzzCanonicalLastMember(f *testing.F) {
	f.Add(`{"messages":[{"content":"a,\"tools\":[1]","role":"user"}],"sampling":{},"tools":[{"name":"x"}]}`, "tools")
	f.Add(`{"a":{"x":1,"tools":[1]},"b":2}`, "tools")
	f.Add(`{"a":{"x":1,"tools":[1]}}`, "tools")
	f.Add(`{"tools":[]}`, "tools")
	f.Add(`{"a":"x\\","tools":"y"}`, "tools")
	f.Fuzz(func(t *testing.T, doc, key string) {
		CanonicalLastMember([]byte(doc), key)
		c, err := Canonical([]byte(doc))
		if err != nil {
			return // not JSON: only "no panic" is asked
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(c, &m) != nil {
			if _, ok := CanonicalLastMember(c, key); ok {
				t.Fatalf("member %q found in a canonical non-object %s", key, c)
			}
			return
		}
		last := ""
		dec := json.NewDecoder(bytes.NewReader(c))
		dec.Token() // {
		for dec.More() {
			k, _ := dec.Token()
			last = k.(string)
			var skip json.RawMessage
			dec.Decode(&skip)
		}
		want, has := m[key]
		got, ok := CanonicalLastMember(c, key)
		if wantOK := has && last == key; ok != wantOK || ok && !bytes.Equal(got, want) {
			t.Fatalf("CanonicalLastMember(%s, %q) = %s, %v; want %s, %v", c, key, got, ok, want, wantOK)
		}
	})
}

// FuzzCanonicalElements: on a canonical array, CanonicalElements finds
// what decoding finds; on anything else it never panics.
func FuzzCanonicalElements(f *testing.F) {
	f.Add(`[{"name":"a","x":"],["},{"name":"b"},1,"s",[2,[3]],null]`)
	f.Add(`[]`)
	f.Add(`[1,]`)
	f.Add(` [ 1 , 2 ] `)
	f.Fuzz(func(t *testing.T, doc string) {
		got, ok := CanonicalElements([]byte(doc))
		c, err := Canonical([]byte(doc))
		if err != nil {
			return // not JSON: only "no panic" is asked
		}
		var want []json.RawMessage
		isArray := json.Unmarshal(c, &want) == nil
		got, ok = CanonicalElements(c)
		if ok != isArray {
			t.Fatalf("CanonicalElements(%s): ok %v; decoding says array %v", c, ok, isArray)
		}
		if len(got) != len(want) {
			t.Fatalf("CanonicalElements(%s) = %d elements; decoding gives %d", c, len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("CanonicalElements(%s)[%d] = %s; decoding gives %s", c, i, got[i], want[i])
			}
		}
	})
}

// isCanonical never says yes to a text Canonical would change, and says
// yes to what Canonical returns (but for keys with escapes).
func FuzzIsCanonical(f *testing.F) {
	for _, s := range []string{`{"b":[1,2.5,"x"],"a":null}`, `{"a":null,"b":[1,2.5,"x"]}`, `"\ud83d\ude00"`, `"😀"`, `-0`, `-0.0e-0`,
		`[{"a":{"b":{}}}]`, `1e21`, `1e+21`, `"\u0000"`, `"\u001f\n\t"`, `"\u000a"`, `{"a":1,"a":2}`, `{"\u0061":1}`,
		`12345678901234567890`, `9223372036854775807`, `-9223372036854775808`, `0.1`, `1.0`, `1E2`, `"a/b\/"`,
		`{"":1,"a":2}`, `{"\ue000":1,"😀":2}`, `{"😀":1,"\ue000":2}`, "\"\xff\"", ` 1`, `[1 ]`, `"\u00e9"`, `"é"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := Canonical(in)
		same := err == nil && bytes.Equal(out, in)
		got := isCanonical(in)
		if got && !same {
			t.Fatalf("isCanonical(%q) = true; Canonical gives %q, %v", in, out, err)
		}
		if err == nil && !isCanonical(out) && !hasEscapedKey(out) {
			t.Fatalf("isCanonical(%q) = false for a canonical text", out)
		}
	})
}

// hasEscapedKey reports whether valid JSON text b has an object key that
// needs an escape (which isCanonical leaves to the canonicalizer).
func hasEscapedKey(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	type frame struct{ obj, key bool }
	var st []frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch t := tok.(type) {
		case json.Delim:
			if t == '{' || t == '[' {
				st = append(st, frame{obj: t == '{', key: t == '{'})
				continue
			}
			st = st[:len(st)-1]
		case string:
			if len(st) > 0 && st[len(st)-1].obj && st[len(st)-1].key {
				if strings.ContainsAny(t, "\"\\") || strings.IndexFunc(t, func(r rune) bool { return r < 0x20 }) >= 0 {
					return true
				}
				st[len(st)-1].key = false
				continue
			}
		}
		if len(st) > 0 && st[len(st)-1].obj {
			st[len(st)-1].key = true
		}
	}
}

func TestIsCanonicalEscapedValues(t *testing.T) {
	for _, s := range []string{`{"content":"{\"a\":1}","role":"tool"}`, `["\u0000\n\\"]`, `{"a":"\"","b":1}`} {
		if !isCanonical([]byte(s)) {
			t.Errorf("isCanonical(%s) = false", s)
		}
	}
}

// specialByteIn answers for every byte value, alone and among plain ones,
// as plainByte does byte by byte.
func TestSpecialByteIn(t *testing.T) {
	for b := range 256 {
		for at := range 8 {
			var w [8]byte
			for i := range w {
				w[i] = 'a'
			}
			w[at] = byte(b)
			x := uint64(0)
			for i := 7; i >= 0; i-- {
				x = x<<8 | uint64(w[i])
			}
			if got := specialByteIn(x); got != !plainByte[b] {
				t.Fatalf("byte %#x at %d: special %v, plain %v", b, at, got, plainByte[b])
			}
		}
	}
	// Words of bytes near the edges (0x1f/0x20, the quote, the backslash,
	// 0x7f/0x80), from a fixed seed.
	edges := []byte{0x00, 0x01, 0x1f, 0x20, 0x21, '"', 0x23, 0x5b, '\\', 0x5d, 0x7e, 0x7f, 0x80, 0x81, 0xfe, 0xff, 'a'}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		x, want := uint64(0), false
		for range 8 {
			b := edges[rng.IntN(len(edges))]
			x = x<<8 | uint64(b)
			want = want || !plainByte[b]
		}
		if got := specialByteIn(x); got != want {
			t.Fatalf("%#016x: special %v, want %v", x, got, want)
		}
	}
}
