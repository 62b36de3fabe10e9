package traces

import (
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// A run's document is Marshal(run): encoding/json, then canonicalisation.
// That encodes every payload twice and parses it twice; storing a run was
// most of what recording and replaying cost beyond the server.
// encodeCanonical writes the same bytes directly. Per type, once, it builds
// an encoder (cached by reflect.Type): a struct's fields, named by their
// json tags, in canonical (UTF-16) key order with their omitempty and
// omitzero tests; strings coerced to UTF-8 as encoding/json does and
// canonically escaped; integers exact. A payload (json.RawMessage) is
// canonicalised once, and only when it is not canonical already. Whatever
// it does not handle itself (floats aside: maps, interfaces, []byte, types
// with a MarshalJSON method, embedded structs, the "string" option) it
// hands to encoding/json and canonicalises the result, so a field added to
// a trace type needs nothing here. TestEncodeRunEqualsMarshal and
// FuzzCanonicalEncoder hold it to Marshal.

func encodeRun(r *Run) ([]byte, error) {
	b, _, err := encodeCanonicalAs(r, nil, nil)
	return b, err
}

// encodeCanonical returns Marshal(v), written directly, but for the
// fields kept beside a run (side.go), which it leaves out.
func encodeCanonical(v any) ([]byte, error) {
	b, _, err := encodeCanonicalAs(v, nil, nil)
	return b, err
}

// encodeCanonicalAs is encodeCanonical appended to buf (nil: a new
// buffer), and reports whether the bytes decode to v as it is: false when a
// payload was not canonical (it was rewritten), a string was coerced to
// valid UTF-8, or encoding/json wrote a value. A buf with room for about
// the result is not copied on every doubling. known (nil: none) are the
// values its payloads may hold that were proved canonical before.
func encodeCanonicalAs(v any, buf []byte, known *knownValues) ([]byte, bool, error) {
	if buf == nil {
		buf = make([]byte, 0, 4096)
	}
	e := &encoder{out: buf, known: known}
	e.encode(v)
	return e.out, !e.changed, e.err
}

func (e *encoder) encode(v any) {
	if rv := reflect.ValueOf(v); rv.IsValid() {
		encoderOf(rv.Type())(e, rv)
	} else {
		e.out = append(e.out, "null"...)
	}
}

// encoder appends canonical JSON to out. depth is the nesting of the value
// being written, as Canonical counts it (it refuses more than maxDepth).
type encoder struct {
	out     []byte
	err     error
	depth   int
	changed bool // what was written would not decode to the value as it is
	// withSide writes the fields tagged `trace:"side"` too, as
	// encoding/json does (Marshal); a run's document leaves them out.
	withSide bool
	known    *knownValues // nil: none
}

type encoderFunc func(e *encoder, v reflect.Value)

var encoders sync.Map // reflect.Type -> encoderFunc

func encoderOf(t reflect.Type) encoderFunc {
	if f, ok := encoders.Load(t); ok {
		return f.(encoderFunc)
	}
	// A recursive type finds this indirection while its encoder is built.
	build := sync.OnceValue(func() encoderFunc { return newEncoder(t) })
	if f, loaded := encoders.LoadOrStore(t, encoderFunc(func(e *encoder, v reflect.Value) { build()(e, v) })); loaded {
		return f.(encoderFunc)
	}
	f := build()
	encoders.Store(t, f)
	return f
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

var numberType = reflect.TypeFor[json.Number]()

func newEncoder(t reflect.Type) encoderFunc {
	implements := func(i reflect.Type) bool { return t.Implements(i) || reflect.PointerTo(t).Implements(i) }
	switch {
	case t == numberType: // a string that encoding/json writes as the number it holds
		return encodeWithJSON
	case t == rawMessageType:
		return func(e *encoder, v reflect.Value) {
			if v.IsNil() {
				e.out = append(e.out, "null"...)
			} else if err := e.canonical(v.Bytes()); err != nil {
				e.fail(&json.MarshalerError{Type: t, Err: err})
			}
		}
	case t.Kind() == reflect.Pointer: // as encoding/json's marshalerEncoder would for a pointer too
		elem := encoderOf(t.Elem())
		return func(e *encoder, v reflect.Value) {
			if v.IsNil() {
				e.out = append(e.out, "null"...)
			} else {
				elem(e, v.Elem())
			}
		}
	case t.Kind() != reflect.Interface && t.Implements(textMarshalerType) && !implements(marshalerType):
		return func(e *encoder, v reflect.Value) {
			if v.CanAddr() {
				v = v.Addr() // no allocation to make an interface of it
			}
			m, _ := reflect.TypeAssert[encoding.TextMarshaler](v)
			b, err := m.MarshalText()
			if err != nil {
				e.fail(&json.MarshalerError{Type: t, Err: err})
			}
			e.str(string(b))
		}
	case implements(marshalerType) || implements(textMarshalerType):
		return encodeWithJSON
	}
	switch t.Kind() {
	case reflect.String:
		return func(e *encoder, v reflect.Value) { e.str(v.String()) }
	case reflect.Bool:
		return func(e *encoder, v reflect.Value) { e.out = strconv.AppendBool(e.out, v.Bool()) }
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(e *encoder, v reflect.Value) { e.out = strconv.AppendInt(e.out, v.Int(), 10) }
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return func(e *encoder, v reflect.Value) {
			if n := v.Uint(); n <= math.MaxInt64 {
				e.out = strconv.AppendUint(e.out, n, 10)
			} else { // not an int64: a double, as Canonical reads it
				e.out = appendES6Number(e.out, float64(n))
			}
		}
	case reflect.Float32, reflect.Float64:
		return func(e *encoder, v reflect.Value) {
			f := v.Float()
			if math.IsInf(f, 0) || math.IsNaN(f) {
				e.fail(&json.UnsupportedValueError{Value: v, Str: strconv.FormatFloat(f, 'g', -1, t.Bits())})
				return
			}
			if t.Bits() == 32 { // the shortest decimal of the float32, read back as a double
				f, _ = strconv.ParseFloat(strconv.FormatFloat(f, 'g', -1, 32), 64)
			}
			e.out = appendES6Number(e.out, f)
		}
	case reflect.Struct:
		return structEncoder(t)
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			return encodeWithJSON // base64
		}
		elem := encoderOf(t.Elem())
		return func(e *encoder, v reflect.Value) {
			if v.Kind() == reflect.Slice && v.IsNil() {
				e.out = append(e.out, "null"...)
				return
			}
			e.out = append(e.out, '[')
			e.depth++
			for i := range v.Len() {
				if i > 0 {
					e.out = append(e.out, ',')
				} else if e.deep() {
					break
				}
				elem(e, v.Index(i))
			}
			e.depth--
			e.out = append(e.out, ']')
		}
	}
	return encodeWithJSON // maps, interfaces and what encoding/json refuses
}

// A field is one member of a struct's encoding.
type field struct {
	name  string
	key   []byte // `"name":`
	index int
	omit  func(reflect.Value) bool // nil: never omitted
	enc   encoderFunc
	side  bool // `trace:"side"`: written only with encoder.withSide
}

// structEncoder writes a struct's fields as encoding/json names them, in
// canonical order (the fields kept beside a run, `trace:"side"`, only for
// Marshal). A struct that needs more of encoding/json's rules than
// names, "-", omitempty and omitzero goes to encoding/json.
func structEncoder(t reflect.Type) encoderFunc {
	var fields []field
	var names []string
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if sf.Anonymous {
			return encodeWithJSON // embedding: encoding/json's promotion rules
		}
		if !sf.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		opt := func(o string) bool { return slices.Contains(strings.Split(opts, ","), o) }
		if name == "" {
			name = sf.Name
		} else if !isSimpleTag(name) {
			return encodeWithJSON
		}
		if opt("string") || slices.Contains(names, name) {
			return encodeWithJSON
		}
		names = append(names, name)
		f := field{name: name, key: append(appendString(nil, name), ':'), index: i, enc: encoderOf(sf.Type), side: isSide(sf)}
		isEmpty, isZero := emptyFunc(sf.Type), zeroFunc(sf.Type)
		switch empty, zero := opt("omitempty"), opt("omitzero"); {
		case empty && zero:
			f.omit = func(v reflect.Value) bool { return isEmpty(v) || isZero(v) }
		case empty:
			f.omit = isEmpty
		case zero:
			f.omit = isZero
		}
		fields = append(fields, f)
	}
	slices.SortFunc(fields, func(a, b field) int { return compareUTF16(a.name, b.name) })
	return func(e *encoder, v reflect.Value) {
		e.out = append(e.out, '{')
		e.depth++
		first := true
		for i := range fields {
			f := &fields[i]
			if f.side && !e.withSide {
				continue // kept beside the run (side.go)
			}
			fv := v.Field(f.index)
			if f.omit != nil && f.omit(fv) {
				continue
			}
			if !first {
				e.out = append(e.out, ',')
			} else if e.deep() {
				break
			}
			first = false
			e.out = append(e.out, f.key...)
			f.enc(e, fv)
		}
		e.depth--
		e.out = append(e.out, '}')
	}
}

