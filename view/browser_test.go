package view_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/mcpbench/bench/traces"
	"github.com/mcpbench/bench/view"
)

// The browser tests drive headless Chromium (Debian's chromium package;
// .ci/run installs it) through chromedp: they load the page bench view
// serves and a bundle it exported (file://), and check the run list, a
// timeline, a replay's miss, a diff and the scoreboard through the DOM.
// Screenshots go to $BENCH_VIEW_ARTIFACTS when it names a directory, else
// to the test's temporary directory.

// chromium finds the browser: $BENCH_CHROMIUM, else the usual names.
func chromium(t *testing.T) string {
	if p := os.Getenv("BENCH_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium found (apt-get install -y chromium, or set BENCH_CHROMIUM): the browser tests are skipped")
	return ""
}

// browser is one headless Chromium tab, and the exceptions its pages threw.
type browser struct {
	ctx  context.Context
	mu   sync.Mutex
	errs []string
}

func newBrowser(t *testing.T) *browser {
	path := chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.WindowSize(1280, 900),
		chromedp.Flag("allow-file-access-from-files", false))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run as root with its sandbox
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelTime(); cancelTab(); cancelAlloc() })
	b := &browser{ctx: ctx}
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	exceptions := chromedp.Events(ctx, runtime.ExceptionThrown)
	go func() {
		for ev, err := range exceptions {
			if err != nil {
				return
			}
			msg := ev.ExceptionDetails.Text
			if ev.ExceptionDetails.Exception != nil {
				msg += " " + ev.ExceptionDetails.Exception.Description
			}
			b.mu.Lock()
			b.errs = append(b.errs, msg)
			b.mu.Unlock()
		}
	}()
	return b
}

