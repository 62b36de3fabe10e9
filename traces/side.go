package traces

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// A field tagged `trace:"side"` (on Event or on one of its payloads) is
// kept beside the run, like its start time: it is read back with the run,
// but it is not part of the run's document, and so not of its ID. These
// are what a run measured rather than what it did: when things happened
// (AtUS), how long they took (LatencyUS), what a server wrote on stderr.
// Two recordings of the same behaviour then have the same ID, however fast
// the machine was.
//
// The side of a run is stored as the canonical JSON of an array with one
// object per event ({} for an event with no side value), each member named
// by the field's JSON path within the event ("at_us", "turn.latency_us"),
// members in canonical order; no bytes at all when no event has a value.
// Runs stored before 2026-12-01 have their timings inside their documents
// (and so in their IDs); those stored before 2026-11-29 also their stderr.
// Their side, if any, is the older form: a JSON object of the servers'
// stderr by event index.

// sideField is one side field of Event: a field of Event itself
// (payload < 0) or of the payload struct in Event field payload.
type sideField struct {
	path    string
	payload int
	index   int
	typ     reflect.Type
}

var sideFields = sync.OnceValue(func() []sideField {
	var out []sideField
	et := reflect.TypeFor[Event]()
	jsonName := func(sf reflect.StructField) string {
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "" {
			name = sf.Name
		}
		return name
	}
	for i := range et.NumField() {
		sf := et.Field(i)
		if isSide(sf) {
			out = append(out, sideField{path: jsonName(sf), payload: -1, index: i, typ: sf.Type})
			continue
		}
		if sf.Type.Kind() != reflect.Pointer || sf.Type.Elem().Kind() != reflect.Struct {
			continue
		}
		pt := sf.Type.Elem()
		for j := range pt.NumField() {
			if pf := pt.Field(j); isSide(pf) {
				out = append(out, sideField{path: jsonName(sf) + "." + jsonName(pf), payload: i, index: j, typ: pf.Type})
			}
		}
	}
	slices.SortFunc(out, func(a, b sideField) int { return compareUTF16(a.path, b.path) })
	return out
})

func isSide(sf reflect.StructField) bool { return sf.Tag.Get("trace") == "side" }

// value returns the field in ev (addressable when ev is), and whether the
// event has it (its payload is set).
func (f *sideField) value(ev reflect.Value) (reflect.Value, bool) {
	if f.payload < 0 {
		return ev.Field(f.index), true
	}
	p := ev.Field(f.payload)
	if p.IsNil() {
		return reflect.Value{}, false
	}
	return p.Elem().Field(f.index), true
}

// side returns the canonical bytes of r's side, nil when it has none, and
// whether they decode to r's side values as they are (see
// encodeCanonicalAs).
func (r *Run) side() ([]byte, bool, error) {
	fields := sideFields()
	e := &encoder{out: make([]byte, 0, 16*len(r.Events))}
	e.out = append(e.out, '[')
	some := false
	for i := range r.Events {
		if i > 0 {
			e.out = append(e.out, ',')
		}
		e.out = append(e.out, '{')
		ev := reflect.ValueOf(&r.Events[i]).Elem()
		first := true
		for k := range fields {
			f := &fields[k]
			v, ok := f.value(ev)
			if !ok || v.IsZero() {
				continue
			}
			if !first {
				e.out = append(e.out, ',')
			}
			first, some = false, true
			e.out = appendString(e.out, f.path)
			e.out = append(e.out, ':')
			e.depth = 2
			encoderOf(f.typ)(e, v)
		}
		e.out = append(e.out, '}')
	}
	if !some {
		return nil, true, nil
	}
	e.out = append(e.out, ']')
	if e.err != nil {
		return nil, false, fmt.Errorf("encoding the run's side: %w", e.err)
	}
	return e.out, !e.changed, nil
}

// setSide puts a side read beside the run back into its events. It
// refuses a side that does not fit the run (another length, an unknown
// member, a member of a payload the event does not have).
func (r *Run) setSide(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if b[0] == '{' { // the older form: stderr by event index
		var m map[string]string
		if err := json.Unmarshal(b, &m); err != nil {
			return fmt.Errorf("stderr: %v", err)
		}
		for k, v := range m {
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(r.Events) || r.Events[i].Initialize == nil {
				continue
			}
			r.Events[i].Initialize.Stderr = v
		}
		return nil
	}
	var evs []map[string]json.RawMessage
	if err := json.Unmarshal(b, &evs); err != nil {
		return err
	}
	if len(evs) != len(r.Events) {
		return fmt.Errorf("%d events beside a run of %d", len(evs), len(r.Events))
	}
	byPath := sideByPath()
	for i, m := range evs {
		ev := reflect.ValueOf(&r.Events[i]).Elem()
		for path, raw := range m {
			f, ok := byPath[path]
			if !ok {
				return fmt.Errorf("event %d: unknown member %q", i, path)
			}
			v, ok := f.value(ev)
			if !ok {
				return fmt.Errorf("event %d (%s): has no %q", i, r.Events[i].Kind, path)
			}
			if err := json.Unmarshal(raw, v.Addr().Interface()); err != nil {
				return fmt.Errorf("event %d: %s: %v", i, path, err)
			}
		}
	}
	return nil
}

var sideByPath = sync.OnceValue(func() map[string]*sideField {
	fields := sideFields()
	m := make(map[string]*sideField, len(fields))
	for i := range fields {
		m[fields[i].path] = &fields[i]
	}
	return m
})

// legacyStderrSide is the side of a run stored before store format 2:
// its servers' stderr by event index, in canonical JSON; nil when none.
func legacyStderrSide(m map[string]string) []byte {
	if len(m) == 0 {
		return nil
	}
	b, _ := Marshal(m)
	return b
}
