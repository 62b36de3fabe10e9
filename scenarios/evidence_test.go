package scenarios

import (
	"strings"
	"testing"
)

// Evidence is path:line@sha; looser citations load with a warning, and only
// an empty or multi-line value is an error.
func TestEvidencePins(t *testing.T) {
	tests := []struct {
		pin, want string // want: "" clean, "warning: ..." or an error
	}{
		{"tools/clients.py:95@4a947a43", ""},
		{"src/a.py:10-20@9c7df436ff3f6d4311ae4456df98a6f3e8fcab47", ""},
		{"a.py:1@abcdef0, b.py:2@abcdef0", ""},
		{"tools/clients.py:95", "warning: (no SHA)"},
		{"tools/clients.py@4a947a43", "warning: (no line)"},
		{"tools/clients.py", "warning: (no SHA, no line)"},
		{"path/to/source.py:123@<sha>", `warning: ("<sha>" is not a commit SHA)`},
		{"tools/clients.py#L95@4a947a43", "warning: (a #L anchor for the line)"},
		{"tools/clients.py:main@4a947a43", `warning: (line "main" is not a number)`},
		{"https://github.com/o/r/blob/4a947a43/tools/clients.py#L95", "warning: (a URL)"},
		{"a.py:1@abcdef0 b.py", "warning: (b.py: no SHA, no line)"},
		{"  ", "empty: want path:line@sha"},
		{"a.py:1@abcdef0\nb.py:2@abcdef0", "want one line"},
	}
	for _, tt := range tests {
		v := &validator{s: &Scenario{ID: "x"}}
		v.checkPin("evidence", tt.pin)
		var got string
		switch {
		case len(v.errs) > 0:
			got = v.errs.Error()
		case len(v.warns) > 0:
			got = v.warns.Error()
		}
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, strings.TrimPrefix(tt.want, "warning: ")) || strings.HasPrefix(tt.want, "warning: ") != (len(v.warns) > 0) {
			t.Errorf("pin %q: got %q, want %q", tt.pin, got, tt.want)
		}
	}
}
