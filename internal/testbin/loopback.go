package testbin

import (
	"net"

	"github.com/mcpbench/bench/fakecentral"
)

// ServeLoopback listens on a free loopback port of the machine and answers
// every connection with an HTTP 200 whose body is body, until stop: a
// target a sandboxed server must not reach. It returns "127.0.0.1:port".
func ServeLoopback(body string) (addr string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + body))
			c.Close()
		}
	}()
	return ln.Addr().String(), func() { ln.Close() }, nil
}

// EscapeTargets are the places a sandboxed server must not reach, started
// until stop: a loopback port of the machine (ServeLoopback), another
// run's fake Central (its API address), and an outside address that is
// never routed (TEST-NET-1).
func EscapeTargets() (targets []string, stop func(), err error) {
	other, err := fakecentral.Start(&fakecentral.Options{})
	if err != nil {
		return nil, nil, err
	}
	loop, stopLoop, err := ServeLoopback("the machine's loopback")
	if err != nil {
		other.Close()
		return nil, nil, err
	}
	api, _ := other.Addrs()
	return []string{loop, api, "192.0.2.1:443"}, func() { stopLoop(); other.Close() }, nil
}
