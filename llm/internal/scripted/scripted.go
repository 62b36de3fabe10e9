// Package scripted is a scripted HTTP server for testing the live
// providers against their wire protocols: each request gets the next reply
// and is kept for inspection.
package scripted

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/mcpbench/bench/traces"
)

// Reply is one scripted answer.
type Reply struct {
	Status int
	Header map[string]string
	Body   string
	// Hang answers nothing: the request is held until the client gives up
	// on it (its context ends, the connection closes), as a provider that
	// hangs does.
	Hang bool
}

// Request is what the server saw.
type Request struct {
	Path   string
	Header http.Header
	Body   map[string]any
	// Raw is the body exactly as the client sent it, for tests that compare
	// the wire byte for byte (a number sent as a string shows here, not in
	// Body's float64s).
	Raw []byte
}

// Server answers requests with its replies in order.
type Server struct {
	URL     string
	t       testing.TB
	mu      sync.Mutex
	replies []Reply
	got     []Request
}

// Start starts a server that is closed when the test ends.
func Start(t testing.TB, replies ...Reply) *Server {
	s := &Server{t: t, replies: replies}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	s.URL = hs.URL
	return s
}

// Requests returns the requests seen so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.got...)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rep, ok := s.next(r)
	if !ok {
		w.WriteHeader(http.StatusTeapot)
		return
	}
	if rep.Hang {
		<-r.Context().Done()
		return
	}
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rep.Status)
	io.WriteString(w, rep.Body)
}

// next keeps r and returns the reply it gets.
func (s *Server) next(r *http.Request) (Reply, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil {
		s.t.Errorf("request body is not JSON: %v", err)
	}
	s.got = append(s.got, Request{Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Raw: b})
	if len(s.replies) == 0 {
		s.t.Errorf("unexpected request %d to %s", len(s.got), r.URL.Path)
		return Reply{}, false
	}
	rep := s.replies[0]
	s.replies = s.replies[1:]
	return rep, true
}

// SameWire fails t unless the body the client sent equals want, both
// compared in canonical form (the trace store's): member order and number
// spelling aside, byte for byte, so a number sent as a string shows.
func SameWire(t testing.TB, want string, got []byte) {
	t.Helper()
	w, err := traces.Canonical([]byte(want))
	if err != nil {
		t.Fatal(err)
	}
	g, err := traces.Canonical(got)
	if err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, got)
	}
	if string(w) != string(g) {
		t.Errorf("wire body differs from what bench meant to send\nwant %s\n got %s", w, g)
	}
}
