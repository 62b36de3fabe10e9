package traces

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fullRun sets the fields of the trace types by hand, to values like
// those of a real run. (TestEncodeRunEqualsMarshal also fills a run by
// reflection, which reaches every field, new ones included.)
func fullRun(s string, raw json.RawMessage) *Run {
	temp, topP := 0.25, 1e-7
	id := Hash([]byte(s))
	return &Run{
		Manifest: Manifest{Format: FormatVersion, Mode: ModeReplay, Replays: &id, Suite: s, RunIndex: 3,
			Scenario: ScenarioRef{ID: s, Hash: "sha256:" + s}, Server: ServerRef{Name: s, Repo: "o/r", SHA: "abc", ProfileHash: "p"},
			Model:   ModelRef{Provider: "openai", Name: "openai:" + s, Temperature: &temp, TopP: &topP, MaxTokens: 512, Seed: -7},
			Fixture: FixtureRef{Name: "site-a", Hash: "h"}, Harness: "dev", SystemPrompt: "agent/1", Outcome: "answered"},
		Events: []Event{
			{Kind: KindInitialize, AtUS: 1, Initialize: &Initialize{ProtocolVersion: "2025-11-25", ServerInfo: raw, Capabilities: raw, Instructions: s, Stderr: s}},
			{Kind: KindTools, AtUS: 2, Tools: &Tools{Tools: raw}},
			{Kind: KindTurn, AtUS: 3, Turn: &Turn{Index: 1, Key: id, Request: raw, Response: raw, Usage: Usage{Input: 1, Output: 2, Cached: 3, Estimated: true}, LatencyUS: 4, Attempts: 2}},
			{Kind: KindCall, AtUS: 4, Call: &Call{Index: 2, Tool: s, Arguments: raw, Result: raw, IsError: true, Invalid: s, LatencyUS: 5}},
			{Kind: KindElicitation, Elicitation: &Elicitation{Call: 1, Message: s, Schema: raw, Action: "accept", Content: raw}},
			{Kind: KindHTTP, HTTP: &HTTP{Seq: 1, Method: "GET", Path: "/" + s, Query: "a=1&b=<2>", RequestBody: raw, Status: 200, ResponseBody: raw, Class: "read", LatencyUS: 9, Call: -1, Boot: true}},
			{Kind: KindEgress, Egress: &Egress{Host: s, Call: 0}},
			{Kind: KindAnswer, Answer: &Answer{Result: raw, Text: s}},
			{Kind: KindError, Error: &Error{Kind: "model", Message: s}},
			{Kind: KindCall, Call: &Call{Tool: "t"}}, // nil payloads
			{Kind: KindTools, Tools: &Tools{}},
		},
	}
}

// checkEncodeRun holds encodeRun to its definition, Marshal, and
// decodeCanonical to encoding/json on the document.
func checkEncodeRun(t *testing.T, r *Run) {
	t.Helper()
	// The document leaves out the side fields (side.go).
	checkEncodeAs(t, r, r.withoutSide())
	doc, err := marshalStd(r) // with them: as runs stored before 2026-12-01 have them
	if err != nil {
		return
	}
	var got, want Run
	if err := decodeCanonical(doc, &got, nil); err != nil {
		t.Fatalf("decodeCanonical: %v\n%s", err, doc)
	}
	if err := json.Unmarshal(doc, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeCanonical differs from json.Unmarshal:\n got %+v\nwant %+v\n doc %s", got, want, doc)
	}
	// The document and the side read back as the whole run.
	doc, err = encodeCanonical(r)
	if err != nil {
		t.Fatal(err)
	}
	side, _, err := r.side()
	if err != nil {
		t.Fatal(err)
	}
	var back Run
	if err := decodeCanonical(doc, &back, nil); err != nil {
		t.Fatal(err)
	}
	if err := back.setSide(side); err != nil {
		t.Fatalf("setSide: %v\n%s", err, side)
	}
	if !reflect.DeepEqual(back, want) {
		t.Fatalf("document and side read back differ from the run:\n got %+v\nwant %+v\n side %s", back, want, side)
	}
}

// checkEncode holds encodeCanonical(v) to Marshal(v): the same bytes, or
// both an error.
func checkEncode(t *testing.T, v any) {
	t.Helper()
	checkEncodeAs(t, v, v)
}

