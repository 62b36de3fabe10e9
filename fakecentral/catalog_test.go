package fakecentral

import (
	"bytes"
	"testing"

	catalogpkg "github.com/mcpbench/bench/fakecentral/internal/catalog"
)

// TestCatalogIsGenerated fails when catalog.json is stale: regenerate it
// with `go generate ./fakecentral`.
func TestCatalogIsGenerated(t *testing.T) {
	dir := openAPIDir(t)
	want, err := catalogpkg.Generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, catalogJSON) {
		t.Fatal("catalog.json differs from what the OpenAPI definitions generate: run `go generate ./fakecentral`")
	}
	ci := loadCatalog()
	if len(ci.Routes) != 1677 {
		t.Errorf("catalog has %d routes, the definitions document 1677 operations", len(ci.Routes))
	}
}
