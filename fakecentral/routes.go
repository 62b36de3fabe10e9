package fakecentral

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpbench/bench/internal/odata"
)

// handler answers a modelled route; a returned error becomes Central's
// error envelope.
type handler func(w http.ResponseWriter, rq *request, st *state) *apiError

// route is a modelled route.
type route struct {
	method  string
	pattern string
	segs    []string
	write   bool  // needs the state's write lock
	class   Class // overrides Classify when set
	handle  handler
	extra   []string // query parameters accepted beyond the documented ones

	name string // "METHOD /pattern", for the journal

	once     sync.Once
	declared []string
	req      []string
}

// query lists the accepted query parameters: the documented ones (the v1
// definition for a v1alpha1 alias) plus extras.
func (r *route) query() []string {
	r.once.Do(r.resolve)
	return r.declared
}

func (r *route) required() []string {
	r.once.Do(r.resolve)
	return r.req
}

func (r *route) resolve() {
	p := r.pattern
	cr := catalogRouteFor(r.method, p)
	if cr == nil && strings.Contains(p, "/v1alpha1/") {
		cr = catalogRouteFor(r.method, strings.Replace(p, "/v1alpha1/", "/v1/", 1))
	}
	if cr == nil && strings.Contains(p, "/v1/") {
		cr = catalogRouteFor(r.method, strings.Replace(p, "/v1/", "/v1alpha1/", 1))
	}
	if cr != nil {
		r.declared = append(r.declared, cr.Query...)
		r.req = append(r.req, cr.Req...)
	}
	r.declared = append(r.declared, r.extra...)
}

var (
	routesOnce sync.Once
	routeTable []*route
	routeIndex map[string][]*route
)

func modelledRoutes() []*route {
	routesOnce.Do(func() {
		routeIndex = map[string][]*route{}
		for _, r := range buildRoutes() {
			r.segs = splitPath(r.pattern)
			r.name = r.method + " " + r.pattern
			routeTable = append(routeTable, r)
			k := r.method + " " + strconv.Itoa(len(r.segs))
			routeIndex[k] = append(routeIndex[k], r)
		}
	})
	return routeTable
}

// ModelledRoutes lists the modelled routes as "METHOD /path" strings.
func ModelledRoutes() []string {
	var out []string
	for _, r := range modelledRoutes() {
		out = append(out, r.method+" "+r.pattern)
	}
	return out
}

// findRoute matches a request against the modelled routes, preferring the
// route with the most literal segments.
func findRoute(method string, segs []string) (*route, map[string]string) {
	modelledRoutes()
	return bestMatch(routeIndex[method+" "+strconv.Itoa(len(segs))], func(r *route) []string { return r.segs }, segs, false)
}

// bestMatch picks, among routes with as many segments as the request, the
// one whose literal segments all match, preferring the most literal
// segments, and binds its {params} to the request's segments. emptyParams
// says whether a parameter may bind an empty segment.
func bestMatch[R any](cands []R, pattern func(R) []string, segs []string, emptyParams bool) (R, map[string]string) {
	var best R
	var bestSegs []string
	bestLit := -1
	for _, r := range cands {
		pat := pattern(r)
		lit, ok := 0, true
		for i, s := range pat {
			if isParam(s) {
				if segs[i] == "" && !emptyParams {
					ok = false
					break
				}
				continue
			}
			if s != segs[i] {
				ok = false
				break
			}
			lit++
		}
		if ok && lit > bestLit {
			best, bestSegs, bestLit = r, pat, lit
		}
	}
	if bestSegs == nil {
		var zero R
		return zero, nil
	}
	params := map[string]string{}
	for i, s := range bestSegs {
		if isParam(s) {
			params[s[1:len(s)-1]] = segs[i]
		}
	}
	return best, params
}

// both registers a route under v1 and v1alpha1: the compared servers use both
// for the monitoring-gateway and troubleshooting families.
func both(method, pattern string, h handler, opts ...func(*route)) []*route {
	var out []*route
	for _, v := range []string{"v1", "v1alpha1"} {
		r := &route{method: method, pattern: strings.Replace(pattern, "{v}", v, 1), handle: h}
		for _, o := range opts {
			o(r)
		}
		out = append(out, r)
	}
	return out
}

func one(method, pattern string, h handler, opts ...func(*route)) []*route {
	r := &route{method: method, pattern: pattern, handle: h}
	for _, o := range opts {
		o(r)
	}
	return []*route{r}
}

