package traces

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// bigArray is a canonical array of at least knownMinSize bytes whose
// elements are elem (a canonical value), and whose last holds tail.
func bigArray(elem []byte, tail string) []byte {
	b := []byte{'['}
	for len(b) < knownMinSize {
		b = append(append(b, elem...), ',')
	}
	return append(b, fmt.Sprintf(`{"tail":%q}]`, tail)...)
}

// nest puts v at the given depth of arrays.
func nest(v []byte, depth int) []byte {
	return []byte(strings.Repeat("[", depth) + string(v) + strings.Repeat("]", depth))
}

// checkWith is the canonical checker's verdict on data with known values k.
func checkWith(data []byte, k *knownValues) bool {
	v := canonicalChecker{in: data, known: k}
	return v.value(0) && v.pos == len(data)
}

// Known values change no verdict of the checker and no end found by the
// scanner: a value is taken as known only where the document's bytes are
// the whole value, and only at a depth no deeper than it was proved at.
func TestKnownValues(t *testing.T) {
	elem := []byte(`{"description":"lists the clients of a site","name":"list_clients","schema":{"properties":{"site":{"type":"string"}},"type":"object"}}`)
	arr := bigArray(elem, "end")
	k := &knownValues{}
	first := []byte(`{"tools":` + string(arr) + `}`)
	if !checkWith(first, k) {
		t.Fatal("a canonical document does not check")
	}
	if k.list.Load() != nil {
		t.Fatal("the checker remembered an array seen once")
	}
	if !checkWith(first, k) {
		t.Fatal("a canonical document does not check")
	}
	if l := k.list.Load(); l == nil || len(*l) != 1 || !bytes.Equal((*l)[0].b, arr) || (*l)[0].depth != 1 {
		t.Fatalf("the checker did not remember the array seen twice, at depth 1: %v", l)
	}
	// The array's strings are 5 below it: at depth maxDepth-5 it is
	// within bounds, one deeper not. Proved at the deepest it can be, it
	// must not be taken one deeper.
	deepest := maxDepth - 5
	for range 2 {
		if !checkWith(nest(arr, deepest), k) {
			t.Fatal("the array does not check at the deepest it can be")
		}
	}
	if l := *k.list.Load(); len(l) != 1 || l[0].depth != deepest {
		t.Fatalf("the array is remembered %d times, at depth %d; want once, at %d", len(l), l[0].depth, deepest)
	}
	for _, tc := range []struct {
		name string
		doc  []byte
		want bool
	}{
		{"the same again", first, true},
		{"shallower", arr, true},
		{"as deep as it was proved", nest(arr, deepest), true},
		{"deeper than allowed", nest(arr, deepest+1), false},
		{"its bytes with a different end", []byte(`{"tools":` + string(bigArray(elem, "END")) + `}`), true},
		{"its bytes, not canonical after", []byte(`{"tools":` + string(arr) + `,"a":1}`), false},
		{"its bytes cut short", arr[:len(arr)-1], false},
		{"a prefix of a longer array", []byte(string(arr[:len(arr)-1]) + `,1]`), true},
		{"its bytes in a longer array", []byte(string(arr) + `,1]`), false},
		{"between other members", []byte(`{"a":[1,2],"b":` + string(arr) + `,"c":"x"}`), true},
	} {
		if want := isCanonical(tc.doc); want != tc.want {
			t.Fatalf("%s: isCanonical says %v", tc.name, want)
		}
		if got := checkWith(tc.doc, k); got != tc.want {
			t.Errorf("%s: checker with known values says %v, want %v", tc.name, got, tc.want)
		}
		want := tc.want
		if want {
			for i := range tc.doc {
				if c := tc.doc[i]; c != '[' && c != '{' {
					continue
				}
				if got, want := skipKnown(tc.doc, i, k), skipCanonical(tc.doc, i); got != want {
					t.Errorf("%s: at byte %d skipKnown ends at %d, skipCanonical at %d", tc.name, i, got, want)
				}
			}
		}
	}
	// What the scanner reads it remembers as read, which the checker does
	// not take as proved.
	r := &knownValues{}
	other := bigArray(elem, "read")
	doc := []byte(`{"tools":` + string(other) + `}`)
	for range 2 {
		if end := skipKnown(doc, 0, r); end != len(doc) {
			t.Fatalf("skipKnown ends at %d of %d", end, len(doc))
		}
	}
	if l := r.list.Load(); l == nil || (*l)[0].depth != -1 {
		t.Fatal("the scanner did not remember what it read, as read")
	}
	if n := r.match(doc, len(`{"tools":`), 0, true); n != 0 {
		t.Fatal("the checker took a value read as one proved canonical")
	}
	if n := r.match(doc, len(`{"tools":`), 0, false); n != len(other) {
		t.Fatalf("the scanner did not find what it read: %d", n)
	}
}

