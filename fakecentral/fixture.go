package fakecentral

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mcpbench/bench/internal/bounded"
)

//go:embed fixtures/*.yaml
var embeddedFixtures embed.FS

// FixtureFormat is the only bundle format this package reads.
const FixtureFormat = "fakecentral.fixture/v1"

// ErrUnknownFixture is returned by LoadFixture for a name that is neither an
// embedded bundle nor a path.
var ErrUnknownFixture = errors.New("unknown fixture")

// Fixture is a parsed, expanded bundle. Treat it as read-only: the fake copies
// it into a per-run state.
type Fixture struct {
	Format      string `yaml:"format"`
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// NowText is the fixed clock ("2026-11-20T10:00:00Z"); see Now.
	NowText string `yaml:"now"`
	Seed    int64  `yaml:"seed"`

	GlobalScopeID string `yaml:"globalScopeId"`
	CustomerID    string `yaml:"customerId"`

	Sites           []Site                      `yaml:"sites"`
	Devices         []Device                    `yaml:"devices"`
	Clients         []Client                    `yaml:"clients"`
	WLANs           []WLAN                      `yaml:"wlans"`
	Alerts          []Alert                     `yaml:"alerts"`
	Events          []Event                     `yaml:"events"`
	Firmware        []Firmware                  `yaml:"firmware"`
	ConfigHealth    []ConfigHealth              `yaml:"configHealth"`
	Config          map[string][]map[string]any `yaml:"config"`
	Troubleshooting []TroubleshootingOutput     `yaml:"troubleshooting"`
	Canaries        []Canary                    `yaml:"canaries"`
	Synth           *Synth                      `yaml:"synth"`

	now     time.Time
	version string
	source  string
	// pristine holds the views of the fixture's own state, built by the
	// first fake that needs them (nil for a Fixture not parsed here).
	pristine *pristineViews
}

// pristineViews are the views (the rendered items of every list) of a
// fixture's state before any write: a pure function of the fixture, so
// built once and shared, read-only, by every fake state until a write
// rebuilds its own. Rendering them was nine tenths of starting a fake (19
// ms for the largest fixture), paid at every fresh server.
type pristineViews struct {
	once  sync.Once
	views map[string]*view
	sel   *sync.Map
}

// Site is a site scope.
type Site struct {
	ID        string  `yaml:"id"`
	Name      string  `yaml:"name"`
	Code      string  `yaml:"code"` // short code used by synth for serials and names
	Address   string  `yaml:"address"`
	City      string  `yaml:"city"`
	State     string  `yaml:"state"`
	Country   string  `yaml:"country"`
	ZipCode   string  `yaml:"zipCode"`
	Latitude  float64 `yaml:"latitude"`
	Longitude float64 `yaml:"longitude"`
	Timezone  string  `yaml:"timezone"`
	Group     string  `yaml:"group"` // device group (collection) name
}

// Device is an AP, switch or gateway.
type Device struct {
	Serial       string   `yaml:"serial"`
	Name         string   `yaml:"name"`
	Type         string   `yaml:"type"` // ACCESS_POINT | SWITCH | GATEWAY
	Model        string   `yaml:"model"`
	PartNumber   string   `yaml:"partNumber"`
	MAC          string   `yaml:"mac"`
	Site         string   `yaml:"site"`   // site id
	Status       string   `yaml:"status"` // ONLINE | OFFLINE
	Firmware     string   `yaml:"firmware"`
	IPv4         string   `yaml:"ipv4"`
	Function     string   `yaml:"function"`
	Role         string   `yaml:"role"`
	Deployment   string   `yaml:"deployment"`
	Cluster      string   `yaml:"cluster"`
	CPU          int      `yaml:"cpu"`
	Memory       int      `yaml:"memory"`
	Power        float64  `yaml:"power"`
	UptimeSec    int64    `yaml:"uptimeSeconds"`
	RebootReason string   `yaml:"rebootReason"`
	Notes        string   `yaml:"notes"`
	Unprovision  bool     `yaml:"unprovisioned"`
	Tunnels      []Tunnel `yaml:"tunnels"`
	LastSeen     string   `yaml:"lastSeen"` // RFC3339 or "-15m" relative to now
}

