package testbin

import "net"

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
