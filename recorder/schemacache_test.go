package recorder

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A schema is compiled once for every session that offers it, checks
// arguments as a fresh compile does, and one that does not compile is
// remembered as none.
func TestSchemaCacheSharesCompiles(t *testing.T) {
	c := schemaCache{Max: schemaCacheMax}
	raw := []byte(`{"type":"object","properties":{"site":{"type":"string"}},"required":["site"]}`)
	a, b := compileIn(&c, raw), compileIn(&c, append([]byte(nil), raw...))
	if a == nil || a != b {
		t.Fatalf("the same schema compiled twice: %p, %p", a, b)
	}
	if err := a.Validate([]byte(`{"site":"s1"}`)); err != nil {
		t.Fatalf("valid arguments refused: %v", err)
	}
	if err := a.Validate([]byte(`{}`)); err == nil {
		t.Fatal("arguments without a required member accepted")
	}
	if s := compileIn(&c, []byte(`{"type":"object","$ref":"https://example.com/s.json"}`)); s != nil {
		t.Fatal("a schema that reaches the network compiled")
	}
	if other := compileIn(&c, []byte(`{"type":"object"}`)); other == a {
		t.Fatal("another schema got the first one's compile")
	}
	// Bounded: past the bound it starts again, and still compiles.
	for i := range schemaCacheMax + 1 {
		compileIn(&c, fmt.Appendf(nil, `{"type":"object","title":"t%d"}`, i))
	}
	if n := c.Len(); n > schemaCacheMax {
		t.Fatalf("%d schemas kept, more than %d", n, schemaCacheMax)
	}
	if compileIn(&c, raw) == nil {
		t.Fatal("a schema compiled after the cache started again is none")
	}
}

// A session that lists the tools another session of the same profile
// listed takes the tool set built for that one; another list, or another
// profile (its adapter renames tools), gets its own.
func TestToolSetsShared(t *testing.T) {
	tools := func(desc string) []*mcp.Tool {
		return []*mcp.Tool{{Name: "list_sites", Description: desc, InputSchema: json.RawMessage(`{"type":"object"}`)}}
	}
	p := &Profile{Name: "acme"}
	renamed := &Profile{Name: "acme", Adapter: Adapter{Rename: map[string]string{"list_sites": "sites"}}}
	var sets toolSets
	a := (&conn{tools: tools("Lists sites.")}).toolSet(p, &sets, p.Hash())
	b := (&conn{tools: tools("Lists sites.")}).toolSet(p, &sets, p.Hash())
	if a != b {
		t.Fatal("two sessions listing the same tools built two tool sets")
	}
	if c := (&conn{tools: tools("Lists the sites.")}).toolSet(p, &sets, p.Hash()); c == a {
		t.Fatal("a changed description got the first list's tool set")
	}
	d := (&conn{tools: tools("Lists sites.")}).toolSet(renamed, &sets, renamed.Hash())
	if d == a || d.model[0].Name != "sites" || d.toServer["sites"] != "list_sites" {
		t.Fatalf("another profile's adapter not applied: %+v", d.model)
	}
	// Without the Recorder's sets, a session builds its own.
	if e := (&conn{tools: tools("Lists sites.")}).toolSet(p, nil, ""); e == a || string(e.listed) != string(a.listed) {
		t.Fatal("a session without shared sets did not build the same set itself")
	}
}
