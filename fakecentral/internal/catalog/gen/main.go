// Command gen writes fakecentral/catalog.json from the vendor's OpenAPI
// definitions (see package catalog). Run it through `go generate ./fakecentral`.
//
// Usage: gen -in ../../shared/reference/central-openapi -out catalog.json
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/mcpbench/bench/fakecentral/internal/catalog"
)

func main() {
	in := flag.String("in", "../../shared/reference/central-openapi", "folder holding mrt/*.json and config/*.json")
	out := flag.String("out", "catalog.json", "output file")
	flag.Parse()
	b, err := catalog.Generate(*in)
	if err == nil {
		err = os.WriteFile(*out, b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
