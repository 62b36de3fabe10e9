package centralmcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Central collections the list tools page through, with the page sizes
// and paging styles of the vendor definitions.
var (
	epClients      = listEndpoint{path: "/network-monitoring/v1/clients", itemsKey: "items", style: pageByCursor, maxLimit: 1000}
	epDevices      = listEndpoint{path: "/network-monitoring/v1/device-inventory", itemsKey: "items", style: pageByCursor, maxLimit: 1000}
	epSitesHealth  = listEndpoint{path: "/network-monitoring/v1/sites-health", itemsKey: "items", style: pageByOffset, maxLimit: 1000}
	epWLANs        = listEndpoint{path: "/network-monitoring/v1/wlans", itemsKey: "items", style: pageByCursor, maxLimit: 1000}
	epAlerts       = listEndpoint{path: "/network-notifications/v1/alerts", itemsKey: "items", style: pageByCursor, maxLimit: 100}
	epFirmware     = listEndpoint{path: "/network-services/v1/firmware-details", itemsKey: "items", style: pageByCursor, maxLimit: 1000}
	epConfigHealth = listEndpoint{path: "/network-config/v1alpha1/config-health/devices", itemsKey: "devices", style: pageByOffset, maxLimit: 100}
	epAuthzPolicy  = listEndpoint{path: "/network-config/v1alpha1/authz-policies", itemsKey: "policy", style: pageByOffset, maxLimit: 100}
)

const defaultLimit = 50

func (s *server) pageSize() int {
	if s.inject[InjectExtraPagination] {
		return 1
	}
	return 0
}

func pageReq(limit int, cursor string, all bool) pageRequest {
	if limit <= 0 {
		limit = defaultLimit
	}
	return pageRequest{limit: limit, cursor: cursor, all: all}
}

// odata builds Central's filter expression: eq clauses joined with "and".
type odata []string

func (f *odata) eq(field, value string) {
	if value != "" {
		*f = append(*f, fmt.Sprintf("%s eq '%s'", field, strings.ReplaceAll(value, "'", "''")))
	}
}

func (f *odata) in(field string, values ...string) {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
	}
	*f = append(*f, fmt.Sprintf("%s in (%s)", field, strings.Join(q, ", ")))
}

func (f odata) set(q url.Values) {
	if len(f) > 0 {
		q.Set("filter", strings.Join(f, " and "))
	}
}

// project keeps the named fields of each item, in a stable order, and sorts
// the items by key when sortKey is set.
func project(items []map[string]any, sortKey string, fields ...string) []map[string]any {
	out := make([]map[string]any, 0, len(items))
	for _, it := range items {
		p := make(map[string]any, len(fields))
		for _, f := range fields {
			if v, ok := it[f]; ok && v != nil {
				p[f] = v
			}
		}
		out = append(out, p)
	}
	if sortKey != "" {
		sort.SliceStable(out, func(i, j int) bool {
			return fmt.Sprint(out[i][sortKey]) < fmt.Sprint(out[j][sortKey])
		})
	}
	return out
}

// listAnswer projects a page; a complete walk (all) is sorted by sortKey.
func listAnswer(res *pageResult, all bool, sortKey string, fields ...string) *pageResult {
	if !all {
		sortKey = ""
	}
	res.Items = project(res.Items, sortKey, fields...)
	return res
}

var macHex = regexp.MustCompile(`^[0-9a-f]{12}$`)

// normalMAC accepts aa:bb:cc:dd:ee:ff, AA-BB-..., aabb.ccdd.eeff and returns
// the lower-case colon form Central uses.
func normalMAC(s string) (string, error) {
	h := strings.ToLower(strings.NewReplacer(":", "", "-", "", ".", "").Replace(strings.TrimSpace(s)))
	if !macHex.MatchString(h) {
		return "", fmt.Errorf("%q is not a MAC address", s)
	}
	parts := make([]string, 6)
	for i := range parts {
		parts[i] = h[2*i : 2*i+2]
	}
	return strings.Join(parts, ":"), nil
}

const macPattern = `^([0-9A-Fa-f]{2}[:-]?){5}[0-9A-Fa-f]{2}$`

var (
	deviceTypes   = []string{"ACCESS_POINT", "SWITCH", "GATEWAY"}
	alertStatuses = []string{"Active", "Cleared", "Deferred"}
)

// register adds every tool.
func (s *server) register(ms *mcp.Server) {
	s.registerClients(ms)
	s.registerDevices(ms)
	s.registerWLANs(ms)
	s.registerAlerts(ms)
	s.registerOps(ms)
}

// deviceType returns the given type, or looks the serial up in the
// inventory (one extra call).
func (s *server) deviceType(ctx context.Context, serial, given string) (string, error) {
	if serial == "" {
		return "", errors.New("serial_number is required")
	}
	if given != "" {
		return given, nil
	}
	q := url.Values{}
	var f odata
	f.eq("serialNumber", serial)
	f.set(q)
	res, err := s.central.list(ctx, epDevices, q, pageReq(1, "", false), 0)
	if err != nil {
		return "", err
	}
	if len(res.Items) == 0 {
		return "", fmt.Errorf("no device with serial number %q in the inventory", serial)
	}
	dt, _ := res.Items[0]["deviceType"].(string)
	switch dt {
	case "ACCESS_POINT", "SWITCH", "GATEWAY":
		return dt, nil
	}
	return "", fmt.Errorf("device %s has unsupported type %q", serial, dt)
}

// poll reads an async operation until field is one of the final values, at
// most MaxPolls times; the first read is immediate.
func (s *server) poll(ctx context.Context, p, field string, final ...string) (map[string]any, error) {
	var st map[string]any
	for i := 0; i < s.opts.MaxPolls; i++ {
		if i > 0 {
			if err := s.opts.Sleep(ctx, s.opts.PollInterval); err != nil {
				return nil, err
			}
		}
		st = nil
		if _, err := s.central.do(ctx, http.MethodGet, p, nil, nil, &st); err != nil {
			return nil, err
		}
		v, _ := st[field].(string)
		for _, f := range final {
			if v == f {
				return st, nil
			}
		}
	}
	return nil, fmt.Errorf("operation %s did not finish after %d polls (last %s %v)", p, s.opts.MaxPolls, field, st[field])
}

// taskID is the last path segment of an async operation's location, from
// the body or the Location header.
func taskID(loc string, hdr http.Header) string {
	if loc == "" && hdr != nil {
		loc = hdr.Get("Location")
	}
	if loc == "" {
		return ""
	}
	if u, err := url.Parse(loc); err == nil {
		loc = u.Path
	}
	return path.Base(strings.TrimRight(loc, "/"))
}

// redactWLAN removes key material from a WLAN profile, saying that it is set.
func redactWLAN(w map[string]any) {
	ps, ok := w["personal-security"].(map[string]any)
	if !ok {
		return
	}
	for _, k := range []string{"wpa-passphrase", "wep-key"} {
		if _, ok := ps[k]; ok {
			ps[k] = "(hidden)"
		}
	}
}

func setIf(q url.Values, k, v string) {
	if v != "" {
		q.Set(k, v)
	}
}

func setIfAny(m map[string]any, k, v string) {
	if v != "" {
		m[k] = v
	}
}

func intp(i int) *int { return &i }