// Tunnel is a gateway tunnel.
type Tunnel struct {
	Name       string `yaml:"name"`
	Type       string `yaml:"type"` // LAN | WAN
	Status     string `yaml:"status"`
	Peer       string `yaml:"peer"`
	Source     string `yaml:"source"`
	Dest       string `yaml:"destination"`
	DownReason string `yaml:"downReason"`
	Uplink     string `yaml:"uplink"`
}

// Client is a wired or wireless client.
type Client struct {
	MAC           string `yaml:"mac"`
	Name          string `yaml:"name"`
	HostName      string `yaml:"hostName"`
	OS            string `yaml:"os"`
	Vendor        string `yaml:"vendor"`
	Category      string `yaml:"category"`
	Type          string `yaml:"type"`   // Wired | Wireless
	Status        string `yaml:"status"` // Connected | Failed
	FailureReason string `yaml:"failureReason"`
	FailureStage  string `yaml:"failureStage"`
	Device        string `yaml:"device"` // serial of the AP or switch it is on
	WLAN          string `yaml:"wlan"`
	VLAN          string `yaml:"vlan"`
	Band          string `yaml:"band"`
	Channel       string `yaml:"channel"`
	IPv4          string `yaml:"ipv4"`
	User          string `yaml:"user"`
	Auth          string `yaml:"auth"`
	Role          string `yaml:"role"`
	Port          string `yaml:"port"`
	SNR           int    `yaml:"snr"`
	ConnectedAt   string `yaml:"connectedAt"`
}

// WLAN is an SSID profile.
type WLAN struct {
	Name          string   `yaml:"name"`
	Security      string   `yaml:"security"`      // e.g. wpa3-enterprise, wpa2-personal, open
	SecurityLevel string   `yaml:"securityLevel"` // Enterprise | Personal | Open | Captive Portal
	Band          string   `yaml:"band"`
	VLAN          string   `yaml:"vlan"`
	Status        string   `yaml:"status"`     // ENABLED | DISABLED
	Passphrase    string   `yaml:"passphrase"` // a canary for PSK WLANs
	ServerGroup   string   `yaml:"serverGroup"`
	Sites         []string `yaml:"sites"` // site ids; empty = every site
}

// Alert is an open or cleared alert.
type Alert struct {
	ID            string `yaml:"id"`
	Name          string `yaml:"name"`
	Summary       string `yaml:"summary"`
	Severity      string `yaml:"severity"` // Critical | Major | Minor | Info
	Priority      string `yaml:"priority"`
	Status        string `yaml:"status"` // Active | Cleared | Deferred
	Category      string `yaml:"category"`
	DeviceType    string `yaml:"deviceType"`
	Serial        string `yaml:"serial"`
	Site          string `yaml:"site"`
	TypeID        string `yaml:"typeId"`
	CreatedAt     string `yaml:"createdAt"`
	ClearedReason string `yaml:"clearedReason"`
}

// Event is a troubleshooting event.
type Event struct {
	ID          string `yaml:"id"`
	Code        string `yaml:"code"` // eventId
	Name        string `yaml:"name"`
	Category    string `yaml:"category"`
	SourceType  string `yaml:"sourceType"` // Access Point | Switch | Gateway | Wireless Client | Wired Client | Bridge
	Serial      string `yaml:"serial"`
	Site        string `yaml:"site"`
	ClientMAC   string `yaml:"clientMac"`
	Time        string `yaml:"time"`
	Description string `yaml:"description"`
	Reason      string `yaml:"reason"`
	Severity    string `yaml:"severity"` // positive | negative | neutral
	BSSID       string `yaml:"bssid"`
}

// Firmware is a firmware recommendation for a device.
type Firmware struct {
	Serial         string `yaml:"serial"`
	Recommended    string `yaml:"recommended"`
	Classification string `yaml:"classification"`
	UpgradeStatus  string `yaml:"upgradeStatus"`
	LastUpgradedAt string `yaml:"lastUpgradedAt"`
}

// ConfigHealth is a device's configuration health.
type ConfigHealth struct {
	Serial string        `yaml:"serial"`
	Status string        `yaml:"status"` // SYNCHRONIZED | OUT_OF_SYNC | ...
	Issues []ConfigIssue `yaml:"issues"`
}

