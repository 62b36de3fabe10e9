package view

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/mcpbench/bench/scoring"
	"github.com/mcpbench/bench/traces"
)

//go:embed assets
var assets embed.FS

// bundleCSP is the policy a bundle's page carries: opened from disk, it
// may load only its own files.
const bundleCSP = `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:">`

// page writes the page; bundle says it is a bundle's (its data in
// data/*.js beside it): its policy takes the place of the page's
// <!--bundle-csp--> and its body is marked data-bundle. The page is filled
// by replacement, not by html/template: executing a template makes the
// linker keep every exported method of every type in the binary (text/template
// may call any by name), which made bench 23 MB larger.
func page(w io.Writer, bundle bool) error {
	b, err := assets.ReadFile("assets/index.html")
	if err != nil {
		return err
	}
	csp, body := "", "<body>"
	if bundle {
		csp, body = bundleCSP, `<body data-bundle="1">`
	}
	s := strings.Replace(string(b), "<!--bundle-csp-->", csp, 1)
	s = strings.Replace(s, "<body>", body, 1)
	_, err = io.WriteString(w, s)
	return err
}

// Diff compares two runs (run IDs or refs) step by step, the first
// divergence marked (scoring.DiffRuns).
func (v *View) Diff(a, b string) (*scoring.RunDiff, error) {
	ix := v.cur()
	var runs [2]*traces.Run
	for i, s := range []string{a, b} {
		id, _, err := ix.lookup(s)
		if err != nil {
			return nil, err
		}
		if runs[i], err = ix.store.GetRun(id); err != nil {
			return nil, err
		}
	}
	d := scoring.DiffRuns(runs[0], runs[1])
	d.Scenario, d.A, d.B = line(d.Scenario), line(d.A)+", "+modeWord(runs[0]), line(d.B)+", "+modeWord(runs[1])
	for _, p := range d.Steps {
		for _, st := range []*scoring.RunStep{p.A, p.B} {
			if st != nil {
				st.Text = line(st.Text)
			}
		}
	}
	v.maskAll(d)
	return d, nil
}

// modeWord says how a run was produced, as the page says it.
func modeWord(r *traces.Run) string {
	if r.Manifest.Mode == traces.ModeReplay {
		return "replayed"
	}
	return "recorded"
}

// Handler serves the page and its JSON API:
//
//	GET /                  the page
//	GET /api/runs          a page of the run list: server, model, scenario, suite, outcome, kind, offset, limit; reload=1 reopens the store first
//	GET /api/run?id=X      a run's timeline (a run ID or a ref)
//	GET /api/diff?a=X&b=Y  two runs compared step by step
//	GET /api/board         the scoreboard of the recorded runs
//
// It answers only requests whose Host is a loopback address or localhost,
// so that a page of another site cannot reach it through a name that
// resolves to 127.0.0.1 (DNS rebinding).
func (v *View) Handler() http.Handler {
	mux := http.NewServeMux()
	static := http.FileServerFS(mustSub(assets, "assets"))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		page(w, false)
	})
	mux.Handle("GET /app.js", static)
	mux.Handle("GET /app.css", static)
	mux.HandleFunc("GET /api/runs", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("reload") == "1" {
			if err := v.Reload(); err != nil {
				writeJSON(w, nil, err)
				return
			}
		}
		off, _ := strconv.Atoi(q.Get("offset"))
		lim, _ := strconv.Atoi(q.Get("limit"))
		writeJSON(w, v.List(Query{Server: q.Get("server"), Model: q.Get("model"), Scenario: q.Get("scenario"),
			Suite: q.Get("suite"), Outcome: q.Get("outcome"), Kind: q.Get("kind"), Offset: off, Limit: lim}), nil)
	})
	mux.HandleFunc("GET /api/run", func(w http.ResponseWriter, r *http.Request) {
		t, err := v.Timeline(r.URL.Query().Get("id"))
		writeJSON(w, t, err)
	})
	mux.HandleFunc("GET /api/diff", func(w http.ResponseWriter, r *http.Request) {
		d, err := v.Diff(r.URL.Query().Get("a"), r.URL.Query().Get("b"))
		writeJSON(w, d, err)
	})
	mux.HandleFunc("GET /api/board", func(w http.ResponseWriter, r *http.Request) {
		b, err := v.Board(Query{})
		writeJSON(w, b, err)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host) {
			http.Error(w, "bench view answers on loopback only (Host "+strconv.Quote(r.Host)+")", http.StatusForbidden)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		mux.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, v any, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if err != nil {
		w.WriteHeader(http.StatusNotFound)
		json.NewEncoder(w).Encode(map[string]string{"error": line(err.Error())})
		return
	}
	json.NewEncoder(w).Encode(v)
}

// Serve serves the page on lis until ctx is done (nil then) or serving
// fails.
func (v *View) Serve(ctx context.Context, lis net.Listener) error {
	srv := &http.Server{Handler: v.Handler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		srv.Close()
		<-done
		return nil
	}
}

// Listen listens on addr (host:port), which must be a loopback address
// or localhost: the page shows what servers said, to anyone who can reach
// it.
func Listen(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--addr %q: want HOST:PORT, such as 127.0.0.1:0", addr)
	}
	if !loopbackName(host) {
		return nil, fmt.Errorf("--addr %q: bench view serves on a loopback address only (127.0.0.1, ::1 or localhost), not %q", addr, host)
	}
	if host == "localhost" {
		addr = net.JoinHostPort("127.0.0.1", addr[strings.LastIndex(addr, ":")+1:])
	}
	return net.Listen("tcp", addr)
}

func loopbackName(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.IsLoopback()
}

func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return loopbackName(host)
}

func mustSub(fsys embed.FS, dir string) fs.FS {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		panic(err)
	}
	return sub
}
