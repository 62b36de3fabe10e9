package recorder

import (
	"fmt"
	"testing"
)

// A schema is compiled once for every session that offers it, checks
// arguments as a fresh compile does, and one that does not compile is
// remembered as none.
func TestSchemaCacheSharesCompiles(t *testing.T) {
	var c schemaCache
	raw := []byte(`{"type":"object","properties":{"site":{"type":"string"}},"required":["site"]}`)
	a, b := c.compile(raw), c.compile(append([]byte(nil), raw...))
	if a == nil || a != b {
		t.Fatalf("the same schema compiled twice: %p, %p", a, b)
	}
	if err := a.Validate([]byte(`{"site":"s1"}`)); err != nil {
		t.Fatalf("valid arguments refused: %v", err)
	}
	if err := a.Validate([]byte(`{}`)); err == nil {
		t.Fatal("arguments without a required member accepted")
	}
	if s := c.compile([]byte(`{"type":"object","$ref":"https://example.com/s.json"}`)); s != nil {
		t.Fatal("a schema that reaches the network compiled")
	}
	if other := c.compile([]byte(`{"type":"object"}`)); other == a {
		t.Fatal("another schema got the first one's compile")
	}
	// Bounded: past the bound it starts again, and still compiles.
	for i := range schemaCacheMax + 1 {
		c.compile(fmt.Appendf(nil, `{"type":"object","title":"t%d"}`, i))
	}
	if n := len(c.m); n > schemaCacheMax {
		t.Fatalf("%d schemas kept, more than %d", n, schemaCacheMax)
	}
	if c.compile(raw) == nil {
		t.Fatal("a schema compiled after the cache started again is none")
	}
}
