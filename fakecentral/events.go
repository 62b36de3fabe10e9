package fakecentral

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
)

// eventScope checks the context parameters of events and event-filters and
// returns the matching events.
func (rq *request) eventScope(st *state) ([]item, *apiError) {
	ctype, cid, site := rq.query.Get("context-type"), rq.query.Get("context-identifier"), rq.query.Get("site-id")
	var from, to time.Time
	for _, p := range []struct {
		name string
		t    *time.Time
	}{{"start-at", &from}, {"end-at", &to}} {
		if v := rq.query.Get(p.name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return nil, badRequest("Invalid value for %s: %q is not an RFC 3339 timestamp", p.name, v)
			}
			*p.t = t
		}
	}
	if !from.IsZero() && !to.IsZero() && !from.Before(to) {
		return nil, badRequest("start-at must be before end-at")
	}
	from, to = st.window(from, to, 3*time.Hour)
	var match func(e *Event) bool
	switch ctype {
	case "SITE":
		match = func(e *Event) bool { return e.Site == cid }
	case "ACCESS_POINT", "SWITCH", "GATEWAY", "BRIDGE":
		match = func(e *Event) bool { return e.Serial == cid }
	case "WIRELESS_CLIENT", "WIRED_CLIENT":
		match = func(e *Event) bool { return strings.EqualFold(e.ClientMAC, cid) }
	default:
		return nil, badRequest("Invalid value for context-type: %q", ctype)
	}
	var out []item
	v := st.view("events")
	for _, e := range st.events {
		if site != "" && e.Site != site {
			continue
		}
		if !match(e) {
			continue
		}
		t := st.fx.stamp(e.Time, time.Hour)
		if t.Before(from) || t.After(to) {
			continue
		}
		out = append(out, *v.find(e.ID))
	}
	// Newest first, as Central lists events.
	sort.SliceStable(out, func(i, j int) bool { return out[i].obj["timeAt"].(string) > out[j].obj["timeAt"].(string) })
	return nonNil(out), nil
}

func events(w http.ResponseWriter, rq *request, st *state) *apiError {
	items, err := rq.eventScope(st)
	if err != nil {
		return err
	}
	if s := strings.ToLower(rq.query.Get("search")); s != "" {
		var kept []item
		for _, it := range items {
			if strings.Contains(strings.ToLower(string(it.raw)), s) {
				kept = append(kept, it)
			}
		}
		items = nonNil(kept)
	}
	return rq.serveList(w, st, listSpec{items: items, cursor: true, key: "events", defLimit: 100, maxLimit: 1000})
}

func eventFilters(w http.ResponseWriter, rq *request, st *state) *apiError {
	items, err := rq.eventScope(st)
	if err != nil {
		return err
	}
	cats, names, srcs := map[string]int{}, map[string]int{}, map[string]int{}
	nameOf := map[string]string{}
	for _, it := range items {
		c, _ := it.get("category")
		id, _ := it.get("eventId")
		n, _ := it.get("eventName")
		s, _ := it.get("sourceType")
		cats[c]++
		names[id]++
		nameOf[id] = n
		srcs[s]++
	}
	out := map[string]any{"categories": []any{}, "eventNames": []any{}, "sourceTypes": []any{}}
	for _, k := range sortedKeys(cats) {
		out["categories"] = append(out["categories"].([]any), map[string]any{"category": k, "count": cats[k]})
	}
	for _, k := range sortedKeys(names) {
		var id int
		fmt.Sscanf(k, "%d", &id)
		out["eventNames"] = append(out["eventNames"].([]any), map[string]any{"eventId": id, "eventName": nameOf[k], "count": names[k]})
	}
	for _, k := range sortedKeys(srcs) {
		out["sourceTypes"] = append(out["sourceTypes"].([]any), map[string]any{"sourceType": k, "count": srcs[k]})
	}
	writeJSON(w, 200, out)
	return nil
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
