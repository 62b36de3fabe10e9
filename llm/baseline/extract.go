package baseline

import (
	"encoding/json"
	"net"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// facts are the values found in the intent.
type facts struct {
	macs, ips, serials, quoted []string
	numbers                    []int64
	names                      map[string]string // "site", "wlan": a name written next to the word
	span                       *timeSpan
	lower                      string // the intent, lower case
}

type timeSpan struct{ start, end time.Time }

var (
	macRe    = regexp.MustCompile(`(?i)\b[0-9a-f]{2}([:-])[0-9a-f]{2}(?:[:-][0-9a-f]{2}){4}\b|\b[0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4}\b`)
	ipRe     = regexp.MustCompile(`\b\d{1,3}(?:\.\d{1,3}){3}\b`)
	serialRe = regexp.MustCompile(`\b[A-Z0-9]{8,14}\b`)
	quoteRe  = regexp.MustCompile(`"([^"]+)"|'([^']+)'|“([^”]+)”|‘([^’]+)’`)
	numberRe = regexp.MustCompile(`\b\d+\b`)
	lastNRe  = regexp.MustCompile(`(?i)\b(?:last|past|previous)\s+(\d+)\s+(minute|hour|day|week|month)s?\b`)
	// A name is a run of letters, digits and -_. written right after or
	// right before one of the words.
	afterRe  = regexp.MustCompile(`(?i)\b(site|wlan|ssid|network|group)\s+(?:named\s+|called\s+)?([A-Za-z0-9][A-Za-z0-9_.\-]*)`)
	beforeRe = regexp.MustCompile(`(?i)\b([A-Za-z0-9][A-Za-z0-9_.\-]*)\s+(site|wlan|ssid|network|group)\b`)
)

// intentFacts finds the values the intent states. now resolves relative
// dates; the zero time leaves them unresolved.
func intentFacts(intent string, now time.Time) facts {
	f := facts{names: map[string]string{}, lower: strings.ToLower(intent)}
	rest := intent
	take := func(re *regexp.Regexp, keep func(string) bool) []string {
		var out []string
		for _, m := range re.FindAllString(rest, -1) {
			if keep == nil || keep(m) {
				out = append(out, m)
				rest = strings.Replace(rest, m, " ", 1)
			}
		}
		return out
	}
	for _, m := range quoteRe.FindAllStringSubmatch(intent, -1) {
		for _, g := range m[1:] {
			if g != "" {
				f.quoted = append(f.quoted, g)
			}
		}
	}
	f.macs = take(macRe, nil)
	f.ips = take(ipRe, func(s string) bool { return net.ParseIP(s) != nil })
	f.serials = take(serialRe, func(s string) bool {
		return strings.ContainsAny(s, "0123456789") && strings.ContainsAny(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
	})
	if !now.IsZero() {
		f.span = relativeSpan(f.lower, now)
	}
	if f.span != nil {
		rest = lastNRe.ReplaceAllString(rest, " ")
	}
	for _, n := range numberRe.FindAllString(rest, -1) {
		if v, err := strconv.ParseInt(n, 10, 64); err == nil {
			f.numbers = append(f.numbers, v)
		}
	}
	for _, m := range afterRe.FindAllStringSubmatch(intent, -1) {
		if kind := nameKind(m[1]); f.names[kind] == "" && looksLikeName(m[2]) {
			f.names[kind] = m[2]
		}
	}
	for _, m := range beforeRe.FindAllStringSubmatch(intent, -1) {
		if kind := nameKind(m[2]); f.names[kind] == "" && looksLikeName(m[1]) {
			f.names[kind] = m[1]
		}
	}
	return f
}

func nameKind(word string) string {
	switch strings.ToLower(word) {
	case "wlan", "ssid", "network":
		return "wlan"
	}
	return strings.ToLower(word)
}

// looksLikeName accepts "HQ", "Branch-12", "corp_wifi", and refuses plain
// lower-case words such as "the" or "which".
func looksLikeName(s string) bool {
	if stopwords[strings.ToLower(s)] {
		return false
	}
	return strings.ContainsAny(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
}

// relativeSpan resolves the first relative date of the intent against now
// (UTC days).
func relativeSpan(lower string, now time.Time) *timeSpan {
	now = now.UTC()
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	if m := lastNRe.FindStringSubmatch(lower); m != nil {
		n, _ := strconv.Atoi(m[1])
		var d time.Duration
		switch m[2] {
		case "minute":
			d = time.Minute
		case "hour":
			d = time.Hour
		case "day":
			d = 24 * time.Hour
		case "week":
			d = 7 * 24 * time.Hour
		case "month":
			return &timeSpan{now.AddDate(0, -n, 0), now}
		}
		return &timeSpan{now.Add(-time.Duration(n) * d), now}
	}
	switch {
	case strings.Contains(lower, "yesterday"):
		return &timeSpan{day.AddDate(0, 0, -1), day}
	case strings.Contains(lower, "today"):
		return &timeSpan{day, now}
	case strings.Contains(lower, "last 24 hours"), strings.Contains(lower, "past day"), strings.Contains(lower, "last day"):
		return &timeSpan{now.Add(-24 * time.Hour), now}
	case strings.Contains(lower, "last week"), strings.Contains(lower, "past week"), strings.Contains(lower, "this week"):
		return &timeSpan{now.AddDate(0, 0, -7), now}
	case strings.Contains(lower, "last month"), strings.Contains(lower, "past month"):
		return &timeSpan{now.AddDate(0, -1, 0), now}
	case strings.Contains(lower, "last hour"), strings.Contains(lower, "past hour"):
		return &timeSpan{now.Add(-time.Hour), now}
	}
	return nil
}

// formatTime writes t the way the schema asks: a date, epoch seconds or
// milliseconds for numbers, RFC 3339 otherwise.
func formatTime(t time.Time, p property) any {
	switch p.schema.typ() {
	case "integer", "number":
		if strings.Contains(strings.ToLower(p.name+" "+p.schema.Description), "ms") ||
			strings.Contains(strings.ToLower(p.schema.Description), "millisecond") {
			return t.UnixMilli()
		}
		return t.Unix()
	}
	if p.schema.Format == "date" {
		return t.Format(time.DateOnly)
	}
	return t.Format(time.RFC3339)
}

// field is one scalar or array found in a tool result, with the key it sat
// under.
type field struct {
	key   string // normalised: lower case, no '_' or '-'
	value any
}

// resultFields flattens tool outputs into fields, depth first, object keys
// sorted, so the order is deterministic. Non-JSON output yields nothing.
func resultFields(outputs []string) []field {
	var out []field
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(normKey(k), x[k])
			}
		case []any:
			if key != "" {
				out = append(out, field{key, x})
			}
			for _, e := range x {
				walk(key, e)
			}
		default:
			if key != "" {
				out = append(out, field{key, x})
			}
		}
	}
	for _, o := range outputs {
		if v, ok := parseJSON(o); ok {
			walk("", v)
		}
	}
	return out
}

