package scenarios

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad feeds arbitrary bytes to the loader and the validator: they may
// reject anything, but must not panic, and every error must name the file.
func FuzzLoad(f *testing.F) {
	for _, pattern := range []string{"testdata/broken/*.yaml", "testdata/valid/*.yaml", "testdata/methodology/*.yaml", "testdata/listed/*.yaml", "golden/*.yaml"} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("format: 1\nexpect: {api_calls: [{any_of: [\"GET /**/**\"]}]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		list, err := Parse("fuzz.yaml", data)
		if l, ok := err.(ErrorList); ok {
			for _, e := range l {
				if e.File != "fuzz.yaml" {
					t.Fatalf("error without the file name: %v", e)
				}
			}
		} else if err != nil {
			t.Fatalf("Parse returned %T, want ErrorList", err)
		}
		_ = Validate(list, &ValidateOptions{Catalog: newTestCatalog()})
		cfg, _ := ParseConfig("fuzz.yaml", data)
		if cfg != nil {
			_ = ValidateConfig(cfg, list)
		}
	})
}
