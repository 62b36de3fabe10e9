package scenarios

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mcpbench/bench/internal/cores"
)

//go:embed golden/*.yaml
var goldenFS embed.FS

// GoldenDir is where the shipped suite lives in the repository; embedded
// files are reported under this name.
const GoldenDir = "scenarios/golden"

// goldenNodes is the embedded suite parsed (see nodes.go).
//
//go:embed golden.nodes
var goldenNodes []byte

// Golden loads the shipped suite embedded in the binary. It does not
// validate it; call Validate. The suite's YAML is read from its parsed
// snapshot when the snapshot was made from it, and parsed otherwise.
func Golden() ([]*Scenario, error) {
	paths, data, err := readManifests(goldenFS, "golden")
	if err != nil {
		return parseManifests(paths, data, err, "golden", GoldenDir)
	}
	files, err := decodeNodes(goldenNodes, sourceHash(paths, data))
	if err != nil {
		return parseManifests(paths, data, nil, "golden", GoldenDir)
	}
	results := make([]fileResult, len(files))
	cores.Each(len(files), func(i int) {
		ss, errs := decodeDocs(GoldenDir+strings.TrimPrefix(files[i].path, "golden"), files[i].docs)
		errs.Sort()
		results[i] = fileResult{ss, errs.Err()}
	})
	return collect(results, nil)
}

// maxFileSize bounds one manifest file.
const maxFileSize = 4 << 20

// Parse reads every YAML document in data as a scenario. file names the
// source in errors. It returns the scenarios it could decode and all the
// errors found (an ErrorList), so one call reports every problem.
func Parse(file string, data []byte) ([]*Scenario, error) {
	if len(data) > maxFileSize {
		return nil, ErrorList{{File: file, Msg: fmt.Sprintf("file is larger than %d bytes", maxFileSize)}}
	}
	docs, err := parseDocs(data)
	out, errs := decodeDocs(file, docs)
	if err != nil {
		errs = append(errs, syntaxError(file, err))
	}
	errs.Sort()
	return out, errs.Err()
}

// parseDocs parses every YAML document of data; at a syntax error, it
// returns the documents before it and the error.
func parseDocs(data []byte) ([]*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*yaml.Node
	for {
		doc := &yaml.Node{}
		err := safeDecode(dec, doc)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return docs, err
		}
		docs = append(docs, doc)
	}
}

// decodeDocs decodes parsed documents of file as scenarios.
func decodeDocs(file string, docs []*yaml.Node) ([]*Scenario, ErrorList) {
	var out []*Scenario
	var errs ErrorList
	fields := fieldCache{}
	for _, doc := range docs {
		if len(doc.Content) == 0 {
			continue
		}
		root := doc.Content[0]
		if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
			continue // an empty document between separators
		}
		if isListed(root) {
			list, derrs := decodeListed(file, root, fields)
			errs = append(errs, derrs...)
			out = append(out, list...)
			continue
		}
		s, derrs := decodeScenario(file, root, fields)
		errs = append(errs, derrs...)
		if s != nil {
			out = append(out, s)
		}
	}
	return out, errs
}

// safeDecode turns a panic inside the YAML parser into an error: a
// malformed manifest must never crash bench.
func safeDecode(dec *yaml.Decoder, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml parser failed: %v", r)
		}
	}()
	return dec.Decode(n)
}

func decodeScenario(file string, root *yaml.Node, fields fieldCache) (*Scenario, ErrorList) {
	s := &Scenario{File: file, Pos: Pos{root.Line, root.Column}, pos: map[string]Pos{}}
	d := &decoder{file: file, pos: s.pos, fields: fields}
	root = resolve(root)
	if root == nil || root.Kind != yaml.MappingNode {
		d.errorf(root, "", "a scenario must be a mapping, got %s", kindOf(root))
		return nil, d.errs
	}
	if !hasKey(root, "format") {
		// No format key: the methodology's own scenario format.
		decodeMethodology(s, d, root)
	} else {
		d.decode(root, reflect.ValueOf(s).Elem(), "")
		if s.Format != FormatVersion {
			p := s.PosOf("format")
			d.errs = append(d.errs, &Error{File: file, Pos: p, Field: "format", Msg: fmt.Sprintf("unsupported format %d; this bench reads format %d (and, with no format key, the methodology's format)", s.Format, FormatVersion)})
		}
	}
	s.resolveFixture()
	for _, e := range d.errs {
		e.ID = s.ID
		s.bad = append(s.bad, e.Field)
	}
	// The result schema is compiled once, when first used: validation
	// reports its errors, the run and the scorer use it (ResultShape,
	// CheckShape, CheckResult).
	s.result = &resultSchemas{schema: s.ResultSchema}
	return s, d.errs
}

