package fakecentral

import (
	"sort"
	"strings"
)

// Catalog answers what a scenario linter asks of the fake (it satisfies
// scenarios.Catalog): which fixtures exist, which entities they hold, which
// routes the fake serves and how it classes a request. Fixtures are loaded
// once each. It is not safe for concurrent use.
type Catalog struct {
	fixtures map[string]*Fixture // loaded bundles; nil value: not found
}

// NewCatalog returns a Catalog over the embedded fixtures (and fixture
// files named by path) and the route table.
func NewCatalog() *Catalog { return &Catalog{fixtures: map[string]*Fixture{}} }

func (c *Catalog) fixture(name string) *Fixture {
	fx, ok := c.fixtures[name]
	if !ok {
		fx, _ = LoadFixture(name)
		c.fixtures[name] = fx
	}
	return fx
}

// HasFixture reports whether fixture name loads.
func (c *Catalog) HasFixture(name string) bool { return c.fixture(name) != nil }

// HasEntity reports whether fixture holds the entity kind/id.
func (c *Catalog) HasEntity(fixture, kind, id string) bool {
	fx := c.fixture(fixture)
	return fx != nil && fx.HasEntity(kind, id)
}

// Serves reports whether the fake serves method on the route pattern.
func (c *Catalog) Serves(method, pattern string) bool {
	return Serves(method+" "+pattern) != NotServed
}

// Class is the class the fake gives a request.
func (c *Catalog) Class(method, path string) string {
	return string(Classify(method, path))
}

// FixtureError is why fixture name does not load, or nil.
func (c *Catalog) FixtureError(name string) error {
	if c.fixture(name) != nil {
		return nil
	}
	_, err := LoadFixture(name)
	return err
}

// Routes lists every route the fake serves, as "METHOD /template": the
// modelled routes and the documented ones, a documented v1 route under
// v1alpha1 too and back (the fake answers both), sorted.
func (c *Catalog) Routes() []string {
	seen := map[string]bool{}
	for _, r := range ModelledRoutes() {
		seen[r] = true
	}
	for _, r := range loadCatalog().Routes {
		seen[r.Method+" "+r.Path] = true
		if segs := splitPath(r.Path); len(segs) > 1 && (segs[1] == "v1" || segs[1] == "v1alpha1") {
			segs[1] = map[string]string{"v1": "v1alpha1", "v1alpha1": "v1"}[segs[1]]
			seen[r.Method+" /"+strings.Join(segs, "/")] = true
		}
	}
	out := make([]string, 0, len(seen))
	for r := range seen {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}
