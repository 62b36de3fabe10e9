package llm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
)

// Classify tells a run that never reached a model (no result about the
// server) from one the provider failed transiently and from one whose
// request the provider refused (a result).
func TestClassify(t *testing.T) {
	dial := &url.Error{Op: "Post", URL: "https://api.example/v1", Err: &net.OpError{Op: "dial", Net: "tcp",
		Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	dns := &url.Error{Op: "Post", URL: "https://api.example/v1", Err: &net.OpError{Op: "dial", Net: "tcp",
		Err: &net.DNSError{Err: "no such host", Name: "api.example", IsNotFound: true}}}
	reset := &url.Error{Op: "Post", URL: "https://api.example/v1", Err: &net.OpError{Op: "read", Net: "tcp",
		Err: os.NewSyscallError("read", syscall.ECONNRESET)}}
	for _, c := range []struct {
		err  error
		want ErrorClass
		why  string
	}{
		{NewTransportError("openai: chat completion: connection refused", dial), ClassUnavailable, "nothing listens at the base URL"},
		{NewTransportError("openai: chat completion: no such host", dns), ClassUnavailable, "the provider's name does not resolve (no network)"},
		{NewTransportError("openai: chat completion: connection reset", reset), ClassTransient, "a connection that broke mid-answer may pass"},
		{&APIError{Provider: "openai", StatusCode: 401}, ClassUnavailable, "the key is refused"},
		{&APIError{Provider: "openai", StatusCode: 403}, ClassUnavailable, "the key may not use the model"},
		{&APIError{Provider: "openai", StatusCode: 404}, ClassUnavailable, "no such model, or a wrong base URL"},
		{WithRetries([]Attempt{{Attempt: 1}}, fmt.Errorf("%w (gave up after 4 attempts)", &APIError{Provider: "openai", StatusCode: 429})), ClassTransient, "rate limited past the retries"},
		{&APIError{Provider: "anthropic", StatusCode: 529}, ClassTransient, "overloaded"},
		{&APIError{Provider: "openai", StatusCode: 400}, ClassRefused, "the request itself was refused: about what the run sent"},
		{fmt.Errorf("openai: %w", context.DeadlineExceeded), ClassTransient, "a turn past its timeout"},
		{errors.New("oracle: plan step 2 names no tool of the server"), "", "an offline model's own error is about the run"},
		{nil, "", "no error"},
	} {
		if got := Classify(c.err); got != c.want {
			t.Errorf("Classify(%v) = %q, want %q: %s", c.err, got, c.want, c.why)
		}
	}
}
