package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// RetryPolicy is bench's own bounded retry of a live model call. The zero
// value is usable: [RetryPolicy.Do] fills the defaults documented on each
// field.
type RetryPolicy struct {
	// MaxAttempts bounds the number of calls, the first included.
	// Default 4. 1 disables retries.
	MaxAttempts int
	// BaseDelay is the wait after the first failure; it doubles after each
	// further failure. Default 1s.
	BaseDelay time.Duration
	// MaxDelay caps the backoff. A Retry-After longer than MaxDelay is not
	// shortened: the call fails instead, saying what the server asked for.
	// Default 60s.
	MaxDelay time.Duration
	// Sleep waits d or until ctx is done. Default: a timer. Tests inject a
	// function that records d and returns at once.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now reads the clock, used only for a Retry-After given as an HTTP
	// date. Default time.Now.
	Now func() time.Time
	// OnRetry, if set, is called for each failed attempt before waiting.
	OnRetry func(Attempt)
	// AttemptTimeout bounds each attempt: one HTTP request of a provider,
	// its answer read whole. An attempt past it fails with a
	// [*TimeoutError], which is retried like a temporary API error (the
	// provider hung; it may answer the next request). Zero: no bound but
	// ctx's.
	AttemptTimeout time.Duration
	// Provider names the provider in the errors Do makes itself (an
	// attempt past AttemptTimeout). The providers set it.
	Provider string
}

// Attempt describes one failed call that was retried.
type Attempt struct {
	Attempt    int           `json:"attempt"` // 1-based
	StatusCode int           `json:"status_code,omitempty"`
	Error      string        `json:"error"` // redacted
	Wait       time.Duration `json:"wait_ns"`
	RetryAfter time.Duration `json:"retry_after_ns,omitempty"`
}

// APIError is an HTTP error answer of a provider. Its message has been
// redacted of the API key.
type APIError struct {
	Provider   string
	StatusCode int
	Message    string
	// RetryAfter is what the server asked for in Retry-After or
	// retry-after-ms, zero if nothing.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("%s: HTTP %d", e.Provider, e.StatusCode)
	if t := http.StatusText(e.StatusCode); t != "" {
		s += " " + t
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// TimeoutError is an attempt that got no whole answer within the retry
// policy's AttemptTimeout (the request timeout). It is transient: it
// unwraps to context.DeadlineExceeded.
type TimeoutError struct {
	Provider string
	Timeout  time.Duration
}

func (e *TimeoutError) Error() string {
	s := fmt.Sprintf("no answer within the request timeout (%s)", e.Timeout)
	if e.Provider != "" {
		s = e.Provider + ": " + s
	}
	return s
}

func (e *TimeoutError) Unwrap() error { return context.DeadlineExceeded }

// Temporary reports whether the call may succeed if repeated: 408, 409,
// 429 and 5xx.
func (e *APIError) Temporary() bool {
	switch {
	case e.StatusCode == http.StatusRequestTimeout, e.StatusCode == http.StatusConflict,
		e.StatusCode == http.StatusTooManyRequests, e.StatusCode >= 500:
		return true
	}
	return false
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 4
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = time.Second
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 60 * time.Second
	}
	if p.Sleep == nil {
		p.Sleep = sleep
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	return p
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Do calls call until it succeeds, fails with an error that is neither a
// temporary [*APIError] nor an attempt past AttemptTimeout, or the
// attempts run out. Each call gets a context bounded by AttemptTimeout. It
// returns the failed attempts that were retried. A final error is wrapped
// so that [RetriesOf] returns the same list.
func (p RetryPolicy) Do(ctx context.Context, call func(context.Context) error) ([]Attempt, error) {
	p = p.withDefaults()
	var attempts []Attempt
	backoff := p.BaseDelay
	for n := 1; ; n++ {
		err := p.attempt(ctx, call)
		if err == nil {
			return attempts, nil
		}
		var apiErr *APIError
		isAPI := errors.As(err, &apiErr)
		var timeout *TimeoutError
		retryable := isAPI && apiErr.Temporary() || errors.As(err, &timeout)
		if !retryable || n >= p.MaxAttempts || ctx.Err() != nil {
			switch {
			case n > 1 && retryable:
				err = fmt.Errorf("%w (gave up after %d attempts)", err, n)
			case n > 1:
				err = fmt.Errorf("%w (after %d attempts)", err, n)
			}
			return attempts, WithRetries(attempts, err)
		}
		wait := min(backoff, p.MaxDelay)
		a := Attempt{Attempt: n, Error: err.Error()}
		if isAPI {
			a.StatusCode, a.RetryAfter = apiErr.StatusCode, apiErr.RetryAfter
			if apiErr.RetryAfter > 0 {
				if apiErr.RetryAfter > p.MaxDelay {
					err = fmt.Errorf("server asked to retry after %s, more than the %s limit: %w", apiErr.RetryAfter, p.MaxDelay, err)
					return attempts, WithRetries(attempts, err)
				}
				wait = apiErr.RetryAfter
			}
		}
		a.Wait = wait
		attempts = append(attempts, a)
		if p.OnRetry != nil {
			p.OnRetry(a)
		}
		if err := p.Sleep(ctx, wait); err != nil {
			return attempts, WithRetries(attempts, err)
		}
		backoff *= 2
	}
}

// attempt makes one call, bounded by AttemptTimeout: a call that fails
// once that bound passed, and not ctx's, failed for want of an answer in
// time, whatever its error says.
func (p RetryPolicy) attempt(ctx context.Context, call func(context.Context) error) error {
	if p.AttemptTimeout <= 0 {
		return call(ctx)
	}
	actx, cancel := context.WithTimeout(ctx, p.AttemptTimeout)
	defer cancel()
	err := call(actx)
	if err != nil && ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
		return &TimeoutError{Provider: p.Provider, Timeout: p.AttemptTimeout}
	}
	return err
}

// ParseRetryAfter reads how long a server asked to wait: the
// "retry-after-ms" header (OpenAI), else "Retry-After" in seconds or as an
// HTTP date relative to now. Zero if absent or unreadable.
func ParseRetryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

type retriedError struct {
	attempts []Attempt
	err      error
}

func (e *retriedError) Error() string { return e.err.Error() }
func (e *retriedError) Unwrap() error { return e.err }

// WithRetries attaches attempts to err so that [RetriesOf] finds them; it
// returns err unchanged when there are none.
func WithRetries(attempts []Attempt, err error) error {
	if len(attempts) == 0 {
		return err
	}
	return &retriedError{attempts: attempts, err: err}
}

// RetriesOf returns the retried attempts that preceded a failed Generate.
func RetriesOf(err error) []Attempt {
	var r *retriedError
	if errors.As(err, &r) {
		return r.attempts
	}
	return nil
}

// Redact replaces every occurrence of each non-empty secret in s with
// "[REDACTED]". Secrets shorter than 4 bytes are ignored: they would redact
// ordinary words and cannot be secrets worth the name.
func Redact(s string, secrets ...string) string {
	for _, sec := range secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "[REDACTED]")
		}
	}
	return s
}

// Truncate shortens s to at most n bytes, marking the cut, for error
// messages that quote a response body.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) { // never cut a character in two
		n--
	}
	return s[:n] + "…"
}