func (b *browser) do(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

func eval[T any](t *testing.T, b *browser, expr string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// waitFor polls the page until expr is true (chromedp's polling, no
// sleep); it fails with the page's error line when the page shows one.
func (b *browser) waitFor(t *testing.T, expr string) {
	t.Helper()
	cond := fmt.Sprintf(`(document.body.dataset.ready === "error") || (%s)`, expr)
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("waiting for %s: %v", expr, err)
	}
	if e := eval[string](t, b, `document.body.dataset.ready === "error" ? document.getElementById("error").textContent : ""`); e != "" {
		t.Fatalf("waiting for %s: the page says: %s", expr, e)
	}
}

// show opens #hash and waits until the view it names is shown.
func (b *browser) show(t *testing.T, hash, ready string) {
	t.Helper()
	b.do(t, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.body.dataset.ready = ""; location.hash = %q`, hash)))
	b.waitFor(t, fmt.Sprintf(`document.body.dataset.ready === %q`, ready))
}

// click clicks the element sel and waits for the view ready.
func (b *browser) click(t *testing.T, sel, ready string) {
	t.Helper()
	b.do(t, chromedp.Evaluate[chromedp.Void](`document.body.dataset.ready = ""`), chromedp.Click(chromedp.CSS(sel)))
	b.waitFor(t, fmt.Sprintf(`document.body.dataset.ready === %q`, ready))
}

func (b *browser) screenshot(t *testing.T, name string) {
	t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100)) // quality 100: PNG
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("BENCH_VIEW_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s (%d bytes)", path, len(png))
}

func (b *browser) noExceptions(t *testing.T) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.errs) > 0 {
		t.Errorf("the page threw: %s", strings.Join(b.errs, "; "))
	}
}

func TestBrowser(t *testing.T) {
	dir, ids := testStore(t)
	v := openView(t, dir)
	b := newBrowser(t)
	want, err := v.Diff(refRun0, refRun3)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("served", func(t *testing.T) {
		srv := httptest.NewServer(v.Handler())
		defer srv.Close()
		b.do(t, chromedp.Navigate(srv.URL+"/#/runs"))
		b.waitFor(t, `document.body.dataset.ready === "runs"`)
		// The reload button reopens the store (a recording beside the view).
		b.click(t, "#reload", "runs")
		checkPage(t, b, ids, want.FirstDivergence, "served")
	})
	t.Run("bundle", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "bundle")
		if _, err := v.Export(out, &view.ExportOptions{MaskLeaks: true}); err != nil {
			t.Fatal(err)
		}
		b.do(t, chromedp.Navigate("file://"+filepath.Join(out, "index.html")+"#/runs"))
		b.waitFor(t, `document.body.dataset.ready === "runs"`)
		checkPage(t, b, ids, want.FirstDivergence, "bundle")
	})
	b.noExceptions(t)
}

// checkPage walks the page as a reader would: the list, a filter, a
// timeline, the leak, the hostile server, the replay's miss, a diff of two
// ticked runs and the scoreboard.
func checkPage(t *testing.T, b *browser, ids map[string]traces.ID, firstDivergence int, name string) {
	if n := eval[int](t, b, `document.querySelectorAll("#run-list tbody tr").length`); n != 13 {
		t.Errorf("the run list shows %d rows, want 13", n)
	}
	// Filter by server through the select, as a reader does.
	b.do(t, chromedp.Evaluate[chromedp.Void](`const s = document.getElementById("filter-server"); s.value = "alt"; document.body.dataset.ready = ""; s.dispatchEvent(new Event("change"))`))
	b.waitFor(t, `document.body.dataset.ready === "runs"`)
	if got := eval[string](t, b, `document.getElementById("count").textContent`); got != "runs 1–5 of 5" {
		t.Errorf("filtered by server: %q", got)
	}

	// A timeline: the HTTP calls under their tool call, the tokens.
	b.show(t, "#/runs?server=reference", "runs")
	b.click(t, fmt.Sprintf(`#run-list tr[data-id=%q] a`, ids[refRun3].String()), "run")
	if n := eval[int](t, b, `document.querySelectorAll("#timeline .item.call .http-call").length`); n != 2 {
		t.Errorf("the tool call shows %d HTTP calls, want 2", n)
	}
	if got := eval[string](t, b, `document.querySelector("#timeline .item.turn .tokens").textContent`); got != "1200 in / 30 out" {
		t.Errorf("turn 0's tokens: %q", got)
	}
	if got := eval[string](t, b, `document.querySelector("#timeline .status-err").textContent`); got != "429" {
		t.Errorf("the 429 is not marked: %q", got)
	}
	if n := eval[int](t, b, `document.querySelectorAll("#timeline .elicitation").length`); n != 1 {
		t.Errorf("%d elicitations shown, want 1", n)
	}
	if got := eval[string](t, b, `document.getElementById("answer").textContent`); !strings.Contains(got, "result schema") {
		t.Errorf("the answer against the schema: %q", got)
	}
	b.screenshot(t, name+"-timeline")

	// The leak: highlighted, the canary masked.
	b.show(t, "#/run/"+ids[leakRef].String(), "run")
	if got := eval[string](t, b, `document.getElementById("safety").textContent`); !strings.Contains(got, "canary_leak") {
		t.Errorf("the safety findings: %q", got)
	}
	if n := eval[int](t, b, `document.querySelectorAll("#timeline .item.call.has-safety").length`); n != 1 {
		t.Errorf("%d calls highlighted, want 1", n)
	}
	if eval[bool](t, b, fmt.Sprintf(`document.body.textContent.includes(%q)`, canary(t))) {
		t.Errorf("the page shows the canary")
	}

	// The hostile server's markup is text, not elements.
	b.show(t, "#/run/"+ids[hostileRef].String(), "run")
	if n := eval[int](t, b, `document.querySelectorAll("#main img").length`); n != 0 {
		t.Errorf("the hostile tool name made %d img elements", n)
	}
	if got := eval[string](t, b, `document.querySelector("#timeline .item.call .tool").textContent`); !strings.HasPrefix(got, "<img src=x") || !strings.Contains(got, `\u202e`) {
		t.Errorf("the hostile tool name shows as %q", got)
	}
	if got := eval[string](t, b, `document.title`); got != "bench view" {
		t.Errorf("the page's title became %q", got)
	}

	// The replay's miss, explained.
	b.show(t, "#/run/"+ids[replayRef].String(), "run")
	if got := eval[string](t, b, `document.getElementById("miss").textContent`); !strings.Contains(got, "messages[2] (tool result of get_client, call_1) changed") {
		t.Errorf("the miss: %q", got)
	}

	// Two runs ticked in the list, compared.
	b.show(t, "#/runs?server=reference&kind=recorded", "runs")
	for _, ref := range []string{refRun0, refRun3} {
		b.do(t, chromedp.Click(chromedp.CSS(fmt.Sprintf(`input[data-id=%q]`, ids[ref].String()))))
	}
	b.click(t, "#compare", "diff")
	got := eval[int](t, b, `[...document.querySelectorAll("#diff tbody tr")].findIndex((r) => r.id === "first-divergence")`)
	if got != firstDivergence || got < 0 {
		t.Errorf("the first divergence is marked at step %d, scoring.DiffRuns says %d", got, firstDivergence)
	}
	if txt := eval[string](t, b, `document.getElementById("first-divergence").textContent`); !strings.Contains(txt, "429") {
		t.Errorf("the first divergence: %q", txt)
	}
	if head := eval[string](t, b, `document.querySelector("#diff thead").textContent`); strings.Count(head, ", recorded") != 2 {
		t.Errorf("the diff's heads do not say both runs are recorded: %q", head)
	}
	b.screenshot(t, name+"-diff")

	// The scoreboard: the chart drawn, a strip per scenario and server.
	b.click(t, "#nav-board", "board")
	b.waitFor(t, `document.getElementById("board-svg").complete`)
	if w := eval[int](t, b, `document.getElementById("board-svg").naturalWidth`); w == 0 {
		t.Errorf("the chart did not load")
	}
	if n := eval[int](t, b, `document.querySelectorAll("#strips .strip-row").length`); n != 4 {
		t.Errorf("%d strips, want 4", n)
	}
	if n := eval[int](t, b, `document.querySelectorAll("#strips .cell").length`); n != 12 {
		t.Errorf("%d cells in the strips, want 12", n)
	}
	if n := eval[int](t, b, `document.querySelectorAll("#strips .cell.pass").length`); n != 8 {
		t.Errorf("%d passing cells, want 8 (3 of alt's runs, the reference server's 5)", n)
	}
	b.screenshot(t, name+"-board")

	// A cell of a strip opens its run.
	b.click(t, "#strips .cell.fail", "run")
	if got := eval[string](t, b, `document.querySelector("#score .badge").textContent`); got != "task fail" {
		t.Errorf("the failing cell opened a run whose score says %q", got)
	}
}

// TestBrowserLarge opens a 5,000-run store's page and reports its first
// paint, the time until the list is shown, and the page's JavaScript
// heap, then the time to show a 100-turn run (figures, not asserts: the
// machine's load moves them).
func TestBrowserLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the 5,000-run store takes seconds to write")
	}
	b := newBrowser(t)
	v := openView(t, bigStore(t, 5000))
	srv := httptest.NewServer(v.Handler())
	defer srv.Close()
	b.do(t, chromedp.Navigate(srv.URL+"/#/runs"))
	b.waitFor(t, `document.body.dataset.ready === "runs"`)
	if got := eval[string](t, b, `document.getElementById("count").textContent`); got != "runs 1–50 of 5000" {
		t.Errorf("the list: %q", got)
	}
	fcp := eval[float64](t, b, `(performance.getEntriesByName("first-contentful-paint")[0] || {startTime: -1}).startTime`)
	shown := eval[float64](t, b, `window.benchShownAt`)
	heap := eval[float64](t, b, `performance.memory ? performance.memory.usedJSHeapSize : -1`)
	t.Logf("5,000 runs: first contentful paint %.0f ms, list shown %.0f ms, JS heap %.1f MB", fcp, shown, heap/1e6)

	dir := filepath.Join(t.TempDir(), "long")
	s, err := traces.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.PutRun(longRun(100), refRun0)
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	long := httptest.NewServer(openView(t, dir).Handler())
	defer long.Close()
	b.do(t, chromedp.Navigate(long.URL+"/#/runs"))
	b.waitFor(t, `document.body.dataset.ready === "runs"`)
	start := eval[float64](t, b, `performance.now()`)
	b.show(t, "#/run/"+id.String(), "run")
	if n := eval[int](t, b, `document.querySelectorAll("#timeline .item.turn").length`); n != 101 {
		t.Errorf("the 100-turn run shows %d turns, want 101 (and the turn that answers)", n)
	}
	t.Logf("a 100-turn run: shown %.0f ms after it was asked for, JS heap %.1f MB", eval[float64](t, b, `window.benchShownAt`)-start,
		eval[float64](t, b, `performance.memory ? performance.memory.usedJSHeapSize : -1`)/1e6)
	b.noExceptions(t)
}