// The values remembered are bounded, most recently used first.
func TestKnownValuesBounded(t *testing.T) {
	k := &knownValues{}
	var arrs [][]byte
	for i := range knownMaxLen + 4 {
		a := bigArray([]byte(`"x"`), fmt.Sprint(i))
		arrs = append(arrs, a)
		k.add(a, 1)
		k.add(a, 1)
	}
	l := *k.list.Load()
	if len(l) != knownMaxLen {
		t.Fatalf("%d values remembered, want %d", len(l), knownMaxLen)
	}
	if !bytes.Equal(l[0].b, arrs[len(arrs)-1]) {
		t.Fatal("the last value added is not first")
	}
	old := arrs[len(arrs)-knownMaxLen]
	if k.match(old, 0, 0, true) != len(old) {
		t.Fatal("a remembered value is not found")
	}
	if l := *k.list.Load(); !bytes.Equal(l[0].b, old) || len(l) != knownMaxLen {
		t.Fatal("the value found is not first now, or a value was lost or doubled")
	}
	if k.match(arrs[0], 0, 0, true) != 0 {
		t.Fatal("a value pushed out is still found")
	}
}

// FuzzKnownValues: with a value known, the checker's verdict and the
// scanner's ends are those without, for any document built around it.
func FuzzKnownValues(f *testing.F) {
	f.Add([]byte(`{"a":1}`), []byte(`"x"`), uint8(1), false)
	f.Add([]byte(`"\u001f"`), []byte(`{"b":[1,2]}`), uint8(30), true)
	f.Add([]byte(`[true,null]`), []byte(`{"b":1,"a":2}`), uint8(0), false)
	f.Fuzz(func(t *testing.T, elem, other []byte, depth uint8, change bool) {
		if !isCanonical(elem) || len(elem) > 512 {
			elem = []byte(`"x"`)
		}
		arr := bigArray(elem, "t")
		k := &knownValues{}
		for range 2 {
			if !checkWith(nest(arr, 1), k) {
				t.Fatalf("%q does not check", arr)
			}
		}
		in := arr
		if change {
			in = append(bytes.Clone(arr[:len(arr)-2]), other...)
		}
		doc := nest([]byte(`{"a":`+string(other)+`,"b":`+string(in)+`}`), int(depth)%(maxDepth+4))
		want := isCanonical(doc)
		if got := checkWith(doc, k); got != want {
			t.Fatalf("checker with known values says %v, without %v: %q", got, want, doc)
		}
		if want {
			r := &knownValues{}
			skipKnown(doc, 0, r) // what it reads twice, then reads again
			skipKnown(doc, 0, r)
			for i := range doc {
				if c := doc[i]; c != '[' && c != '{' {
					continue
				}
				if got, want := skipKnown(doc, i, r), skipCanonical(doc, i); got != want {
					t.Fatalf("at byte %d skipKnown ends at %d, skipCanonical at %d: %q", i, got, want, doc)
				}
			}
		}
	})
}