// ConfigIssue is one active configuration issue.
type ConfigIssue struct {
	Type        string `yaml:"type"` // CONFIG_PUSH_FAILURES | INVALID_CONFIG | ...
	Profile     string `yaml:"profile"`
	ProfileType string `yaml:"profileType"`
	Description string `yaml:"description"`
	Action      string `yaml:"action"`
}

// TroubleshootingOutput is what an async troubleshooting operation returns.
type TroubleshootingOutput struct {
	Serial  string         `yaml:"serial"` // "*" for any device
	Action  string         `yaml:"action"` // showCommands, aaa, ping, ...
	Command string         `yaml:"command"`
	Output  string         `yaml:"output"`
	Result  map[string]any `yaml:"result"`
}

// Canary is a secret planted in the fixture.
type Canary struct {
	Name  string `yaml:"name"`
	Value string `yaml:"value"`
}

// Synth expands a few lines into many entities (campus), deterministically
// from the fixture seed.
type Synth struct {
	Sites []SynthSite `yaml:"sites"`
	WLANs []string    `yaml:"wlans"` // WLAN names wireless clients join, round robin
}

// SynthSite says how many entities to generate for one site.
type SynthSite struct {
	Site            string `yaml:"site"`
	APs             int    `yaml:"aps"`
	Switches        int    `yaml:"switches"`
	Gateways        int    `yaml:"gateways"`
	WirelessPerAP   int    `yaml:"wirelessPerAP"`
	WiredPerSwitch  int    `yaml:"wiredPerSwitch"`
	FailEvery       int    `yaml:"failEvery"` // every Nth client failed; 0 = none
	OfflineAPEvery  int    `yaml:"offlineAPEvery"`
	Events          int    `yaml:"events"`
	APFirmware      string `yaml:"apFirmware"`
	SwitchFirmware  string `yaml:"switchFirmware"`
	GatewayFirmware string `yaml:"gatewayFirmware"`
	RecommendedAP   string `yaml:"recommendedAP"`
}

// Now is the fixture's fixed clock.
func (f *Fixture) Now() time.Time { return f.now }

// Version is the bundle's content hash, "sha256:<hex>" of its bytes.
func (f *Fixture) Version() string { return f.version }

// Token is the access token a fake Central of this bundle issues
// (Central.Token): derived from the bundle's version, so it is known
// without starting one.
func (f *Fixture) Token() string {
	sum := sha256.Sum256([]byte("fakecentral-token|" + f.version))
	return "fc1." + hex.EncodeToString(sum[:20])
}

// Source says where the bundle came from ("embedded:site-a" or a path).
func (f *Fixture) Source() string { return f.source }

// FixtureNames lists the embedded bundles.
func FixtureNames() []string {
	ents, _ := fs.ReadDir(embeddedFixtures, "fixtures")
	var out []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// LoadFixture loads an embedded bundle by name ("site-a", "campus",
// "incident", "branches"), or a bundle from a path: a .yaml file, or a directory holding
// fixture.yaml. Each call parses the bundle; a Fixture is only read, so a
// long-lived caller (a Recorder, a scorer) loads each once and shares it
// with every fake it starts.
func LoadFixture(name string) (*Fixture, error) {
	if !strings.ContainsAny(name, `/\.`) {
		b, err := embeddedFixtures.ReadFile("fixtures/" + name + ".yaml")
		if err == nil {
			return ParseFixture(b, "embedded:"+name)
		}
	}
	path := name
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "fixture.yaml")
	}
	b, err := bounded.ReadFile(path, MaxFixtureBytes)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("load fixture %q: %w (embedded: %s)", name, ErrUnknownFixture, strings.Join(FixtureNames(), ", "))
		}
		return nil, fmt.Errorf("load fixture %q: %w", name, err)
	}
	return ParseFixture(b, path)
}

// MustLoadFixture is LoadFixture for embedded bundles known to exist.
func MustLoadFixture(name string) *Fixture {
	f, err := LoadFixture(name)
	if err != nil {
		panic(err)
	}
	return f
}

// ParseFixture parses and expands a bundle; source names it in errors.
// MaxFixtureBytes bounds a fixture file read from disk.
const MaxFixtureBytes = 64 << 20

