package main

import (
	"fmt"
	"net"
	"time"
)

// checkLoopback makes sure a connection to 127.0.0.1 goes through before a
// batch starts: the fake Central listens there, and a server that cannot
// reach it would fail every run (each one a tool error, then a replay miss),
// which reads as a server regression. A loopback that does not work is a
// setup failure (exit 4), with the system's reason in full.
func checkLoopback() error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return setupErr(fmt.Errorf("the loopback interface does not work (the fake Central listens on 127.0.0.1): %w", err))
	}
	defer l.Close()
	// The kernel completes the connection into the listener's backlog: no
	// accept is needed to see it go through.
	c, err := net.DialTimeout("tcp", l.Addr().String(), 5*time.Second)
	if err != nil {
		return setupErr(fmt.Errorf("the loopback interface does not work (the fake Central listens on 127.0.0.1, and the server under test must reach it): %w", err))
	}
	return c.Close()
}
