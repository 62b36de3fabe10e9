// Package view shows a trace store as a web page: the runs, filtered by
// server, model, scenario, suite and outcome; one run as a timeline; a
// replay's miss with its explanation; two runs side by side with their
// first divergence marked; and the scoreboard with its charts. It serves
// the page on loopback (Server) and writes the same page as a static
// bundle that opens from disk (Export).
//
// Vocabulary:
//
//   - A row is one ref of the store as the run list shows it: the ref's
//     segments (prefix, suite, server, model, scenario, run index) and,
//     once the run has been read, its summary (outcome, task success,
//     safety, turns, tokens). The list is built from the refs alone, so
//     opening a store reads no run; a page of rows reads the runs it
//     shows, and a filter on outcome the runs it filters.
//   - A timeline is one run laid out for reading: model turns with their
//     tokens, tool calls with their arguments and results, under each call
//     the HTTP calls it made (status and class), its elicitations and
//     egress attempts and the safety findings that name it, then the
//     answer against the scenario's result schema.
//   - The board is the scoreboard of the recorded runs (what bench report
//     prints), its SVG chart, and one strip per scenario, server and
//     model: each run index's pass or fail.
//   - A bundle is the page and the data of a selection of runs written to
//     a directory: data as JavaScript files the page loads with script
//     elements (a page opened from file:// may not fetch), one per run,
//     loaded when shown.
//
// Everything a server or a model said is shown through internal/escape
// (control and bidirectional characters written out) and put in the page
// with textContent only. Canaries (the fixtures' secrets) are masked
// unless Options.NoMask; Export refuses to write a bundle that would
// publish a canary or a value that looks like a credential, naming the
// run and the field.
package view