func parseJSON(s string) (any, bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	return v, true
}

var keyNoise = strings.NewReplacer("_", "", "-", "", " ", "")

func normKey(k string) string {
	return keyNoise.Replace(strings.ToLower(k))
}

// lookup finds the first field whose key matches name: equal once
// normalised, or one ending with the other ("site" matches "site_name"
// only through the word list below, "device_serial" matches "serial").
func lookup(fields []field, name string, wantArray bool) (any, bool) {
	n := normKey(name)
	match := func(k string) bool {
		if k == n {
			return true
		}
		for _, alias := range aliases[n] {
			if k == alias {
				return true
			}
		}
		return len(n) >= 3 && len(k) >= 3 && (strings.HasSuffix(k, n) || strings.HasSuffix(n, k))
	}
	for pass := 0; pass < 2; pass++ {
		for _, f := range fields {
			if _, isArr := f.value.([]any); isArr != wantArray {
				continue
			}
			if (pass == 0 && f.key == n) || (pass == 1 && match(f.key)) {
				return f.value, true
			}
		}
	}
	return nil, false
}

// aliases are the few spellings of the same thing that Central APIs use.
var aliases = map[string][]string{
	"site":         {"sitename", "siteid"},
	"sitename":     {"site"},
	"wlan":         {"wlanname", "ssid", "essid"},
	"wlanname":     {"wlan", "ssid", "essid"},
	"ssid":         {"wlan", "wlanname", "essid"},
	"serial":       {"serialnumber", "deviceserial", "apserial"},
	"serialnumber": {"serial"},
	"mac":          {"macaddress", "clientmac"},
	"macaddress":   {"mac"},
	"ip":           {"ipaddress", "ipv4"},
	"ipaddress":    {"ip"},
	"count":        {"total"},
	"total":        {"count"},
}

// stringOf renders a scalar for a string parameter.
func stringOf(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, x != ""
	case json.Number:
		return x.String(), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}

// mentions reports whether the lower-case intent names the enum value v,
// as a word ("critical") or with '_' read as a space ("in_progress").
func mentions(lower, v string) bool {
	v = strings.ToLower(v)
	if v == "" {
		return false
	}
	for _, cand := range []string{v, strings.ReplaceAll(v, "_", " "), strings.ReplaceAll(v, "-", " ")} {
		if containsWord(lower, cand) {
			return true
		}
	}
	return false
}

// containsWord reports whether s contains w between word boundaries: what
// regexp `\b` + QuoteMeta(w) + `\b` matches (ASCII word characters), without
// compiling a pattern per value.
func containsWord(s, w string) bool {
	if w == "" {
		return false
	}
	isWord := func(i int) bool {
		if i < 0 || i >= len(s) {
			return false
		}
		c := s[i]
		return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
	}
	for off := 0; off <= len(s)-len(w); {
		i := strings.Index(s[off:], w)
		if i < 0 {
			return false
		}
		i += off
		j := i + len(w)
		if isWord(i-1) != isWord(i) && isWord(j-1) != isWord(j) {
			return true
		}
		off = i + 1
	}
	return false
}

func sortFields(fs []field) {
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].key < fs[j].key })
}

// query is the intent as BM25 sees it: its words, plus the kind of each
// identifier it contains ("mac" for a MAC address, "serial", "ip"), since an
// identifier itself never matches a tool description but its kind does
// match parameter names.
func (f facts) query(intent string) string {
	var b strings.Builder
	b.WriteString(intent)
	for _, k := range []struct {
		word string
		n    int
	}{{"mac", len(f.macs)}, {"serial", len(f.serials)}, {"ip", len(f.ips)}} {
		if k.n > 0 {
			b.WriteString(" " + k.word)
		}
	}
	return b.String()
}