func kindOf(n *yaml.Node) string {
	if n == nil {
		return "nothing"
	}
	return kindName(n)
}

func hasKey(m *yaml.Node, key string) bool {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return true
		}
	}
	return false
}

var yamlLine = regexp.MustCompile(`^line (\d+): (.*)$`)

// syntaxError turns a yaml.v3 parse error ("yaml: line 5: ...") into an
// Error with its line.
func syntaxError(file string, err error) *Error {
	msg := cleanYAMLError(err)
	e := &Error{File: file, Msg: "invalid YAML: " + msg}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Msg = "invalid YAML: " + m[2]
	}
	return e
}

// LoadFile reads one manifest file.
func LoadFile(path string) ([]*Scenario, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, ErrorList{{File: path, Msg: err.Error()}}
	}
	return Parse(path, data)
}

func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading manifest: %w", err)
	}
	return data, nil
}

// IsManifest reports whether a file name looks like a manifest (.yaml or
// .yml).
func IsManifest(name string) bool {
	ext := filepath.Ext(name)
	return ext == ".yaml" || ext == ".yml"
}

// LoadPaths reads manifests from files and directories (every .yaml and
// .yml file below a directory, in lexical order). It returns what it could
// decode and every error.
func LoadPaths(paths ...string) ([]*Scenario, error) {
	var out []*Scenario
	var errs ErrorList
	add := func(ss []*Scenario, err error) {
		out = append(out, ss...)
		var l ErrorList
		if errors.As(err, &l) {
			errs = append(errs, l...)
		} else if err != nil {
			errs = append(errs, &Error{Msg: err.Error()})
		}
	}
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			errs = append(errs, &Error{File: p, Msg: "cannot read: " + pathErr(err)})
			continue
		}
		if !info.IsDir() {
			add(LoadFile(p))
			continue
		}
		found := false
		err = filepath.WalkDir(p, func(fp string, de fs.DirEntry, err error) error {
			if err != nil {
				errs = append(errs, &Error{File: fp, Msg: "cannot read: " + pathErr(err)})
				return nil
			}
			if de.IsDir() || !IsManifest(fp) {
				return nil
			}
			found = true
			add(LoadFile(fp))
			return nil
		})
		if err != nil {
			errs = append(errs, &Error{File: p, Msg: err.Error()})
		}
		if !found {
			errs = append(errs, &Error{File: p, Msg: "no .yaml manifests in directory"})
		}
	}
	return out, errs.Err()
}

// LoadFS reads every manifest below dir in fsys, naming files as display
// (in place of dir) in errors and in Scenario.File.
func LoadFS(fsys fs.FS, dir, display string) ([]*Scenario, error) {
	paths, data, err := readManifests(fsys, dir)
	return parseManifests(paths, data, err, dir, display)
}

// parseManifests parses the manifests read below dir (readManifests),
// naming them as LoadFS does; walkErr is what the walk failed with.
func parseManifests(paths []string, data [][]byte, walkErr error, dir, display string) ([]*Scenario, error) {
	results := make([]fileResult, len(paths))
	// YAML decoding is most of a command's start-up: the files are parsed
	// on every core, and collected in walk order.
	cores.Each(len(paths), func(i int) {
		results[i].ss, results[i].err = Parse(display+strings.TrimPrefix(paths[i], dir), data[i])
	})
	var more ErrorList
	if walkErr != nil {
		more = ErrorList{{File: display, Msg: walkErr.Error()}}
	}
	return collect(results, more)
}

// readManifests reads every manifest below dir in fsys, in walk order.
func readManifests(fsys fs.FS, dir string) (paths []string, data [][]byte, err error) {
	err = fs.WalkDir(fsys, dir, func(fp string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if de.IsDir() || !IsManifest(fp) {
			return nil
		}
		b, err := fs.ReadFile(fsys, fp)
		if err != nil {
			return err
		}
		paths, data = append(paths, fp), append(data, b)
		return nil
	})
	return paths, data, err
}

// fileResult is what one manifest file decoded to.
type fileResult struct {
	ss  []*Scenario
	err error
}

// collect joins the scenarios and the errors of files, in order, then
// more.
func collect(results []fileResult, more ErrorList) ([]*Scenario, error) {
	var out []*Scenario
	var errs ErrorList
	for _, r := range results {
		out = append(out, r.ss...)
		var l ErrorList
		if errors.As(r.err, &l) {
			errs = append(errs, l...)
		}
	}
	return out, append(errs, more...).Err()
}

func pathErr(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
