package scenarios

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Pos is a position in a manifest file (1-based line and column; 0 when
// unknown).
type Pos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

// Error is one problem in a manifest: where it is and what is wrong. A
// warning (from Lint) is a problem that does not stop the manifest from
// loading and scoring.
type Error struct {
	File    string // the file as given to the loader
	Pos            // where in File
	Field   string // field path, such as "expect.api_calls[0]"; empty for the document
	ID      string // the scenario id when known
	Msg     string
	Warning bool
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File == "" {
		b.WriteString("bench")
	}
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	b.WriteString(": ")
	if e.Warning {
		b.WriteString("warning: ")
	}
	if e.ID != "" {
		fmt.Fprintf(&b, "%s: ", e.ID)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, "%s: ", e.Field)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ErrorList holds every problem found; it is an error when not empty.
type ErrorList []*Error

func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	}
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return fmt.Sprintf("%d errors:\n%s", len(l), strings.Join(lines, "\n"))
}

// Err returns l as an error, or nil when l is empty.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// Sort orders l by file, line, column and message.
func (l ErrorList) Sort() {
	slices.SortStableFunc(l, func(a, b *Error) int {
		return cmp.Or(
			cmp.Compare(a.File, b.File),
			cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Column, b.Column),
			cmp.Compare(a.Field, b.Field),
			cmp.Compare(a.Msg, b.Msg),
		)
	})
}
