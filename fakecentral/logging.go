package fakecentral

import (
	"io"
	"log"
)

// quietLog keeps net/http's internal messages (TLS handshake errors from
// clients that hang up, aborted handlers) out of the process's stderr.
func quietLog() *log.Logger { return log.New(io.Discard, "", 0) }
