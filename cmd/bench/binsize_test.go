package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoTemplateExecution keeps bench's own packages from importing
// text/template or html/template. Executing a template makes the linker
// keep every exported method of every type in the binary (a template may
// call any method by name), which once made the release build 23 MB larger
// (issue 14, item 9; scripts/bench/binary-size.sh measures the size).
func TestNoTemplateExecution(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Module}} {{join .Imports \" \"}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasPrefix(f[1], "github.com/mcpbench/bench") {
			continue
		}
		for _, imp := range f[2:] {
			if imp == "text/template" || imp == "html/template" {
				t.Errorf("%s imports %s: fill text by replacement or with fmt instead (see view.page)", f[0], imp)
			}
		}
	}
}
