package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGoldenLoads(t *testing.T) {
	list, err := Golden()
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(list, nil); err != nil {
		t.Fatal(err)
	}
}

// TestGoldenComposition pins the suite's shape (issue 19, item 5; the
// evaluation guide's mature suite): at least 250 scenarios, core 120, edge
// 40, safety 30, negative 25, multi-step 35, every intent family 20,
// distractor tools named in 60, 15 that page the campus bundle to its end
// at a small page size, and the four fixtures used.
func TestGoldenComposition(t *testing.T) {
	list, err := Golden()
	if err != nil {
		t.Fatal(err)
	}
	c := Count(list)
	if c.Total < 250 {
		t.Errorf("%d scenarios, want at least 250", c.Total)
	}
	for _, s := range suites {
		if c.Suites[s] < 20 {
			t.Errorf("suite %s has %d scenarios, want at least 20", s, c.Suites[s])
		}
	}
	for cat, want := range map[string]int{"core": 120, "edge": 40, "safety": 30, "negative": 25, "multi-step": 35} {
		if c.Categories[cat] < want {
			t.Errorf("category %s has %d scenarios, want at least %d", cat, c.Categories[cat], want)
		}
	}
	if c.Distractors < 60 {
		t.Errorf("%d scenarios name distractors, want at least 60", c.Distractors)
	}
	if c.Paging["campus"] < 15 {
		t.Errorf("%d scenarios page the campus bundle to its end at a small page size, want at least 15", c.Paging["campus"])
	}
	for _, fx := range []string{"site-a", "campus", "incident", "branches"} {
		if c.Fixtures[fx] == 0 {
			t.Errorf("no scenario on fixture %s", fx)
		}
	}
	for _, s := range list {
		if len(s.Distractors) > 0 && !s.HasTag("distractor") {
			t.Errorf("%s names distractors without the distractor tag", s.ID)
		}
	}
}

// TestGoldenReferenceMatches checks each scenario's own expectations
// against themselves: a call with the expected tool and exactly the
// expected values must match, so a rule cannot reject its own answer.
func TestGoldenReferenceMatches(t *testing.T) {
	list, err := Golden()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		for server, tools := range s.ExpectedTools {
			for _, tool := range tools {
				rules := s.ParamsFor(server, tool)
				args := map[string]any{}
				for name, r := range rules {
					switch {
					case r.Equals != nil:
						args[name] = r.Equals
					case len(r.OneOf) > 0:
						args[name] = r.OneOf[0]
					}
				}
				for name, r := range rules {
					if _, ok := args[name]; !ok && !r.Optional && r.Time == nil && r.Min == nil && r.Max == nil {
						// A presence-only rule: a value of its type.
						args[name] = map[string]any{"object": map[string]any{}, "array": []any{}, "number": 0.0,
							"integer": 0.0, "boolean": false}[r.Type]
						if args[name] == nil {
							args[name] = "x"
						}
					}
				}
				for name := range args {
					if r := rules[name]; r != nil && r.Time != nil {
						delete(args, name)
					}
				}
				ms := s.MatchCall(server, tool, args, refNow)
				for _, m := range ms {
					if m.Reason == MissingRequired && rules[m.Param] != nil && (rules[m.Param].Time != nil || rules[m.Param].Min != nil || rules[m.Param].Max != nil) {
						continue
					}
					t.Errorf("%s: %s/%s: own expected call does not match: %v", s.ID, server, tool, m)
				}
			}
		}
	}
}

// TestDocsExample keeps the complete example in docs/scenarios.md valid.
func TestDocsExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "scenarios.md"))
	if err != nil {
		t.Skip("docs/scenarios.md not found")
	}
	_, rest, ok := strings.Cut(string(doc), "```yaml\nformat: 1\n")
	if !ok {
		t.Fatal("docs/scenarios.md has no complete example")
	}
	example, _, _ := strings.Cut(rest, "```")
	list, err := Parse("docs/scenarios.md", []byte("format: 1\n"+example))
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(list, nil); err != nil {
		t.Fatal(err)
	}

	// The methodology's format: its example loads and lints clean, with
	// karthik absent.
	_, rest, ok = strings.Cut(string(doc), "## The methodology's format")
	if !ok {
		t.Fatal("docs/scenarios.md has no section on the methodology's format")
	}
	_, rest, ok = strings.Cut(rest, "```yaml\n")
	if !ok {
		t.Fatal("docs/scenarios.md has no example of the methodology's format")
	}
	example, _, _ = strings.Cut(rest, "```")
	list, err = Parse("docs/scenarios.md", []byte(example))
	if err != nil {
		t.Fatal(err)
	}
	if warns, err := Lint(list, nil); err != nil || len(warns) > 0 || !list[0].Methodology {
		t.Fatalf("the methodology's example: errors %v, warnings %v", err, warns)
	}
	if _, covered := list[0].ToolsFor("karthik"); covered {
		t.Error("the methodology's example: karthik: [] is covered, want absent")
	}
}
