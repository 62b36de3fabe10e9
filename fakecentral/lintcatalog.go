package fakecentral

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
