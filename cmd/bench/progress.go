package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mcpbench/bench/internal/escape"
	"github.com/mcpbench/bench/llm"
)

// progress reports runs as they finish: a redrawn status line on a
// terminal, one plain line per run otherwise.
type progress struct {
	w              io.Writer
	tty            bool
	total, n, fail int
	start          time.Time
}

func newProgress(w io.Writer, total int) *progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return &progress{w: w, tty: tty, total: total, start: time.Now()}
}

func (p *progress) done(what, outcome string, failed bool) {
	p.n++
	if failed {
		p.fail++
	}
	// outcome may quote a server's error.
	what, outcome = escape.Line(what), escape.Line(outcome)
	if !p.tty {
		fmt.Fprintf(p.w, "[%d/%d] %s: %s\n", p.n, p.total, what, outcome)
		return
	}
	eta := "-"
	if p.n > 0 && p.n < p.total {
		per := time.Since(p.start) / time.Duration(p.n)
		eta = (per * time.Duration(p.total-p.n)).Round(time.Second).String()
	}
	fmt.Fprintf(p.w, "\r\033[K%d/%d runs, %d failed, ETA %s  %s", p.n, p.total, p.fail, eta, llm.Truncate(what, 60))
}

func (p *progress) finish() {
	if p.tty && p.n > 0 {
		fmt.Fprintln(p.w)
	}
}
