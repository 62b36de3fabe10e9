package llm

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"syscall"
)

// ErrorClass says what a failed model call tells about the run it ended:
// whether the run measured the server at all.
type ErrorClass string

// The classes. A model error of no class (an offline model's own error, a
// replay miss) is about the run, as ClassRefused is.
const (
	// ClassUnavailable: no model answered. The provider could not be
	// reached (DNS, connection refused, no route, TLS, proxy) or refused
	// the credentials or the model (HTTP 401, 403, 404). Every run with
	// this model fails the same way until the setup is fixed.
	ClassUnavailable ErrorClass = "unavailable"
	// ClassTransient: the provider failed in a way that may pass: HTTP
	// 408, 409, 429 or 5xx after bench's retries, a connection that broke
	// mid-answer, an answer that does not decode, a request past the
	// request timeout on every attempt ([*TimeoutError]), a call past the
	// turn timeout.
	ClassTransient ErrorClass = "transient"
	// ClassRefused: the provider refused this request (another 4xx: a
	// tool schema it does not accept, a context grown too long with the
	// tool results): an answer about what the run sent.
	ClassRefused ErrorClass = "refused"
)

// Classify returns the class of an error from [Model.Generate], "" when it
// has none of the above.
func Classify(err error) ErrorClass {
	var apiErr *APIError
	var te *TransportError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &apiErr):
		switch apiErr.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
			return ClassUnavailable
		}
		if apiErr.Temporary() {
			return ClassTransient
		}
		if apiErr.StatusCode >= 400 && apiErr.StatusCode < 500 {
			return ClassRefused
		}
		return ClassTransient
	case errors.As(err, &te):
		if te.Unreachable {
			return ClassUnavailable
		}
		return ClassTransient
	case errors.Is(err, context.DeadlineExceeded):
		return ClassTransient
	}
	return ""
}

// TransportError is a model call that got no HTTP answer, or an answer cut
// short. Its message has been redacted of the API key; it keeps no error of
// the HTTP client (whose messages may carry the URL and its key).
type TransportError struct {
	Message string
	// Unreachable: the connection was never made (DNS, refused, no route,
	// TLS, proxy).
	Unreachable bool
}

func (e *TransportError) Error() string { return e.Message }

// NewTransportError returns a TransportError of err with message msg (the
// caller's words, already redacted), saying whether err means that the
// provider could not be reached.
func NewTransportError(msg string, err error) *TransportError {
	return &TransportError{Message: msg, Unreachable: unreachable(err)}
}

func unreachable(err error) bool {
	var dns *net.DNSError
	var op *net.OpError
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	var header tls.RecordHeaderError
	switch {
	case errors.As(err, &dns), errors.As(err, &unknownCA), errors.As(err, &hostname), errors.As(err, &invalid),
		errors.As(err, &verify), errors.As(err, &header):
		return true
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return true
	case errors.As(err, &op):
		return op.Op == "dial" || op.Op == "proxyconnect"
	}
	return false
}