func writes(r *route)                     { r.write = true }
func withClass(c Class) func(*route)      { return func(r *route) { r.class = c } }
func extraQuery(q ...string) func(*route) { return func(r *route) { r.extra = append(r.extra, q...) } }

// ---- lists and paging ----

// listSpec describes a list endpoint.
type listSpec struct {
	view          string
	cursor        bool   // limit + next (page number); else limit + offset
	key           string // list property; default "items"
	defLimit      int
	maxLimit      int
	defaultFilter string                // applied when the filter does not name its field
	match         func(it *item) bool   // query-parameter constraints
	matchKey      string                // what match depends on (for the selection cache)
	extra         func(b *bytes.Buffer) // extra top-level members, each starting with ','
	offsetString  bool                  // config lists: "offset" is the next offset as a string, or null
	withOffset    bool                  // cursor lists whose schema also requires "offset"
	items         []item                // when set, used instead of the view
}

func intParam(rq *request, name string, def, min, max int) (int, *apiError) {
	s := rq.query.Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < min || (max > 0 && n > max) {
		if max > 0 {
			return 0, badRequest("Invalid value for %s: %q (allowed %d to %d)", name, s, min, max)
		}
		return 0, badRequest("Invalid value for %s: %q", name, s)
	}
	return n, nil
}

func (rq *request) serveList(w http.ResponseWriter, st *state, ls listSpec) *apiError {
	items := ls.items
	if items == nil {
		items = st.view(ls.view).items
	}
	f, err := odata.Parse(rq.query.Get("filter"))
	if err != nil {
		return badRequest("Invalid filter: %v", err)
	}
	if len(items) > 0 {
		for _, fld := range f.Fields() {
			if _, ok := items[0].get(fld); !ok && !fieldKnown(items, fld) && !documentedField(rq, fld) {
				return badRequest("Invalid filter field: %s", fld)
			}
		}
	}
	// The selection (filter, constraints, sort) is cached per state: lists
	// are read far more often than the state changes, and a page of the
	// campus client list should cost a copy, not a scan.
	cacheKey := ""
	if ls.items == nil {
		cacheKey = ls.view + "\x00" + rq.query.Get("filter") + "\x00" + rq.query.Get("sort") + "\x00" + ls.defaultFilter + "\x00" + ls.matchKey
		if v, ok := st.selCache.Load(cacheKey); ok {
			return rq.writePage(w, ls, v.([]*item))
		}
	}
	var def odata.Filter
	if ls.defaultFilter != "" {
		def, _ = odata.Parse(ls.defaultFilter)
		if f.Has(def.Terms[0].Field) {
			def = odata.Filter{}
		}
	}
	sel := make([]*item, 0, len(items))
	for i := range items {
		it := &items[i]
		if !def.Match(it.get) || !f.Match(it.get) {
			continue
		}
		if ls.match != nil && !ls.match(it) {
			continue
		}
		sel = append(sel, it)
	}
	if s := rq.query.Get("sort"); s != "" {
		if err := sortItems(sel, s); err != nil {
			return err
		}
	}
	if cacheKey != "" {
		st.selCache.Store(cacheKey, sel)
	}
	return rq.writePage(w, ls, sel)
}

