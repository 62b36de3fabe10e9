package recorder

import (
	"cmp"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// runPlaces builds the replacer that puts the name of each value that
// differs from run to run (the fake Central's addresses, whose ports the
// kernel picks, its CA file in a fresh temporary directory, the server's
// own {port}) where a tool result quotes it: "{central_url}" for
// http://127.0.0.1:41873, as a profile's templates name them. A server
// that echoes its configuration, or an error message that quotes the URL
// it failed to reach, would otherwise give every run of the same behaviour
// another result, and so another request key: its replays would be stale
// and its run IDs differ. What the model is shown is the replaced text too:
// the fake's port says nothing about the server under test.
func runPlaces(v Vars) *runValues {
	type place struct{ value, name string }
	var places []place
	add := func(value, name string) {
		if value != "" {
			places = append(places, place{value, name})
		}
	}
	add(v.TokenURL, "{token_url}")
	add(v.CentralURL, "{central_url}")
	add(v.ProxyURL, "{proxy_url}")
	add(v.CAFile, "{ca_file}")
	if v.CAFile != "" {
		add(filepath.Dir(v.CAFile), "{ca_dir}")
	}
	for _, u := range []struct{ url, name string }{{v.CentralURL, "{central_host}"}, {v.ProxyURL, "{proxy_host}"}} {
		if p, err := url.Parse(u.url); err == nil && p.Host != "" {
			add(p.Host, u.name)
		}
	}
	if v.Port > 0 {
		add("127.0.0.1:"+strconv.Itoa(v.Port), "{server_host}")
	}
	// Longest first: a value that holds another (the token URL holds the
	// base URL) is replaced whole.
	slices.SortStableFunc(places, func(a, b place) int { return cmp.Compare(len(b.value), len(a.value)) })
	var pairs []string
	for _, p := range places {
		pairs = append(pairs, p.value, p.name)
	}
	return &runValues{strings.NewReplacer(pairs...)}
}

// runValues replaces the per-run values runPlaces found, and the names of
// the shared memory libfaketime before 0.9.12 makes per process (it tells
// the server's children in FAKETIME_SHARED, which a server that echoes its
// environment shows).
type runValues struct{ places *strings.Replacer }

var faketimeShared = regexp.MustCompile(`/faketime_(sem|shm)_[0-9]+`)

// Replace returns s with every per-run value named.
func (r *runValues) Replace(s string) string {
	s = r.places.Replace(s)
	if strings.Contains(s, "/faketime_") {
		s = faketimeShared.ReplaceAllString(s, "/faketime_${1}_{pid}")
	}
	return s
}
