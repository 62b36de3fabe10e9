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
// it does not handle itself goes to encoding/json. known (nil: none) are
// values read before: a payload holding one is sliced without scanning it.
func decodeCanonical(data []byte, v any, known *knownValues) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("decodeCanonical: need a non-nil pointer, got %T", v)
	}
	return decodeValue(data, rv.Elem(), known)
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

func decodeValue(data []byte, v reflect.Value, known *knownValues) error {
	if len(data) == 0 {
		return fmt.Errorf("%w: empty value", ErrCorrupt)
	}
	end, err := decodeAt(data, 0, v, known)
	if err == nil && end != len(data) {
		err = fmt.Errorf("%w: data after the value at byte %d", ErrCorrupt, end)
	}
	return err
}

// decodeAt decodes the canonical value that starts at data[i] into v and
// returns where it ends. It walks the document once: each container is
// decoded as it is read, and only what is handed over whole (a payload,
// a value left to encoding/json, a member this version does not know) is
// skipped to find its end, so a large payload is scanned once, not once
// per level of nesting above it.
func decodeAt(data []byte, i int, v reflect.Value, known *knownValues) (int, error) {
	if i >= len(data) {
		return i, fmt.Errorf("%w: truncated document", ErrCorrupt)
	}
	whole := func() (int, error) { // the value as one span, to encoding/json
		end := skipCanonical(data, i)
		return end, json.Unmarshal(data[i:end], v.Addr().Interface())
	}
	if v.Type() == rawMessageType {
		end := skipKnown(data, i, known)
		v.SetBytes(data[i:end:end])
		return end, nil
	}
	switch v.Kind() {
	case reflect.Pointer:
		if bytes.HasPrefix(data[i:], []byte("null")) {
			v.SetZero()
			return i + 4, nil
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return decodeAt(data, i, v.Elem(), known)
	case reflect.Struct:
		fields := fieldsOf(v.Type())
		if data[i] != '{' || fields == nil {
			return whole()
		}
		j := i + 1
		for j < len(data) && data[j] != '}' {
			kend := skipString(data, j)
			if kend >= len(data) || data[kend] != ':' {
				return j, fmt.Errorf("%w: bad member at byte %d", ErrCorrupt, j)
			}
			name, ok := plainString(data[j:kend])
			if !ok {
				if err := json.Unmarshal(data[j:kend], &name); err != nil {
					return j, err
				}
			}
			j = kend + 1
			f, isField := fields[name]
			switch {
			case !isField: // a field this version does not know
				j = skipCanonical(data, j)
			case f.std:
				end := skipCanonical(data, j)
				if err := json.Unmarshal(data[j:end], v.Field(f.index).Addr().Interface()); err != nil {
					return j, err
				}
				j = end
			default:
				var err error
				if j, err = decodeAt(data, j, v.Field(f.index), known); err != nil {
					return j, err
				}
			}
			if j < len(data) && data[j] == ',' {
				j++
			}
		}
		if j >= len(data) {
			return j, fmt.Errorf("%w: truncated object", ErrCorrupt)
		}
		return j + 1, nil
	case reflect.Slice:
		if data[i] != '[' || v.Type().Elem().Kind() == reflect.Uint8 || usesJSON(v.Type().Elem()) {
			return whole()
		}
		s := reflect.MakeSlice(v.Type(), 0, 4)
		j := i + 1
		for j < len(data) && data[j] != ']' {
			s = reflect.Append(s, reflect.Zero(v.Type().Elem()))
			var err error
			if j, err = decodeAt(data, j, s.Index(s.Len()-1), known); err != nil {
				return j, err
			}
			if j < len(data) && data[j] == ',' {
				j++
			}
		}
		if j >= len(data) {
			return j, fmt.Errorf("%w: truncated array", ErrCorrupt)
		}
		v.Set(s)
		return j + 1, nil
	case reflect.String:
		if data[i] == '"' {
			end := skipString(data, i)
			if s, ok := plainString(data[i:end]); ok {
				v.SetString(s)
				return end, nil
			}
		}
	case reflect.Int, reflect.Int64, reflect.Int32:
		end := skipCanonical(data, i)
		if n, err := strconv.ParseInt(string(data[i:end]), 10, 64); err == nil {
			v.SetInt(n)
			return end, nil
		}
	case reflect.Bool:
		switch {
		case bytes.HasPrefix(data[i:], []byte("true")):
			v.SetBool(true)
			return i + 4, nil
		case bytes.HasPrefix(data[i:], []byte("false")):
			v.SetBool(false)
			return i + 5, nil
		}
	}
	return whole()
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

// CanonicalLastMember is CanonicalMember for a member that is the last of
// doc when present (its key sorts after any other doc may hold, as the
// tools of a model request do), found from the end of doc rather than by
// skipping every member before it. ok is false when doc's last member has
// another key, and then the caller asks CanonicalMember.
//
// In canonical JSON a quote inside a string is escaped, so the bytes
// ,"key": are always a comma between members and the start of a member
// named key, at some depth; the last of them starts doc's last member
// exactly when the value after them ends where doc does (a nested
// object's member is followed by its object's closing brace).
func CanonicalLastMember(doc []byte, key string) (val []byte, ok bool) {
	if len(doc) < 2 || doc[0] != '{' || doc[len(doc)-1] != '}' {
		return nil, false
	}
	sep := append(appendString([]byte{','}, key), ':')
	start := bytes.LastIndex(doc, sep) + len(sep)
	if start < len(sep) {
		if !bytes.HasPrefix(doc[1:], sep[1:]) {
			return nil, false
		}
		start = len(sep) // the only member
	}
	if end := skipCanonical(doc, start); end != len(doc)-1 || end <= start {
		return nil, false
	}
	return doc[start : len(doc)-1], true
}

// CanonicalElements returns the elements of arr, a canonical JSON array,
// without decoding it: it skips from element to element, and the elements
// are slices of arr. ok is false when arr does not have the shape of a
// canonical array; a caller that cannot be sure arr is canonical decodes
// it then.
func CanonicalElements(arr []byte) (elems [][]byte, ok bool) {
	if len(arr) < 2 || arr[0] != '[' || arr[len(arr)-1] != ']' {
		return nil, false
	}
	for i := 1; i < len(arr)-1; {
		end := skipCanonical(arr, i)
		if end > len(arr)-1 || end <= i || arr[end] != ',' && end != len(arr)-1 {
			return nil, false
		}
		elems = append(elems, arr[i:end])
		i = end + 1
		if i == len(arr)-1 {
			return nil, false // a trailing comma
		}
	}
	return elems, true
}
