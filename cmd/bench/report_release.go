package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"

	"github.com/mcpbench/bench/internal/atomicfile"
	"github.com/mcpbench/bench/internal/bounded"
	"github.com/mcpbench/bench/scoring"
)

// writeRelease writes the page, its chart and its JSON. Each file is
// rendered in memory first and written into a new file renamed into place
// (atomicfile), so a failure leaves no half-written page and a symlink
// planted at a page's name is replaced, not followed.
func writeRelease(a *app, opts *reportOptions, rep *scoring.Report) error {
	base := "benchmark-results-" + opts.release
	svgName, jsonName := base+".svg", base+".json"
	// The maintainer's notes on the run, kept beside the page (the model
	// and how it was served, say), go into it as they are.
	notes, err := bounded.ReadFile(filepath.Join(opts.outDir, base+".notes.md"), 64<<10)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return usageErr(err)
	}
	var page, svg, js bytes.Buffer
	link, err := bundleLink(opts)
	if err != nil {
		return err
	}
	if err := scoring.WriteResultsPage(&page, rep, scoring.Page{Version: opts.release, SVG: svgName, JSON: jsonName, Notes: string(notes), Bundle: link}); err != nil {
		return err
	}
	if err := scoring.WriteSVG(&svg, rep); err != nil {
		return err
	}
	// The page's JSON holds what the page shows (summaries per scenario and
	// suite); the runs themselves are in the store.
	summary := *rep
	if rep.Results != nil {
		summary.Results = rep.Results.WithoutRuns()
	}
	if err := scoring.WriteJSON(&js, &summary); err != nil {
		return err
	}
	if err := os.MkdirAll(opts.outDir, 0o755); err != nil {
		return setupErr(err)
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{base + ".md", page.Bytes()}, {svgName, svg.Bytes()}, {jsonName, js.Bytes()}} {
		path := filepath.Join(opts.outDir, f.name)
		if err := atomicfile.WriteFile(path, f.data, 0o644); err != nil {
			return setupErr(err)
		}
		fmt.Fprintf(a.stdout, "wrote %s\n", path)
	}
	return nil
}

var linkPattern = regexp.MustCompile(`^[A-Za-z0-9._/-]+$`)

// bundleLink is the path from the results page to the bundle --bundle
// names, checked to hold one (bench view --export's index.html).
func bundleLink(opts *reportOptions) (string, error) {
	if opts.bundle == "" {
		return "", nil
	}
	if b, err := os.ReadFile(filepath.Join(opts.bundle, "index.html")); err != nil || !bytes.Contains(b, []byte(`data-bundle="1"`)) {
		return "", usageErr(fmt.Errorf("--bundle %s: no bench view bundle there (write one with bench view --export %s)", opts.bundle, opts.bundle))
	}
	abs, err1 := filepath.Abs(opts.bundle)
	out, err2 := filepath.Abs(opts.outDir)
	rel, err3 := filepath.Rel(out, abs)
	rel = filepath.ToSlash(rel)
	if err := errors.Join(err1, err2, err3); err != nil || !linkPattern.MatchString(rel) {
		return "", usageErr(fmt.Errorf("--bundle %s: cannot link it from %s as a plain relative path", opts.bundle, opts.outDir))
	}
	return rel, nil
}
