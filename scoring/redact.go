package scoring

import (
	"reflect"
	"slices"
	"strings"
)

// Redact masks every secret wherever it appears in v (a pointer to a
// report, a comparison or a run diff): in the safety table, the replay
// misses (which quote tool results), the errors, the labels. A report must
// not leak what it flags, in any section or format. Each secret is shown
// by its first four characters.
func Redact(v any, secrets []string) {
	secrets = slices.Compact(slices.Sorted(slices.Values(secrets)))
	// Longer secrets first, so that one that contains another is masked
	// whole.
	slices.SortStableFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	var pairs []string
	for _, s := range secrets {
		if s != "" {
			pairs = append(pairs, s, redact(s))
		}
	}
	if len(pairs) == 0 {
		return
	}
	r := &redactor{secrets: secrets, repl: strings.NewReplacer(pairs...), holds: map[reflect.Type]bool{}, fields: map[reflect.Type][]int{}}
	redactValue(reflect.ValueOf(v), r, map[uintptr]bool{})
}

// redactor masks secrets in strings. Most strings of a report hold none:
// looking for each secret is much faster than the replacer's scan. Most
// of a report's values hold no string at all (figures): they are not
// walked.
type redactor struct {
	secrets []string
	repl    *strings.Replacer
	holds   map[reflect.Type]bool  // whether a value of the type may hold a string
	fields  map[reflect.Type][]int // the exported fields of a struct type that may
}

// holdsString says whether a value of type t may hold a string (or raw
// JSON) that redactValue would reach. A type met again while it is being
// looked at (one that refers to itself) is taken to hold one, so that the
// answer errs only towards walking a value.
func (r *redactor) holdsString(t reflect.Type) bool {
	if h, ok := r.holds[t]; ok {
		return h
	}
	r.holds[t] = true
	h := false
	switch t.Kind() {
	case reflect.String:
		h = true
	case reflect.Slice:
		h = t.Elem().Kind() == reflect.Uint8 || r.holdsString(t.Elem()) // raw JSON, or its elements
	case reflect.Pointer, reflect.Array, reflect.Map:
		h = r.holdsString(t.Elem())
	case reflect.Struct:
		var fields []int
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && r.holdsString(f.Type) {
				fields = append(fields, i)
			}
		}
		r.fields[t], h = fields, len(fields) > 0
	}
	r.holds[t] = h
	return h
}

// replace returns s with every secret masked, and whether it changed.
func (r *redactor) replace(s string) (string, bool) {
	for _, x := range r.secrets {
		if x != "" && strings.Contains(s, x) {
			return r.repl.Replace(s), true
		}
	}
	return s, false
}

// redactValue replaces secrets in every settable string reachable from v
// (the report types hold no interfaces).
func redactValue(v reflect.Value, repl *redactor, seen map[uintptr]bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return
		}
		seen[v.Pointer()] = true
		redactValue(v.Elem(), repl, seen)
	case reflect.Struct:
		if !repl.holdsString(v.Type()) {
			return
		}
		for _, i := range repl.fields[v.Type()] {
			redactValue(v.Field(i), repl, seen)
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 { // json.RawMessage
			if v.CanSet() && v.Len() > 0 {
				if s, changed := repl.replace(string(v.Bytes())); changed {
					v.SetBytes([]byte(s))
				}
			}
			return
		}
		if !repl.holdsString(v.Type().Elem()) {
			return
		}
		for i := range v.Len() {
			redactValue(v.Index(i), repl, seen)
		}
	case reflect.Map:
		if !repl.holdsString(v.Type().Elem()) {
			return
		}
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			redactValue(e, repl, seen)
			v.SetMapIndex(k, e)
		}
	case reflect.String:
		if v.CanSet() {
			if s, changed := repl.replace(v.String()); changed {
				v.SetString(s)
			}
		}
	}
}
