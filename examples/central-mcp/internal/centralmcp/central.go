package centralmcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultTokenURL is HPE's SSO token endpoint, the one the real Central
// servers use. Tests reach it through the fake's CONNECT proxy.
const DefaultTokenURL = "https://sso.common.cloud.hpe.com/as/token.oauth2"

// central is a small client for the Central REST API: OAuth2 client
// credentials, a bearer token fetched lazily (no start-up calls) and
// refreshed once on a 401, a read answered 429 retried twice after the
// wait Central asks for, JSON in and out.
type central struct {
	base     string // scheme://host[/prefix], no trailing slash
	tokenURL string
	id       string
	secret   string
	hc       *http.Client

	mu    sync.Mutex
	token string

	// wait sleeps d or until ctx ends (tests replace it: nothing sleeps
	// there).
	wait func(ctx context.Context, d time.Duration) error
}

// maxRetryWait bounds the wait a 429 asks for: a tool call should not
// hang on a quota whose window is an hour.
const maxRetryWait = 10 * time.Second

// retryWait is how long to wait before retrying a read answered 429: the
// Retry-After Central sends (the notifications API documents it), else
// 1 s, then 2 s (the other APIs document only X-RateLimit-Reset, a time
// on Central's clock, not ours). ok is false past the second retry or
// past maxRetryWait.
func retryWait(h http.Header, retry int) (time.Duration, bool) {
	if retry >= 2 {
		return 0, false
	}
	d := time.Second << retry
	if s, err := strconv.Atoi(strings.TrimSpace(h.Get("Retry-After"))); err == nil && s >= 0 {
		d = time.Duration(s) * time.Second
	}
	return d, d <= maxRetryWait
}

// apiError is a non-2xx answer from Central.
type apiError struct {
	Method, Path string
	Status       int
	Message      string
}

func (e *apiError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	return fmt.Sprintf("central %s %s: %d %s", e.Method, e.Path, e.Status, msg)
}

// accessToken returns the cached token, fetching one when there is none or
// when stale is the token that just failed.
func (c *central) accessToken(ctx context.Context, stale string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token != "" && c.token != stale {
		return c.token, nil
	}
	form := url.Values{"grant_type": {"client_credentials"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.tokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", fmt.Errorf("building token request: %w", err)
	}
	req.SetBasicAuth(c.id, c.secret)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("requesting token: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("reading token response: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		// The body may echo what was sent; never put it in an error.
		return "", fmt.Errorf("requesting token: status %d", resp.StatusCode)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(body, &tok); err != nil || tok.AccessToken == "" {
		return "", errors.New("requesting token: response has no access_token")
	}
	c.token = tok.AccessToken
	return c.token, nil
}

// do sends one API request (plus a token refresh and one retry on 401) and
// decodes a JSON answer into out when out is not nil. It returns the
// response headers for callers that need Location.
func (c *central) do(ctx context.Context, method, path string, q url.Values, body, out any) (http.Header, error) {
	var payload []byte
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encoding %s %s body: %w", method, path, err)
		}
		payload = b
	}
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	stale := ""
	retries := 0
	for attempt := 0; ; attempt++ {
		tok, err := c.accessToken(ctx, stale)
		if err != nil {
			return nil, err
		}
		var rd io.Reader
		if payload != nil {
			rd = bytes.NewReader(payload)
		}
		req, err := http.NewRequestWithContext(ctx, method, u, rd)
		if err != nil {
			return nil, fmt.Errorf("building %s %s: %w", method, path, err)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Accept", "application/json")
		if payload != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := c.hc.Do(req)
		if err != nil {
			return nil, fmt.Errorf("calling central %s %s: %w", method, path, err)
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("reading central %s %s: %w", method, path, err)
		}
		if resp.StatusCode == http.StatusUnauthorized && attempt == 0 {
			stale = tok
			continue
		}
		if resp.StatusCode == http.StatusTooManyRequests && method == http.MethodGet {
			if d, ok := retryWait(resp.Header, retries); ok {
				retries++
				wait := c.wait
				if wait == nil {
					wait = sleepCtx
				}
				if err := wait(ctx, d); err != nil {
					return nil, fmt.Errorf("calling central %s %s: waiting out a rate limit: %w", method, path, err)
				}
				continue
			}
		}
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			return nil, &apiError{Method: method, Path: path, Status: resp.StatusCode, Message: errorMessage(data)}
		}
		if out != nil && len(bytes.TrimSpace(data)) > 0 {
			if err := json.Unmarshal(data, out); err != nil {
				return nil, fmt.Errorf("decoding central %s %s: %w", method, path, err)
			}
		}
		return resp.Header, nil
	}
}