// writePage answers one page of a selection with the list envelope.
func (rq *request) writePage(w http.ResponseWriter, ls listSpec, sel []*item) *apiError {
	maxLimit := ls.maxLimit
	if maxLimit == 0 {
		maxLimit = 1000
	}
	defLimit := ls.defLimit
	if defLimit == 0 {
		defLimit = 100
	}
	limit, aerr := intParam(rq, "limit", defLimit, 1, maxLimit)
	if aerr != nil {
		return aerr
	}
	if n := int(rq.c.pageSize.Load()); n > 0 && limit > n {
		limit = n // the run's page size (Options.PageSize)
	}
	total := len(sel)
	var off, page int
	if ls.cursor {
		page, aerr = intParam(rq, "next", 1, 1, 0)
		if aerr != nil {
			return aerr
		}
		off = (page - 1) * limit
		if page > 1_000_000 {
			off = total
		}
	} else {
		off, aerr = intParam(rq, "offset", 0, 0, 0)
		if aerr != nil {
			return aerr
		}
	}
	if off > total || off < 0 {
		off = total
	}
	end := off + limit
	if end > total {
		end = total
	}
	key := ls.key
	if key == "" {
		key = "items"
	}
	// The page is assembled in a pooled buffer and written with one Write
	// (one syscall for the body, like a plain handler), with no per-request
	// page allocation.
	var head, tail bytes.Buffer
	fmt.Fprintf(&head, `{"count":%d,%q:[`, end-off, key)
	tail.WriteByte(']')
	if ls.cursor {
		if end < total {
			fmt.Fprintf(&tail, `,"next":"%d"`, page+1)
		} else {
			tail.WriteString(`,"next":null`)
		}
		if ls.withOffset {
			fmt.Fprintf(&tail, `,"offset":%d`, off)
		}
	} else if ls.offsetString {
		if end < total {
			fmt.Fprintf(&tail, `,"offset":"%d"`, end)
		} else {
			tail.WriteString(`,"offset":null`)
		}
	} else {
		fmt.Fprintf(&tail, `,"offset":%d`, off)
	}
	fmt.Fprintf(&tail, `,"total":%d`, total)
	if ls.extra != nil {
		ls.extra(&tail)
	}
	tail.WriteByte('}')
	size := head.Len() + tail.Len()
	for i, it := range sel[off:end] {
		size += len(it.raw)
		if i > 0 {
			size++
		}
	}
	b := pagePool.Get().(*bytes.Buffer)
	b.Reset()
	b.Grow(size)
	b.Write(head.Bytes())
	for i, it := range sel[off:end] {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(it.raw)
	}
	b.Write(tail.Bytes())
	writeRaw(w, 200, b.Bytes())
	if b.Cap() <= 4<<20 {
		pagePool.Put(b)
	}
	return nil
}

var pagePool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// itemFields caches, per documented route, the property names of its list
// items: a documented field is a valid filter field even when no entity of
// the fixture carries it (it then matches nothing).
var itemFields sync.Map // *catalogRoute -> map[string]bool

func documentedField(rq *request, field string) bool {
	cr, _ := findCatalogRoute(rq.method, rq.segs)
	if cr == nil {
		return false
	}
	if v, ok := itemFields.Load(cr); ok {
		return v.(map[string]bool)[field]
	}
	names := map[string]bool{}
	var s map[string]any
	if json.Unmarshal(cr.Schema, &s) == nil {
		g := &sampler{ci: loadCatalog()}
		props, _, _ := g.flatten(s, 0)
		for _, k := range []string{"items", "events"} {
			if p, ok := props[k].(map[string]any); ok {
				if im, ok := g.arrayItems(p); ok {
					ip, _, _ := g.flatten(im, 0)
					for n := range ip {
						names[n] = true
					}
				}
			}
		}
	}
	itemFields.Store(cr, names)
	return names[field]
}

func fieldKnown(items []item, field string) bool {
	for i := range items {
		if _, ok := items[i].get(field); ok {
			return true
		}
		if i > 50 {
			break
		}
	}
	return false
}

// sortItems applies "field [asc|desc][, field [asc|desc]]".
func sortItems(sel []*item, spec string) *apiError {
	type key struct {
		field string
		desc  bool
	}
	var keys []key
	for _, part := range strings.Split(spec, ",") {
		fs := strings.Fields(part)
		if len(fs) == 0 {
			continue
		}
		k := key{field: fs[0]}
		if len(fs) > 1 {
			switch strings.ToLower(fs[1]) {
			case "asc":
			case "desc":
				k.desc = true
			default:
				return badRequest("Invalid sort direction %q (use asc or desc)", fs[1])
			}
		}
		if len(fs) > 2 {
			return badRequest("Invalid sort expression %q", part)
		}
		keys = append(keys, k)
	}
	sort.SliceStable(sel, func(i, j int) bool {
		for _, k := range keys {
			a, _ := sel[i].get(k.field)
			b, _ := sel[j].get(k.field)
			c := odata.CompareValues(a, b)
			if k.field == "severity" {
				c = severityRank(a) - severityRank(b)
			}
			if c == 0 {
				continue
			}
			if k.desc {
				return c > 0
			}
			return c < 0
		}
		return false
	})
	return nil
}

func severityRank(s string) int {
	switch strings.ToLower(s) {
	case "critical":
		return 4
	case "major":
		return 3
	case "minor":
		return 2
	case "info", "warning":
		return 1
	}
	return 0
}

// serveItem answers one entity of a view, or Central's 404.
func (rq *request) serveItem(w http.ResponseWriter, st *state, viewName, key string) *apiError {
	it := st.view(viewName).find(key)
	if it == nil {
		return notFound("Resource not found for the given input.")
	}
	writeRaw(w, 200, it.raw)
	return nil
}
