package fakecentral

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func startServer(t *testing.T, opts *Options) *Server {
	t.Helper()
	s, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// proxiedClient is an HTTP client configured the way a server under test is
// by Env: every HTTPS request through the proxy, trusting only the run's CA.
func proxiedClient(t *testing.T, s *Server) *http.Client {
	t.Helper()
	pem, err := os.ReadFile(s.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatal("CA file holds no certificate")
	}
	pu, _ := url.Parse(s.ProxyURL)
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		Proxy:           http.ProxyURL(pu),
		TLSClientConfig: &tls.Config{RootCAs: pool},
	}}
}

func TestProxyEndToEnd(t *testing.T) {
	s := startServer(t, nil)
	hc := proxiedClient(t, s)

	// Token from the hard-coded SSO host name, Basic auth, as pycentral does.
	req, _ := http.NewRequest("POST", "https://"+SSOHost+"/as/token.oauth2", strings.NewReader("grant_type=client_credentials"))
	req.SetBasicAuth("bench-client", "bench-secret")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("token through proxy: %v", err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		ExpiresIn   int    `json:"expires_in"`
	}
	json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if resp.StatusCode != 200 || tok.AccessToken != s.Token() || tok.TokenType != "Bearer" || tok.ExpiresIn == 0 {
		t.Fatalf("token answer: %d %+v", resp.StatusCode, tok)
	}

	// API calls on a Central host name and on the plain loopback base URL.
	for _, base := range []string{"https://us5.api.central.arubanetworks.com", s.BaseURL} {
		req, _ = http.NewRequest("GET", base+"/network-monitoring/v1/clients/aa:bb:cc:11:22:33", nil)
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		client := hc
		if strings.HasPrefix(base, "http://") {
			client = http.DefaultClient
		}
		resp, err = client.Do(req)
		if err != nil {
			t.Fatalf("GET via %s: %v", base, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), `"macAddress":"aa:bb:cc:11:22:33"`) {
			t.Fatalf("GET client via %s: %d %s", base, resp.StatusCode, b)
		}
	}

	// Any other host is refused and journaled as egress.
	if resp, err := hc.Get("https://api.openai.com/v1/models"); err == nil {
		resp.Body.Close()
		t.Fatalf("egress to api.openai.com was not refused: %d", resp.StatusCode)
	}
	if resp, err := hc.Get("http://example.com/"); err == nil {
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("plain HTTP egress: status %d, want 403", resp.StatusCode)
		}
		resp.Body.Close()
	}
	var egress []string
	for _, e := range s.Journal() {
		if e.Egress {
			egress = append(egress, e.Method+" "+e.Host)
			if e.Class != ClassEgress || e.Status != 403 {
				t.Errorf("egress entry %+v", e)
			}
		}
	}
	if len(egress) != 2 || egress[0] != "CONNECT api.openai.com:443" || egress[1] != "GET example.com" {
		t.Fatalf("egress entries = %q", egress)
	}
	j := s.Journal()
	if j[0].Host != SSOHost || j[0].Class != ClassAuth || j[1].Host != "us5.api.central.arubanetworks.com" {
		t.Fatalf("journal hosts: %+v %+v", j[0], j[1])
	}
}

// TestPythonStdlibThroughProxy fetches a token the way the compared servers'
// Python HTTP stacks do: urllib with HTTPS_PROXY and SSL_CERT_FILE from the
// environment (ssl.create_default_context reads SSL_CERT_FILE through
// OpenSSL's default verify paths).
func TestPythonStdlibThroughProxy(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found on PATH: skipping the Python stdlib proxy check")
	}
	s := startServer(t, nil)
	script := `
import base64, json, os, ssl, sys, urllib.request, urllib.error
ctx = ssl.create_default_context()
opener = urllib.request.build_opener(urllib.request.ProxyHandler(), urllib.request.HTTPSHandler(context=ctx))
req = urllib.request.Request("https://sso.common.cloud.hpe.com/as/token.oauth2", data=b"grant_type=client_credentials", method="POST")
req.add_header("Authorization", "Basic " + base64.b64encode(b"id:secret").decode())
req.add_header("Content-Type", "application/x-www-form-urlencoded")
tok = json.load(opener.open(req, timeout=10))["access_token"]
req = urllib.request.Request("https://de1.api.central.arubanetworks.com/network-monitoring/v1/sites-health?limit=1")
req.add_header("Authorization", "Bearer " + tok)
body = json.load(opener.open(req, timeout=10))
try:
    opener.open("https://pypi.org/simple/", timeout=10)
    print("EGRESS-NOT-REFUSED")
except (urllib.error.URLError, OSError):
    pass
print(tok, body["total"])
`
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-c", script)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, s.Env()...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	got := strings.TrimSpace(string(out))
	if got != s.Token()+" 1" {
		t.Fatalf("python3 printed %q, want %q", got, s.Token()+" 1")
	}
	var refused bool
	for _, e := range s.Journal() {
		if e.Egress && e.Host == "pypi.org:443" {
			refused = true
		}
	}
	if !refused {
		t.Fatal("egress to pypi.org was not journaled")
	}
}