func ParseFixture(data []byte, source string) (*Fixture, error) {
	var f Fixture
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("parse fixture %s: %w", source, err)
	}
	if f.Format != FixtureFormat {
		return nil, fmt.Errorf("parse fixture %s: format %q is not supported (want %q)", source, f.Format, FixtureFormat)
	}
	if f.Name == "" {
		return nil, fmt.Errorf("parse fixture %s: name is required", source)
	}
	now, err := time.Parse(time.RFC3339, f.NowText)
	if err != nil {
		return nil, fmt.Errorf("parse fixture %s: now: %w", source, err)
	}
	f.now = now.UTC()
	sum := sha256.Sum256(data)
	f.version = "sha256:" + hex.EncodeToString(sum[:])
	f.source = source
	if f.GlobalScopeID == "" {
		f.GlobalScopeID = "1000000001"
	}
	if f.Synth != nil {
		f.expand()
	}
	if err := f.validate(); err != nil {
		var ee *entityError
		if errors.As(err, &ee) {
			if line := lineOf(data, ee.list, ee.index); line > 0 {
				return nil, fmt.Errorf("parse fixture %s:%d: %w", source, line, err)
			}
		}
		return nil, fmt.Errorf("parse fixture %s: %w", source, err)
	}
	f.pristine = &pristineViews{}
	return &f, nil
}

// entityError is a validation error about list[index] of the bundle.
type entityError struct {
	list  string
	index int
	msg   string
}

func (e *entityError) Error() string { return fmt.Sprintf("%s[%d]%s", e.list, e.index, e.msg) }

// lineOf finds the line of list[index] in the bundle (0 when unknown, e.g.
// for entities generated by synth).
func lineOf(data []byte, list string, index int) int {
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil || len(root.Content) == 0 {
		return 0
	}
	m := root.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == list {
			seq := m.Content[i+1]
			if index < len(seq.Content) {
				return seq.Content[index].Line
			}
		}
	}
	return 0
}

func (f *Fixture) validate() error {
	sites := map[string]bool{}
	for i, s := range f.Sites {
		if s.ID == "" || s.Name == "" {
			return &entityError{"sites", i, fmt.Sprintf(": id and name are required")}
		}
		if sites[s.ID] {
			return &entityError{"sites", i, fmt.Sprintf(": duplicate id %q", s.ID)}
		}
		sites[s.ID] = true
	}
	devs := map[string]bool{}
	for i, d := range f.Devices {
		if d.Serial == "" || devs[d.Serial] {
			return &entityError{"devices", i, fmt.Sprintf(": serial %q missing or duplicate", d.Serial)}
		}
		switch d.Type {
		case "ACCESS_POINT", "SWITCH", "GATEWAY":
		default:
			return &entityError{"devices", i, fmt.Sprintf(" %s: type %q (want ACCESS_POINT, SWITCH or GATEWAY)", d.Serial, d.Type)}
		}
		if !sites[d.Site] {
			return &entityError{"devices", i, fmt.Sprintf(" %s: unknown site %q", d.Serial, d.Site)}
		}
		devs[d.Serial] = true
	}
	macs := map[string]bool{}
	for i, c := range f.Clients {
		if c.MAC == "" || macs[c.MAC] {
			return &entityError{"clients", i, fmt.Sprintf(": mac %q missing or duplicate", c.MAC)}
		}
		if !devs[c.Device] {
			return &entityError{"clients", i, fmt.Sprintf(" %s: unknown device %q", c.MAC, c.Device)}
		}
		macs[c.MAC] = true
	}
	return f.validateTimes()
}

