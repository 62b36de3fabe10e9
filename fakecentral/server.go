package fakecentral

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// SSOHost is the token host the compared servers hard-code.
const SSOHost = "sso.common.cloud.hpe.com"

// Intercepted reports whether the proxy terminates TLS for host (without
// port) and serves the fake: the HPE SSO host and Central's API host names.
func Intercepted(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	return host == SSOHost || strings.HasSuffix(host, ".central.arubanetworks.com") || strings.HasSuffix(host, ".central.arubanetworks.com.cn")
}

// ServerOptions are Start's listening options; the rest is Options.
type ServerOptions struct {
	// Addr is the API listen address. Default "127.0.0.1:0". Only loopback
	// addresses are accepted.
	Addr string
	// ProxyAddr is the CONNECT proxy's listen address. Default "127.0.0.1:0".
	ProxyAddr string
}

// Server is a fake Central listening on 127.0.0.1 with its CONNECT proxy and
// per-run CA. The embedded *Central gives the journal, markers and Reset.
type Server struct {
	*Central

	BaseURL  string // http://127.0.0.1:port, the API root
	TokenURL string // BaseURL + /as/token.oauth2
	ProxyURL string // http://127.0.0.1:port, for HTTPS_PROXY
	CAFile   string // PEM of the per-run CA, in a temp dir the Server owns (RunDirPrefix)

	dir       string
	api       *http.Server
	proxy     *http.Server
	intercept *http.Server
	tunnels   *connListener
	apiAddr   string
	proxyAddr string
	ca        *x509.Certificate
	caKey     *ecdsa.PrivateKey
	certMu    sync.Mutex
	certs     map[string]*tls.Certificate
}

// Start runs a fake Central on 127.0.0.1 (and its proxy) until Close.
func Start(opts *Options) (*Server, error) {
	return StartServer(opts, nil)
}

// StartServer is Start with listening options.
func StartServer(opts *Options, so *ServerOptions) (*Server, error) {
	var lo ServerOptions
	if so != nil {
		lo = *so
	}
	if lo.Addr == "" {
		lo.Addr = "127.0.0.1:0"
	}
	if lo.ProxyAddr == "" {
		lo.ProxyAddr = "127.0.0.1:0"
	}
	for _, a := range []string{lo.Addr, lo.ProxyAddr} {
		if err := checkLoopback(a); err != nil {
			return nil, err
		}
	}
	c := New(opts)
	s := &Server{Central: c, certs: map[string]*tls.Certificate{}}
	dir, err := makeRunDir()
	if err != nil {
		return nil, fmt.Errorf("start fake central: %w", err)
	}
	s.dir = dir
	if err := s.makeCA(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start fake central: create CA: %w", err)
	}
	apiLn, err := net.Listen("tcp", lo.Addr)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start fake central: listen %s: %w", lo.Addr, err)
	}
	proxyLn, err := net.Listen("tcp", lo.ProxyAddr)
	if err != nil {
		apiLn.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start fake central: listen %s: %w", lo.ProxyAddr, err)
	}
	s.BaseURL = "http://" + apiLn.Addr().String()
	s.TokenURL = s.BaseURL + "/as/token.oauth2"
	s.ProxyURL = "http://" + proxyLn.Addr().String()
	s.api = &http.Server{Handler: c, ReadHeaderTimeout: 10 * time.Second, ErrorLog: quietLog()}
	s.proxy = &http.Server{Handler: http.HandlerFunc(s.serveProxy), ReadHeaderTimeout: 10 * time.Second, ErrorLog: quietLog()}
	s.tunnels = newConnListener(proxyLn.Addr())
	s.intercept = &http.Server{Handler: http.HandlerFunc(s.serveIntercepted), ReadHeaderTimeout: 10 * time.Second, ErrorLog: quietLog()}
	s.apiAddr, s.proxyAddr = apiLn.Addr().String(), proxyLn.Addr().String()
	go s.api.Serve(apiLn)
	go s.proxy.Serve(proxyLn)
	go s.intercept.Serve(s.tunnels)
	return s, nil
}

// Addrs are the loopback addresses ("127.0.0.1:port") of the API and of the
// proxy.
func (s *Server) Addrs() (api, proxy string) { return s.apiAddr, s.proxyAddr }

// Serve serves the API and the proxy on two more listeners until Close: a
// sandbox's, opened at the same addresses inside its own network.
func (s *Server) Serve(api, proxy net.Listener) {
	go s.api.Serve(api)
	go s.proxy.Serve(proxy)
}

func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	ip := net.ParseIP(host)
	if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("listen address %q: the fake listens on loopback only (use 127.0.0.1)", addr)
	}
	return nil
}