// isSimpleTag reports whether name is a json tag name encoding/json uses
// as is; it also accepts others, which this encoder leaves to it.
func isSimpleTag(name string) bool {
	for _, c := range name {
		if !(c == '_' || c == '-' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// emptyFunc is encoding/json's omitempty test for type t.
func emptyFunc(t reflect.Type) func(reflect.Value) bool {
	switch t.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return func(v reflect.Value) bool { return v.Len() == 0 }
	case reflect.Interface, reflect.Pointer:
		return reflect.Value.IsNil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(v reflect.Value) bool { return v.Int() == 0 }
	case reflect.Bool, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return reflect.Value.IsZero
	}
	return func(reflect.Value) bool { return false }
}

type isZeroer interface{ IsZero() bool }

var isZeroerType = reflect.TypeFor[isZeroer]()

// zeroFunc is encoding/json's omitzero test for type t: its IsZero method
// if it has one.
func zeroFunc(t reflect.Type) func(reflect.Value) bool {
	switch {
	case (t.Kind() == reflect.Interface || t.Kind() == reflect.Pointer) && t.Implements(isZeroerType):
		return func(v reflect.Value) bool {
			return v.IsNil() || (v.Kind() == reflect.Interface && v.Elem().Kind() == reflect.Pointer && v.Elem().IsNil()) ||
				v.Interface().(isZeroer).IsZero()
		}
	case t.Implements(isZeroerType):
		return func(v reflect.Value) bool { return v.Interface().(isZeroer).IsZero() }
	case reflect.PointerTo(t).Implements(isZeroerType):
		return func(v reflect.Value) bool {
			if !v.CanAddr() {
				c := reflect.New(t).Elem()
				c.Set(v)
				v = c
			}
			return v.Addr().Interface().(isZeroer).IsZero()
		}
	}
	return reflect.Value.IsZero
}

// encodeWithJSON writes what encoding/json writes for v, canonicalised.
func encodeWithJSON(e *encoder, v reflect.Value) {
	if v.Kind() != reflect.Pointer && v.CanAddr() {
		v = v.Addr() // so that methods on the pointer apply, as they would in place
	}
	b, err := json.Marshal(v.Interface())
	if err == nil {
		err = e.canonical(b)
	}
	e.changed = true
	e.fail(err)
}

// canonical writes the JSON text b in canonical form, at e.depth.
func (e *encoder) canonical(b []byte) error {
	if v := (canonicalChecker{in: b, known: e.known}); v.value(e.depth) && v.pos == len(b) { // most payloads are canonical
		e.out = append(e.out, b...)
		return nil
	}
	e.changed = true
	c := canonicalizer{in: b, out: e.out}
	c.skipSpace()
	err := c.value(e.depth)
	c.skipSpace()
	if err == nil && c.pos != len(c.in) {
		err = c.errorf("unexpected data after the JSON value")
	}
	if err == nil {
		e.out = c.out
	}
	return err
}

// deep reports (and records as the error) that a member or element at
// e.depth would be nested deeper than Canonical allows.
func (e *encoder) deep() bool {
	if e.depth <= maxDepth {
		return false
	}
	e.fail(fmt.Errorf("%w: nesting deeper than %d", ErrSyntax, maxDepth))
	return true
}

// str writes s as encoding/json would coerce it (invalid UTF-8 becomes
// U+FFFD, byte by byte), in canonical form.
func (e *encoder) str(s string) {
	if !utf8.ValidString(s) {
		e.changed = true
		b := make([]byte, 0, len(s)+8)
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			b = utf8.AppendRune(b, r) // RuneError for a bad byte
			i += n
		}
		s = string(b)
	}
	e.out = appendString(e.out, s)
}

func (e *encoder) fail(err error) {
	if e.err == nil && err != nil {
		e.err = err
	}
}