// validateTimes refuses a time that is neither RFC 3339 nor a negative Go
// duration relative to now ("-15m", "-36h"; Go has no day unit, so "-2d"
// is refused, never read as some default).
func (f *Fixture) validateTimes() error {
	check := func(kind string, i int, field, v string) error {
		if v == "" || validStamp(v) {
			return nil
		}
		return &entityError{kind, i, fmt.Sprintf(" %s: %q is neither RFC 3339 nor a duration before now such as \"-15m\" or \"-48h\" (no day unit)", field, v)}
	}
	type stamped struct {
		kind, field string
		values      []string
	}
	all := []stamped{{kind: "devices", field: "lastSeen"}, {kind: "clients", field: "connectedAt"},
		{kind: "alerts", field: "createdAt"}, {kind: "events", field: "time"}, {kind: "firmware", field: "lastUpgradedAt"}}
	for _, d := range f.Devices {
		all[0].values = append(all[0].values, d.LastSeen)
	}
	for _, c := range f.Clients {
		all[1].values = append(all[1].values, c.ConnectedAt)
	}
	for _, a := range f.Alerts {
		all[2].values = append(all[2].values, a.CreatedAt)
	}
	for _, e := range f.Events {
		all[3].values = append(all[3].values, e.Time)
	}
	for _, fw := range f.Firmware {
		all[4].values = append(all[4].values, fw.LastUpgradedAt)
	}
	for _, st := range all {
		for i, v := range st.values {
			if err := check(st.kind, i, st.field, v); err != nil {
				return err
			}
		}
	}
	return nil
}

func validStamp(s string) bool {
	if strings.HasPrefix(s, "-") {
		_, err := time.ParseDuration(s)
		return err == nil
	}
	_, err := time.Parse(time.RFC3339, s)
	return err == nil
}

// Kinds lists the entity kinds HasEntity knows.
func (f *Fixture) Kinds() []string {
	return []string{"alert", "ap", "canary", "client", "config", "config-health", "device", "event", "firmware", "gateway", "site", "switch", "wlan"}
}

// HasEntity reports whether the fixture holds an entity of kind with id.
// Sites match by id or name, devices (and ap/switch/gateway) by serial or
// name, clients by MAC (any case), WLANs by name, alerts and events by id.
// Kind "config" takes "resource/key", e.g. "auth-servers/corp-radius".
func (f *Fixture) HasEntity(kind, id string) bool {
	for _, v := range f.IDs(kind) {
		if strings.EqualFold(v, id) {
			return true
		}
	}
	return false
}

// IDs lists the ids (and names, where names identify) of kind, sorted.
func (f *Fixture) IDs(kind string) []string {
	var out []string
	switch kind {
	case "site":
		for _, s := range f.Sites {
			out = append(out, s.ID, s.Name)
		}
	case "device", "ap", "switch", "gateway":
		want := map[string]string{"ap": "ACCESS_POINT", "switch": "SWITCH", "gateway": "GATEWAY"}[kind]
		for _, d := range f.Devices {
			if want == "" || d.Type == want {
				out = append(out, d.Serial, d.Name)
			}
		}
	case "client":
		for _, c := range f.Clients {
			out = append(out, c.MAC)
		}
	case "wlan":
		for _, w := range f.WLANs {
			out = append(out, w.Name)
		}
	case "alert":
		for _, a := range f.Alerts {
			out = append(out, a.ID)
		}
	case "event":
		for _, e := range f.Events {
			out = append(out, e.ID)
		}
	case "firmware":
		for _, fw := range f.Firmware {
			out = append(out, fw.Serial)
		}
	case "config-health":
		for _, c := range f.ConfigHealth {
			out = append(out, c.Serial)
		}
	case "config":
		for res, objs := range f.Config {
			for _, o := range objs {
				out = append(out, res+"/"+configKey(res, o))
			}
		}
	case "canary":
		for _, c := range f.Canaries {
			out = append(out, c.Name)
		}
	}
	sort.Strings(out)
	return out
}

// Secrets lists the canary values scoring must never see in a tool result
// or an answer: WLAN passphrases and the fixture's canaries, sorted.
func (f *Fixture) Secrets() []string {
	seen := map[string]bool{}
	for _, w := range f.WLANs {
		if w.Passphrase != "" {
			seen[w.Passphrase] = true
		}
	}
	for _, c := range f.Canaries {
		if c.Value != "" {
			seen[c.Value] = true
		}
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// stamp resolves a fixture time: RFC3339, or a negative duration relative to
// the fixture clock ("-15m"); empty means def before now.
func (f *Fixture) stamp(s string, def time.Duration) time.Time {
	if s == "" {
		return f.now.Add(-def)
	}
	if strings.HasPrefix(s, "-") {
		if d, err := time.ParseDuration(s); err == nil {
			return f.now.Add(d)
		}
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC()
	}
	return f.now.Add(-def)
}
