package fakecentral

import (
	"io"
	"time"
)

// Options configure a fake Central. A nil *Options means the defaults; every
// field documents its default, and withDefaults fills them in one place.
type Options struct {
	// Fixture is the bundle served. Default: the embedded "site-a".
	Fixture *Fixture

	// ClientID and ClientSecret are the credentials the token endpoints
	// accept. Default: empty, which accepts any non-empty client id (the
	// compared servers are configured with dummy credentials).
	ClientID, ClientSecret string

	// TokenTTL is the expires_in of issued tokens. Default 7199 s.
	TokenTTL time.Duration

	// Force401 makes the next N authenticated API requests (after reset)
	// answer 401 even with a valid token, to exercise a client's refresh
	// path. Default 0.
	Force401 int

	// AsyncPolls is how many polls of an async operation answer RUNNING
	// before COMPLETED. Default 0: COMPLETED on the first poll, so clients
	// that sleep between polls never sleep.
	AsyncPolls int

	// Faults are injected per run; SetFaults replaces them. Default none.
	Faults []Fault
	// PageSize caps the items of every list page, whatever limit a
	// request asks (0: the documented limits); the envelope's next,
	// offset and total say there is more, as on a tenant whose lists are
	// longer than a page. Scenarios set it with page_size.
	PageSize int

	// ClassOverrides reclassify routes for a scenario, keyed by route pattern
	// ("POST /network-troubleshooting/v1/aps/{serial-number}/disconnectUserByMacAddress"
	// or a glob ending in "*"). Default none.
	ClassOverrides map[string]Class

	// NoCatalog turns off the catalog fallback: unmodelled documented routes
	// then answer 404. Default false (catalog on).
	NoCatalog bool

	// Now is the wall clock used only for journal time offsets and
	// latencies (never for responses). Default time.Now.
	Now func() time.Time

	// JournalLimit caps the journal of one run; requests beyond it are
	// counted (JournalDropped) but not kept. Default 50,000 (a scenario run
	// makes hundreds; the cap bounds memory under load tests).
	JournalLimit int
	// CaptureBodies keeps each request's and response's body in its journal
	// entry, for the recorder's traces. Off by default (memory under load).
	CaptureBodies bool
	// MaxCapturedBytes bounds the bodies CaptureBodies keeps in one run:
	// past it, entries are journaled without them (Entry.BodiesDropped), so
	// that a server hammering the fake costs bench no more. Default 8 MiB
	// (a scenario run keeps well under 1 MiB).
	MaxCapturedBytes int64

	// Log, if set, receives one line per request. Default nil (silent).
	Log io.Writer
}

// FaultKind names an injected failure.
type FaultKind string

// Fault kinds.
const (
	Fault429   FaultKind = "429"   // Too Many Requests; RetryAfter > 0 adds the header
	Fault500   FaultKind = "500"   // Internal Server Error with Central's envelope
	FaultDelay FaultKind = "delay" // serve normally after Delay
	FaultDrop  FaultKind = "drop"  // close the connection without a response
)

// Fault injects a failure into requests matching Route: a pattern like
// "GET /network-monitoring/v1/clients" with {param} segments, or a glob
// ending in "*" ("* /network-monitoring/*" matches any method).
type Fault struct {
	Route      string        `json:"route" yaml:"route"`
	Kind       FaultKind     `json:"kind" yaml:"kind"`
	RetryAfter int           `json:"retry_after,omitempty" yaml:"retry_after,omitempty"` // seconds, 429 only
	Delay      time.Duration `json:"delay,omitempty" yaml:"delay,omitempty"`             // FaultDelay only
	Times      int           `json:"times,omitempty" yaml:"times,omitempty"`             // 0 = every matching request
	After      int           `json:"after,omitempty" yaml:"after,omitempty"`             // matching requests let through first
	// ResetAfter, with Fault429 and After, is the rate-limit window: once
	// After calls spent the limit, it holds until ResetAfter has passed
	// on Options.Now's clock, then After more calls are let through. A
	// 429 then says when (X-RateLimit-Reset, and Retry-After on the
	// notifications API) by the fixture's clock. 0: the limit, once
	// spent, stays spent for the run (its hourly window outlasts it).
	// With After 0 the limit is spent when the run begins and the reset
	// lifts it.
	ResetAfter time.Duration `json:"reset_after,omitempty" yaml:"reset_after,omitempty"`
}

func (o *Options) withDefaults() Options {
	var out Options
	if o != nil {
		out = *o
	}
	if out.TokenTTL == 0 {
		out.TokenTTL = 7199 * time.Second
	}
	if out.JournalLimit <= 0 {
		out.JournalLimit = 50_000
	}
	if out.MaxCapturedBytes <= 0 {
		out.MaxCapturedBytes = 8 << 20
	}
	if out.Now == nil {
		out.Now = time.Now
	}
	return out
}