// errorMessage pulls the human message out of Central's error envelopes.
func errorMessage(data []byte) string {
	var env struct {
		Message string `json:"message"`
		Detail  string `json:"detail"`
		Error   string `json:"error_description"`
	}
	if json.Unmarshal(data, &env) == nil {
		for _, s := range []string{env.Message, env.Detail, env.Error} {
			if s != "" {
				return s
			}
		}
	}
	return ""
}

// pagingStyle says how an endpoint pages.
type pagingStyle int

const (
	pageByCursor pagingStyle = iota // limit + next (Central's 1-based page cursor)
	pageByOffset                    // limit + offset, exact total
)

// listEndpoint describes a paged Central collection.
type listEndpoint struct {
	path     string
	itemsKey string // "items", or "devices", "policy", ...
	style    pagingStyle
	maxLimit int // the definition's maximum page size
}

// pageRequest is what a tool caller asked for.
type pageRequest struct {
	limit  int    // items wanted in one answer (already bounded)
	cursor string // resume point from an earlier answer ("" = start)
	all    bool   // follow pages to the end
}

// pageResult is a list answer, ready to serialise.
type pageResult struct {
	Items     []map[string]any `json:"items"`
	Total     *int             `json:"total,omitempty"`
	Next      string           `json:"next,omitempty"` // pass back as cursor for more
	Truncated bool             `json:"truncated,omitempty"`
}

// maxPages bounds a follow-to-the-end walk, so a faulty next can never loop
// forever.
const maxPages = 50

// list fetches one page, or every page when pr.all is set. pageSize, when
// positive, overrides the size of each request (the extra-pagination
// regression uses 1).
func (c *central) list(ctx context.Context, ep listEndpoint, q url.Values, pr pageRequest, pageSize int) (*pageResult, error) {
	size := pr.limit
	if pr.all {
		size = ep.maxLimit
	}
	if pageSize > 0 {
		size = pageSize
	}
	if size > ep.maxLimit {
		size = ep.maxLimit
	}
	want := pr.limit
	cursor := pr.cursor
	res := &pageResult{Items: []map[string]any{}}
	for page := 0; ; page++ {
		if page == maxPages {
			res.Truncated = true
			res.Next = cursor
			return res, nil
		}
		pq := url.Values{}
		for k, v := range q {
			pq[k] = v
		}
		pq.Set("limit", strconv.Itoa(size))
		if cursor != "" {
			if ep.style == pageByCursor {
				pq.Set("next", cursor)
			} else {
				pq.Set("offset", cursor)
			}
		} else if ep.style == pageByOffset {
			pq.Set("offset", "0")
		}
		var raw map[string]json.RawMessage
		if _, err := c.do(ctx, http.MethodGet, ep.path, pq, nil, &raw); err != nil {
			return nil, err
		}
		var items []map[string]any
		if b, ok := raw[ep.itemsKey]; ok {
			if err := json.Unmarshal(b, &items); err != nil {
				return nil, fmt.Errorf("decoding %s %q: %w", ep.path, ep.itemsKey, err)
			}
		}
		if b, ok := raw["total"]; ok {
			var t int
			if json.Unmarshal(b, &t) == nil {
				res.Total = &t
			}
		}
		res.Items = append(res.Items, items...)
		cursor = nextCursor(ep.style, raw, cursor, len(items), res.Total)
		if len(items) == 0 {
			cursor = ""
		}
		if cursor == "" {
			res.Next = ""
			return res, nil
		}
		// Without all, one request answers the caller, unless a forced
		// page size means several are needed to fill the limit.
		if !pr.all && (pageSize <= 0 || len(res.Items) >= want) {
			res.Next = cursor
			return res, nil
		}
	}
}

// nextCursor works out where the following page starts, or "" at the end.
func nextCursor(style pagingStyle, raw map[string]json.RawMessage, cur string, n int, total *int) string {
	if style == pageByOffset {
		off, _ := strconv.Atoi(cur)
		off += n
		if total == nil || off >= *total {
			return ""
		}
		return strconv.Itoa(off)
	}
	b, ok := raw["next"]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(b, &s) == nil {
		return s
	}
	var f json.Number
	if json.Unmarshal(b, &f) == nil {
		return f.String()
	}
	return "" // null or anything else ends the walk
}