// checkEncodeAs holds encodeCanonical(v) to Marshal(as) as encoding/json
// and Canonical give it.
func checkEncodeAs(t *testing.T, v, as any) {
	t.Helper()
	want, errW := marshalStd(as)
	got, errG := encodeCanonical(v)
	if (errW == nil) != (errG == nil) {
		t.Fatalf("encodeCanonical error %v, Marshal error %v", errG, errW)
	}
	if errW == nil && !bytes.Equal(got, want) {
		t.Fatalf("encodeCanonical differs from Marshal:\n got %s\nwant %s", got, want)
	}
	// Marshal itself, side fields and all.
	want, errW = marshalStd(v)
	got, errG = Marshal(v)
	if (errW == nil) != (errG == nil) {
		t.Fatalf("Marshal error %v, encoding/json and Canonical error %v", errG, errW)
	}
	if errW == nil && !bytes.Equal(got, want) {
		t.Fatalf("Marshal differs from encoding/json and Canonical:\n got %s\nwant %s", got, want)
	}
}

func TestEncodeRunEqualsMarshal(t *testing.T) {
	checkEncodeRun(t, fullRun("alerts-001 <é> \u2028 \"q\" \\ \x01", json.RawMessage(`{ "b": [1, 2.50, -0, 1e3, "x\u00e9<>&"], "a": {"z": null, "y": true} }`)))
	checkEncodeRun(t, fullRun("bad utf-8 \xff\xfe end", json.RawMessage(`"\ud83d\ude00"`)))
	checkEncodeRun(t, &Run{Manifest: Manifest{Format: FormatVersion}})
	checkEncodeRun(t, fullRun("x", json.RawMessage(`{"a":`))) // invalid payload: both refuse
	c := newCorpus(7, 3, 2, 2)
	if err := c.all(func(_ string, r *Run) error { checkEncodeRun(t, r); return nil }); err != nil {
		t.Fatal(err)
	}
	// A run with every field of every trace type set, found by reflection:
	// a field added to a trace type is covered without a change here.
	var r Run
	fill := &filler{strs: []string{"s <é>"}, raws: []json.RawMessage{json.RawMessage(`{"b":1.0,"a":[]}`)}, ints: []int64{-7}, floats: []float64{0.25}}
	fill.value(reflect.ValueOf(&r).Elem())
	checkEncodeRun(t, &r)
	doc, _ := Marshal(&r)
	var missing []string
	jsonFields(reflect.TypeFor[Run](), map[reflect.Type]bool{}, func(typ reflect.Type, name string) {
		if !bytes.Contains(doc, []byte(`"`+name+`":`)) {
			missing = append(missing, typ.Name()+"."+name)
		}
	})
	if len(missing) > 0 {
		t.Errorf("the filled run leaves %v unset:\n%s", missing, doc)
	}
}

// jsonFields calls fn with the JSON name of every field of the struct types
// reachable from t.
func jsonFields(t reflect.Type, seen map[reflect.Type]bool, fn func(reflect.Type, string)) {
	if seen[t] {
		return
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		jsonFields(t.Elem(), seen, fn)
	case reflect.Struct:
		if t.Implements(marshalerType) {
			return
		}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			fn(t, name)
			jsonFields(f.Type, seen, fn)
		}
	}
}

// A filler sets a value, and everything it holds, by reflection, from a
// stream of choices: the fuzzer's bytes or, once they run out, the first
// choice, which sets every field (to the first value of each pool). The
// pools of raw payloads and floats start with values Marshal takes, and
// end with some it refuses (rawsOK and floatsOK say where), chosen less
// often, so that most values built encode.
type filler struct {
	shape            []byte
	strs             []string
	ints             []int64
	floats           []float64
	raws             []json.RawMessage
	floatsOK, rawsOK int
	depth            int
}

func (f *filler) choose(n int) int {
	if len(f.shape) == 0 {
		return 0
	}
	c := int(f.shape[0]) % n
	f.shape = f.shape[1:]
	return c
}

// pick chooses among n values of which the first ok are valid: one of
// those seven times in eight.
func (f *filler) pick(n, ok int) int {
	if c := f.choose(256); ok > 0 && ok < n && c&7 != 7 {
		return c >> 3 % ok
	} else {
		return c >> 3 % n
	}
}