// Env returns the environment lines for a server under test: proxy settings
// that send HTTPS (and stray HTTP) through the fake's proxy, the CA bundle
// for the usual TLS stacks, NO_PROXY for the loopback base URL, and
// FAKECENTRAL_* values a server profile maps onto its own settings.
func (s *Server) Env() []string {
	return []string{
		"HTTPS_PROXY=" + s.ProxyURL,
		"https_proxy=" + s.ProxyURL,
		"HTTP_PROXY=" + s.ProxyURL,
		"http_proxy=" + s.ProxyURL,
		"NO_PROXY=127.0.0.1,localhost",
		"no_proxy=127.0.0.1,localhost",
		"SSL_CERT_FILE=" + s.CAFile,
		"REQUESTS_CA_BUNDLE=" + s.CAFile,
		"CURL_CA_BUNDLE=" + s.CAFile,
		"NODE_EXTRA_CA_CERTS=" + s.CAFile,
		"FAKECENTRAL_BASE_URL=" + s.BaseURL,
		"FAKECENTRAL_TOKEN_URL=" + s.TokenURL,
		"FAKECENTRAL_TOKEN=" + s.Token(),
		"FAKECENTRAL_FIXTURE_VERSION=" + s.Fixture().Version(),
	}
}

// Close stops the listeners and removes the CA's temp dir.
func (s *Server) Close() error {
	var errs []error
	for _, h := range []*http.Server{s.api, s.proxy, s.intercept} {
		if h != nil {
			errs = append(errs, h.Close())
		}
	}
	if s.tunnels != nil {
		s.tunnels.Close()
	}
	errs = append(errs, os.RemoveAll(s.dir))
	return errors.Join(errs...)
}

func (s *Server) makeCA() error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	notBefore, notAfter := s.certWindow()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "bench fakecentral per-run CA", Organization: []string{"bench"}},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return err
	}
	s.ca, s.caKey = cert, key
	s.CAFile = filepath.Join(s.dir, "ca.pem")
	return os.WriteFile(s.CAFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
}

// leaf returns (and caches) a certificate for host signed by the run's CA.
func (s *Server) leaf(host string) (*tls.Certificate, error) {
	s.certMu.Lock()
	defer s.certMu.Unlock()
	if c, ok := s.certs[host]; ok {
		return c, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	notBefore, notAfter := s.certWindow()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(int64(len(s.certs) + 2)),
		Subject:      pkix.Name{CommonName: host},
		DNSNames:     []string{host},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, s.ca, &key.PublicKey, s.caKey)
	if err != nil {
		return nil, err
	}
	c := &tls.Certificate{Certificate: [][]byte{der, s.ca.Raw}, PrivateKey: key}
	s.certs[host] = c
	return c, nil
}

// serveProxy is the forward proxy: CONNECT to an intercepted host gets a TLS
// tunnel into the fake; anything else is refused and journaled as egress.
func (s *Server) serveProxy(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect {
		host := r.URL.Hostname()
		if r.URL.IsAbs() && Intercepted(host) {
			r.URL.Scheme, r.URL.Host = "", ""
			s.Central.serve(w, r, host)
			return
		}
		s.refuse(w, r.Method, r.Host, r.URL.Path)
		return
	}
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil || !Intercepted(host) || port != "443" {
		s.refuse(w, "CONNECT", r.Host, "")
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "proxy cannot hijack", http.StatusInternalServerError)
		return
	}
	conn, rw, err := hj.Hijack()
	if err != nil {
		return
	}
	if _, err := conn.Write([]byte("HTTP/1.1 200 Connection Established\r\n\r\n")); err != nil {
		conn.Close()
		return
	}
	var raw net.Conn = conn
	if rw != nil && rw.Reader.Buffered() > 0 {
		raw = &bufferedConn{Conn: conn, r: rw.Reader}
	}
	tconn := tls.Server(raw, &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"http/1.1"},
		GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
			name := hello.ServerName
			if name == "" {
				name = host
			}
			return s.leaf(strings.ToLower(name))
		},
	})
	s.tunnels.push(tconn)
}

func (s *Server) refuse(w http.ResponseWriter, method, host, path string) {
	s.Central.record(Entry{Method: method, Host: host, Path: path, Status: http.StatusForbidden, Class: ClassEgress, Egress: true, Source: "proxy"})
	http.Error(w, "fakecentral: egress to "+host+" refused (only HPE SSO and Central API hosts are served)", http.StatusForbidden)
}

// serveIntercepted serves requests arriving through a TLS tunnel.
func (s *Server) serveIntercepted(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	s.Central.serve(w, r, strings.ToLower(host))
}

type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// connListener hands tunnelled connections to an http.Server.
type connListener struct {
	addr net.Addr
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
}

func newConnListener(addr net.Addr) *connListener {
	return &connListener{addr: addr, ch: make(chan net.Conn), done: make(chan struct{})}
}

func (l *connListener) push(c net.Conn) {
	select {
	case l.ch <- c:
	case <-l.done:
		c.Close()
	}
}

func (l *connListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *connListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *connListener) Addr() net.Addr { return l.addr }
