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
	r := &redactor{secrets: secrets, repl: strings.NewReplacer(pairs...)}
	redactValue(reflect.ValueOf(v), r, map[uintptr]bool{})
}

// redactor masks secrets in strings. Most strings of a report hold none:
// looking for each secret is much faster than the replacer's scan.
type redactor struct {
	secrets []string
	repl    *strings.Replacer
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
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				redactValue(v.Field(i), repl, seen)
			}
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
		for i := range v.Len() {
			redactValue(v.Index(i), repl, seen)
		}
	case reflect.Map:
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