func (f *filler) value(v reflect.Value) {
	if v.Type() == rawMessageType {
		v.SetBytes(f.raws[f.pick(len(f.raws), f.rawsOK)])
		return
	}
	if v.Type() == reflect.TypeFor[time.Time]() {
		v.Set(reflect.ValueOf(time.Unix(f.ints[f.choose(len(f.ints))]%1e11, 0).UTC()))
		return
	}
	f.depth++
	defer func() { f.depth-- }()
	deep := f.depth > 6 // recursive types end
	switch v.Kind() {
	case reflect.String:
		v.SetString(f.strs[f.choose(len(f.strs))])
	case reflect.Bool:
		v.SetBool(f.choose(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(f.ints[f.choose(len(f.ints))])
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(uint64(f.ints[f.choose(len(f.ints))]))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(f.floats[f.pick(len(f.floats), f.floatsOK)])
	case reflect.Pointer:
		if !deep && f.choose(3) != 2 {
			v.Set(reflect.New(v.Type().Elem()))
			f.value(v.Elem())
		}
	case reflect.Slice:
		switch n := f.choose(5); {
		case n == 1 || deep && v.Type().Elem().Kind() != reflect.Uint8:
			// nil
		case n == 2:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			v.Set(reflect.MakeSlice(v.Type(), max(n-1, 1), max(n-1, 1)))
			for i := range v.Len() {
				f.value(v.Index(i))
			}
		}
	case reflect.Array:
		for i := range v.Len() {
			f.value(v.Index(i))
		}
	case reflect.Map:
		if !deep && f.choose(3) != 2 {
			v.Set(reflect.MakeMap(v.Type()))
			for range 1 + f.choose(2) {
				k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
				f.value(k)
				f.value(e)
				v.SetMapIndex(k, e)
			}
		}
	case reflect.Interface:
		xs := []any{f.strs[0], f.ints[0], f.floats[0], f.raws[0], oddText(f.strs[0]), oddZero{int(f.ints[0])}, Hash(f.raws[0]), nil}
		if x := xs[f.choose(len(xs))]; x != nil && reflect.TypeOf(x).Implements(v.Type()) {
			v.Set(reflect.ValueOf(x))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Field(i).CanSet() {
				f.value(v.Field(i))
			}
		}
	}
}

// FuzzCanonicalEncoder is the differential test of encodeCanonical: trace
// values built from the fuzzer's input (which fields are set, and to
// what), and values of types the trace types do not use (yet), must encode
// as Marshal encodes them, or fail as it fails.
func FuzzCanonicalEncoder(f *testing.F) {
	f.Add([]byte{}, "alerts-001", `{"a":[1,2.5e10,"<&>"]}`, int64(7))
	f.Add([]byte{1, 0, 2, 3, 4, 5, 6, 7, 8, 9}, "\xff\u2028", `[-0.0, 1E-7, "\u0000"]`, int64(-1))
	f.Add([]byte{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9}, "", `null`, int64(1)<<53+1)
	f.Add([]byte("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c"), "<>&\x7f\x1f", ` {"b":1,"a":{"d":2,"c":3}} `, int64(math.MinInt64))
	// Payloads as deep as a document allows, and one deeper: the
	// hand-written encoder counted depth from the payload, not the
	// document, and took payloads 510-513 deep that Marshal refuses.
	f.Add([]byte{}, "deep", strings.Repeat("[", 509)+strings.Repeat("]", 509), int64(0))
	f.Add([]byte{}, "deep", strings.Repeat("[", 510)+strings.Repeat("]", 510), int64(0))
	f.Fuzz(func(t *testing.T, shape []byte, s, raw string, n int64) {
		nested := func(k int, inner string) json.RawMessage {
			return json.RawMessage(strings.Repeat("[", k) + inner + strings.Repeat("]", k))
		}
		fill := &filler{
			shape: shape,
			strs:  []string{s, "", "<>&", "\u2028\u2029", "\xff\xfe", "\x00\x1f\x7f\"\\/", "é😀\ufb01", s + "\xed\xa0\x80"},
			ints:  []int64{n, 0, 1, -1, math.MaxInt64, math.MinInt64, 1<<53 + 1, -(1 << 31)},
			floats: []float64{float64(n), 0, math.Copysign(0, -1), 1e21, 1e-7, 0.1, 1 << 60, math.MaxFloat64,
				math.SmallestNonzeroFloat64, float64(float32(0.1)), math.NaN(), math.Inf(1)},
			floatsOK: 10,
			raws: []json.RawMessage{json.RawMessage(raw), nil, []byte(`1.0`), []byte(`1e2`), []byte(`-0`),
				[]byte(` [1, 2.50 ,-0.0, 123456789012345678901234567890, -9223372036854775808, 9223372036854775808] `),
				[]byte(`{"z":"\u003c\u2028\ud83d\ude00","a":[true,false,null]}`), []byte(`{"\u0061":1,"\ufb01":2,"😀":3}`),
				nested(508, "1"), nested(509, ""), // as deep as a payload can be
				// Refused (or where it may be: deep payloads, an empty one
				// where it is not omitted).
				{}, []byte(`1E400`), []byte(`{"a":1,"a":2}`), []byte(`{"b":{"x":1,"y":{},"x":1}}`), []byte(`"\ud800"`), []byte("\"\xff\""),
				[]byte(`1 2`), nested(509, "1"), nested(510, ""), nested(500+int(uint64(n)%16), "")},
			rawsOK: 10,
		}
		var r Run
		fill.value(reflect.ValueOf(&r).Elem())
		checkEncodeRun(t, &r)
		var o odd
		fill.value(reflect.ValueOf(&o).Elem())
		checkEncode(t, &o)
		checkEncode(t, o) // not addressable: no methods on the pointer
	})
}

// odd has what the trace types do not use (yet), for the encoder's
// general rules and what it leaves to encoding/json.
type odd struct {
	U8     uint8   `json:"u8"`
	U64    uint64  `json:"u64,omitempty"`
	F32    float32 `json:"f32"`
	F64    float64 `json:"f64,omitzero"`
	I8     int8
	Ａ      int                        // U+FF21: after 𝐀 in UTF-16 order, before it in UTF-8's
	𝐀      string                     `json:",omitempty"`
	Bytes  []byte                     `json:"bytes"`
	Arr    [2]int16                   `json:"arr"`
	Map    map[string]*odd            `json:"map,omitempty"`
	Any    any                        `json:"any"`
	Time   time.Time                  `json:"time"`
	M      oddMarshaler               `json:"m"`
	PM     oddPtrMarshaler            `json:"pm,omitempty"`
	T      oddText                    `json:"t"`
	PT     *oddText                   `json:"pt"`
	TI     encoding.TextMarshaler     `json:"ti"`
	Z      oddZero                    `json:"z,omitzero"`
	PZ     oddPtrZero                 `json:"pz,omitempty,omitzero"`
	IZ     interface{ IsZero() bool } `json:"iz,omitzero"`
	IDs    []ID                       `json:"ids,omitzero"`
	Quoted oddQuoted                  `json:"quoted"`
	Embeds oddEmbeds                  `json:"embeds"`
	Tags   oddTags                    `json:"tags"`
	Raws   []json.RawMessage          `json:"raws"`
	Next   *odd                       `json:"next,omitempty"`
	Skip   int                        `json:"-"`
	Dash   int                        `json:"-,"`
	hidden int
}

type oddMarshaler struct{ Raw json.RawMessage }

func (m oddMarshaler) MarshalJSON() ([]byte, error) {
	if m.Raw == nil {
		return []byte("null"), nil
	}
	return m.Raw, nil
}

type oddPtrMarshaler struct{ S string }

func (m *oddPtrMarshaler) MarshalJSON() ([]byte, error) {
	return []byte(`{"s":` + strconv.Quote(m.S) + `, "b": 1.50}`), nil
}

type oddText string

func (t oddText) MarshalText() ([]byte, error) {
	if t == "<>&" {
		return nil, errors.New("no")
	}
	return []byte("<" + t + ">"), nil
}

type oddZero struct{ N int }

func (z oddZero) IsZero() bool { return z.N%2 == 0 }

type oddPtrZero int

func (z *oddPtrZero) IsZero() bool { return *z < 0 }

type oddQuoted struct {
	N int    `json:"n,string"`
	B bool   `json:",string"`
	S string `json:"s,string"`
}

type oddEmbeds struct {
	FixtureRef
	*ServerRef
	X int `json:"name"`
}

type oddTags struct {
	A   int `json:"a<b&c"`
	B   int `json:"é"`
	C   int `json:"x y"`
	D   int `json:"bad\"q"`
	Dup int
	F   int `json:"Dup"` // wins over the untagged Dup
}

// BenchmarkEncodeRun encodes a run's canonical document: one run of the
// synthetic corpus (large payloads, canonical already: the scan dominates),
// and runs of many events with small payloads, canonical already (the work
// per field dominates) or not (canonicalising them dominates).
func BenchmarkEncodeRun(b *testing.B) {
	many := func(raw string) *Run {
		r := fullRun("alerts-001 <é>", json.RawMessage(raw))
		for range 5 {
			r.Events = append(r.Events, r.Events...)
		}
		return r
	}
	for _, in := range []struct {
		name string
		run  *Run
	}{
		{"corpus", newCorpus(42, 1, 1, 1).run(0, 0, 0)},
		{"fields", many(`{"a":{"z":null},"b":[1,2.5,"x"]}`)},
		{"small", many(`{"b":[1,2.5,"x"],"a":{"z":null}}`)},
	} {
		b.Run(in.name, func(b *testing.B) {
			doc, err := encodeRun(in.run)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(doc)))
			b.ReportMetric(float64(len(in.run.Events)), "events")
			for range b.N {
				if _, err := encodeRun(in.run); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// decodeCanonical leaves to encoding/json what has an Unmarshal method or
// needs its other rules, so that a field of such a type decodes right.
func TestDecodeCanonicalMethods(t *testing.T) {
	type methods struct {
		Level   upperText            `json:"level"`
		Levels  []upperText          `json:"levels"`
		Obj     swapped              `json:"obj"`
		PObj    *swapped             `json:"pobj"`
		Map     map[string]upperText `json:"map"`
		Embeds  oddEmbeds            `json:"embeds"`
		Quoted  oddQuoted            `json:"quoted"`
		ID      ID                   `json:"id"`
		Time    time.Time            `json:"time"`
		Payload json.RawMessage      `json:"payload"`
	}
	v := methods{Level: "a", Levels: []upperText{"b", "c"}, Obj: swapped{A: 1, B: 2}, PObj: &swapped{A: 3},
		Map: map[string]upperText{"k": "d"}, Embeds: oddEmbeds{FixtureRef: FixtureRef{Name: "f"}, ServerRef: &ServerRef{Repo: "r"}, X: 4},
		Quoted: oddQuoted{N: 5, B: true, S: "s"}, ID: Hash(nil), Time: time.Unix(1e9, 5).UTC(), Payload: json.RawMessage(`{"a":[1]}`)}
	doc, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var got, want methods
	if err := decodeCanonical(doc, &got, nil); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(doc, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeCanonical differs from json.Unmarshal:\n got %+v\nwant %+v\n doc %s", got, want, doc)
	}
}

// upperText is read back in upper case.
type upperText string

func (u *upperText) UnmarshalText(b []byte) error {
	*u = upperText(strings.ToUpper(string(b)))
	return nil
}

// swapped reads its members swapped.
type swapped struct{ A, B int }

func (s *swapped) UnmarshalJSON(b []byte) error {
	var m map[string]int
	err := json.Unmarshal(b, &m)
	s.A, s.B = m["B"], m["A"]
	return err
}

// withoutSide returns r, or a copy of it whose side fields are zero when
// it has side values; r is not changed. Only the payloads that change are
// copied.
func (r *Run) withoutSide() *Run {
	if side, _, _ := r.side(); side == nil {
		return r
	}
	c := &Run{Manifest: r.Manifest, Events: slices.Clone(r.Events)}
	fields := sideFields()
	for i := range c.Events {
		ev := reflect.ValueOf(&c.Events[i]).Elem()
		copied := map[int]bool{}
		for k := range fields {
			f := &fields[k]
			v, ok := f.value(ev)
			if !ok || v.IsZero() {
				continue
			}
			if f.payload >= 0 && !copied[f.payload] {
				p := ev.Field(f.payload)
				cp := reflect.New(p.Type().Elem())
				cp.Elem().Set(p.Elem())
				p.Set(cp)
				copied[f.payload] = true
				v, _ = f.value(ev)
			}
			v.SetZero()
		}
	}
	return c
}

// marshalStd is what Marshal returns, by the definition: encoding/json,
// then Canonical. The encoder is held to it.
func marshalStd(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return Canonical(b)
}

// TestEncodeNumber holds json.Number, a string that encoding/json writes as
// the number it holds (a decoder's UseNumber makes them), to Marshal: in a
// field, in an interface and in a map, valid and not.
func TestEncodeNumber(t *testing.T) {
	type withNumber struct {
		N json.Number `json:"n"`
		A any         `json:"a"`
	}
	for _, n := range []json.Number{"1", "-0.50", "1e3", "12345678901234567890", "", "x1"} {
		checkEncode(t, withNumber{N: n, A: n})
		checkEncode(t, map[string]any{"n": n, "list": []any{n, json.Number("2")}})
	}
	if b, err := Marshal(map[string]any{"ms": json.Number("1")}); err != nil || string(b) != `{"ms":1}` {
		t.Errorf(`Marshal of json.Number("1") = %s, %v; want {"ms":1}`, b, err)
	}
}
