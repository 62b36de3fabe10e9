package traces

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// decodeCanonical unmarshals a canonical JSON document (one the store has
// just verified) into v. It walks the document with the canonical scanner
// and hands json.RawMessage fields their bytes directly, so the large
// payloads of a run (requests, results, bodies) are sliced, not parsed
// twice as encoding/json would (once to validate, once to decode). Anything
// it does not handle itself goes to encoding/json.
func decodeCanonical(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("decodeCanonical: need a non-nil pointer, got %T", v)
	}
	return decodeValue(data, rv.Elem())
}

var (
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// usesJSON reports whether values of t are left to encoding/json: t has
// an Unmarshal method (json.RawMessage aside).
func usesJSON(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t != rawMessageType && (t.Implements(unmarshalerType) || t.Implements(textUnmarshalerType) ||
		p.Implements(unmarshalerType) || p.Implements(textUnmarshalerType))
}

type fieldInfo struct {
	index int
	std   bool // decoded by encoding/json (usesJSON)
}

var fieldCache sync.Map // reflect.Type -> map[string]fieldInfo

// fieldsOf returns the fields of struct type t by JSON name, or nil when
// decoding t needs more of encoding/json's rules than names and "-" (an
// Unmarshal method, embedding, options), as structEncoder decides.
func fieldsOf(t reflect.Type) map[string]fieldInfo {
	if f, ok := fieldCache.Load(t); ok {
		return f.(map[string]fieldInfo)
	}
	fields := map[string]fieldInfo{}
	if usesJSON(t) {
		fields = nil
	}
	for i := 0; fields != nil && i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if f.Anonymous {
			fields = nil
			break
		}
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		if _, dup := fields[name]; dup || !isSimpleTag(name) || slices.Contains(strings.Split(opts, ","), "string") {
			fields = nil
			break
		}
		fields[name] = fieldInfo{index: i, std: usesJSON(f.Type)}
	}
	fieldCache.Store(t, fields)
	return fields
}

func decodeValue(data []byte, v reflect.Value) error {
	if len(data) == 0 {
		return fmt.Errorf("%w: empty value", ErrCorrupt)
	}
	if v.Type() == rawMessageType {
		v.SetBytes(data[:len(data):len(data)])
		return nil
	}
	switch v.Kind() {
	case reflect.Pointer:
		if string(data) == "null" {
			v.SetZero()
			return nil
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return decodeValue(data, v.Elem())
	case reflect.Struct:
		fields := fieldsOf(v.Type())
		if data[0] != '{' || fields == nil {
			break
		}
		var err error
		forEachMember(data, func(key, val []byte) bool {
			name, ok := plainString(key)
			if !ok {
				if err = json.Unmarshal(key, &name); err != nil {
					return false
				}
			}
			f, ok := fields[name]
			if !ok {
				return true // a field this version does not know
			}
			if fv := v.Field(f.index); f.std {
				err = json.Unmarshal(val, fv.Addr().Interface())
			} else {
				err = decodeValue(val, fv)
			}
			return err == nil
		})
		return err
	case reflect.Slice:
		if data[0] != '[' || v.Type().Elem().Kind() == reflect.Uint8 || usesJSON(v.Type().Elem()) {
			break
		}
		// The elements' spans in one pass (a run's events hold most of its
		// bytes: skipping them twice, to count and then to decode, cost as
		// much as the rest of the decoding).
		var spans [][2]int
		forEachChild(data, func(start, end int) bool { spans = append(spans, [2]int{start, end}); return true })
		s := reflect.MakeSlice(v.Type(), len(spans), len(spans))
		var err error
		for i, sp := range spans {
			if err = decodeValue(data[sp[0]:sp[1]], s.Index(i)); err != nil {
				break
			}
		}
		if err != nil {
			return err
		}
		v.Set(s)
		return nil
	case reflect.String:
		if s, ok := plainString(data); ok {
			v.SetString(s)
			return nil
		}
	case reflect.Int, reflect.Int64, reflect.Int32:
		if n, err := strconv.ParseInt(string(data), 10, 64); err == nil {
			v.SetInt(n)
			return nil
		}
	case reflect.Bool:
		switch string(data) {
		case "true":
			v.SetBool(true)
			return nil
		case "false":
			v.SetBool(false)
			return nil
		}
	}
	return json.Unmarshal(data, v.Addr().Interface())
}

// plainString returns the value of a canonical JSON string without escapes.
func plainString(data []byte) (string, bool) {
	if len(data) < 2 || data[0] != '"' || data[len(data)-1] != '"' {
		return "", false
	}
	body := data[1 : len(data)-1]
	for _, c := range body {
		if c == '\\' {
			return "", false
		}
	}
	return string(body), true
}

// forEachMember calls fn with the key and value spans of each member of the
// canonical object v.
func forEachMember(v []byte, fn func(key, val []byte) bool) {
	i := 1
	for i < len(v)-1 {
		kend := skipCanonical(v, i)
		vstart := kend + 1 // ':'
		vend := skipCanonical(v, vstart)
		if !fn(v[i:kend], v[vstart:vend]) {
			return
		}
		i = vend + 1 // ','
	}
}

// CanonicalMember returns the value of the member key of doc, a canonical
// JSON object (as every payload read from a store is), without decoding
// doc: it skips from member to member. ok is false when doc has no such
// member or does not have the shape of a canonical object; a caller that
// cannot be sure doc is canonical decodes it then.
func CanonicalMember(doc []byte, key string) (val []byte, ok bool) {
	if len(doc) < 2 || doc[0] != '{' || doc[len(doc)-1] != '}' {
		return nil, false
	}
	want := appendString(nil, key)
	for i := 1; i < len(doc)-1; {
		if doc[i] != '"' {
			return nil, false
		}
		kend := skipCanonical(doc, i)
		if kend >= len(doc)-1 || doc[kend] != ':' {
			return nil, false
		}
		vstart := kend + 1
		vend := skipCanonical(doc, vstart)
		if vend > len(doc)-1 || vend <= vstart {
			return nil, false
		}
		if bytes.Equal(doc[i:kend], want) {
			return doc[vstart:vend], true
		}
		if doc[vend] != ',' && vend != len(doc)-1 {
			return nil, false
		}
		i = vend + 1
	}
	return nil, false
}
