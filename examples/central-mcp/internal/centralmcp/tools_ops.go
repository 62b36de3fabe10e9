package centralmcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type firmwareIn struct {
	SerialNumber  string `json:"serial_number,omitempty" jsonschema:"only this device"`
	DeviceType    string `json:"device_type,omitempty" jsonschema:"only devices of this type"`
	SiteID        string `json:"site_id,omitempty" jsonschema:"only devices of this site id"`
	UpgradeStatus string `json:"upgrade_status,omitempty" jsonschema:"only devices in this upgrade status, e.g. Up To Date"`
	Limit         int    `json:"limit,omitempty" jsonschema:"devices per answer"`
	Cursor        string `json:"cursor,omitempty" jsonschema:"the next value of an earlier answer, to continue"`
	All           bool   `json:"all,omitempty" jsonschema:"true to fetch every page"`
}

var firmwareFields = []string{"serialNumber", "deviceName", "deviceType", "siteName", "firmwareVersion",
	"recommendedVersion", "upgradeStatus", "firmwareClassification"}

type configHealthIn struct {
	Serial       string `json:"serial,omitempty" jsonschema:"a device serial number: returns that device's active configuration issues"`
	ConfigStatus string `json:"config_status,omitempty" jsonschema:"only devices in this configuration status"`
	Limit        int    `json:"limit,omitempty" jsonschema:"devices per answer"`
	Cursor       string `json:"cursor,omitempty" jsonschema:"the next value of an earlier answer, to continue"`
	All          bool   `json:"all,omitempty" jsonschema:"true to fetch every page"`
}

var configHealthFields = []string{"serial", "name", "type", "model", "siteName", "deviceGroupName",
	"configStatus", "activeIssues", "topPriorityIssue", "recommendedAction"}

// ---- troubleshooting, NAC ----

type showIn struct {
	SerialNumber string   `json:"serial_number" jsonschema:"serial number of the device to run the commands on"`
	DeviceType   string   `json:"device_type,omitempty" jsonschema:"the device type; looked up in the inventory when omitted"`
	Commands     []string `json:"commands" jsonschema:"show commands to run, e.g. show version"`
}

type nacPolicyIn struct {
	Name     string `json:"name,omitempty" jsonschema:"the policy name, or part of it; all policies when omitted"`
	PolicyID string `json:"policy_id,omitempty" jsonschema:"the policy id, when known"`
}

// registerOps adds the operations tools: firmware, configuration health, show commands, NAC policy.
func (s *server) registerOps(ms *mcp.Server) {
	c := s.central

	addTool(s, ms, toolSpec{
		name: "get_firmware_status", title: "Get firmware status", kind: kindRead,
		desc: "Get the firmware of devices: current version, recommended version, upgrade status (e.g. Up To Date) and classification, optionally for one device, type, site or upgrade status. " +
			"Returns one page (limit) and a next cursor; set all=true to fetch every page.",
		patch: pagingPatch(1000, defaultLimit, func(sc *jsonschema.Schema) { enum(sc, "device_type", deviceTypes...) }),
	}, nil, func(ctx context.Context, in firmwareIn) (any, error) {
		q := url.Values{}
		var f odata
		f.eq("serialNumber", in.SerialNumber)
		f.eq("deviceType", in.DeviceType)
		f.eq("siteId", in.SiteID)
		f.eq("upgradeStatus", in.UpgradeStatus)
		f.set(q)
		res, err := c.list(ctx, epFirmware, q, pageReq(in.Limit, in.Cursor, in.All), s.pageSize())
		if err != nil {
			return nil, err
		}
		return listAnswer(res, in.All, "serialNumber", firmwareFields...), nil
	})

	addTool(s, ms, toolSpec{
		name: "get_config_health", title: "Get configuration health and compliance", kind: kindRead,
		desc: "Check configuration compliance: list devices with their configuration status (synchronized, out of sync), active issues and recommended action; " +
			"or, with serial, the active configuration issues of one device (push and pull failures, invalid or filtered config).",
		patch: pagingPatch(100, defaultLimit, func(sc *jsonschema.Schema) {
			enum(sc, "config_status", "SYNCHRONIZED", "OUT_OF_SYNC", "UPDATE_IN_PROGRESS", "SYNC_WITH_LIMITATIONS", "UNKNOWN")
		}),
	}, nil, func(ctx context.Context, in configHealthIn) (any, error) {
		if in.Serial != "" {
			var out map[string]any
			q := url.Values{"serial": {in.Serial}}
			if _, err := c.do(ctx, http.MethodGet, "/network-config/v1alpha1/config-health/active-issue", q, nil, &out); err != nil {
				return nil, err
			}
			out["serial"] = in.Serial
			return out, nil
		}
		q := url.Values{}
		var f odata
		f.eq("configStatus", in.ConfigStatus)
		f.set(q)
		res, err := c.list(ctx, epConfigHealth, q, pageReq(in.Limit, in.Cursor, in.All), s.pageSize())
		if err != nil {
			return nil, err
		}
		return listAnswer(res, in.All, "serial", configHealthFields...), nil
	})

	addTool(s, ms, toolSpec{
		name: "run_show_command", title: "Run show commands", kind: kindDiagnostic,
		desc: "Run one or more CLI show commands (e.g. show version, show interfaces) on an access point, switch or gateway through Central's troubleshooting API, wait for the result and return each command's output.",
		patch: func(sc *jsonschema.Schema) {
			enum(sc, "device_type", deviceTypes...)
			itemsRange(sc, "commands", 1, 10)
			prop(sc, "commands").Items.Pattern = `^show\s`
		},
	}, nil, func(ctx context.Context, in showIn) (any, error) {
		if len(in.Commands) == 0 {
			return nil, errors.New("commands is required")
		}
		dt, err := s.deviceType(ctx, in.SerialNumber, in.DeviceType)
		if err != nil {
			return nil, err
		}
		seg := map[string]string{"ACCESS_POINT": "aps", "SWITCH": "cx", "GATEWAY": "gateways"}[dt]
		base := "/network-troubleshooting/v1/" + seg + "/" + url.PathEscape(in.SerialNumber) + "/showCommands"
		var acc struct {
			Location string `json:"location"`
		}
		hdr, err := c.do(ctx, http.MethodPost, base, nil, map[string]any{"commands": in.Commands}, &acc)
		if err != nil {
			return nil, err
		}
		task := taskID(acc.Location, hdr)
		if task == "" {
			return nil, errors.New("central accepted the show commands but gave no task location")
		}
		st, err := s.poll(ctx, base+"/async-operations/"+url.PathEscape(task), "status", "COMPLETED", "FAILED")
		if err != nil {
			return nil, err
		}
		out := map[string]any{"serial_number": in.SerialNumber, "status": st["status"]}
		if o, ok := st["output"].(map[string]any); ok {
			out["results"] = o["results"]
		}
		if r, ok := st["failReason"]; ok && r != nil {
			out["fail_reason"] = r
		}
		return out, nil
	})

	addTool(s, ms, toolSpec{
		name: "get_nac_policy", title: "Look up NAC authorization policies", kind: kindRead,
		desc: "Look up Central NAC authorization policies by name or id: their rules, conditions and enforcement profiles (which role or VLAN a matching user or device gets).",
	}, nil, func(ctx context.Context, in nacPolicyIn) (any, error) {
		if in.PolicyID != "" {
			var out map[string]any
			if _, err := c.do(ctx, http.MethodGet, "/network-config/v1alpha1/authz-policies/"+url.PathEscape(in.PolicyID), nil, nil, &out); err != nil {
				return nil, err
			}
			return out, nil
		}
		res, err := c.list(ctx, epAuthzPolicy, url.Values{}, pageReq(0, "", true), s.pageSize())
		if err != nil {
			return nil, err
		}
		needle := strings.ToLower(strings.TrimSpace(in.Name))
		var hits []map[string]any
		for _, p := range res.Items {
			if n, _ := p["name"].(string); needle == "" || strings.Contains(strings.ToLower(n), needle) {
				hits = append(hits, p)
			}
		}
		sort.SliceStable(hits, func(i, j int) bool { return fmt.Sprint(hits[i]["name"]) < fmt.Sprint(hits[j]["name"]) })
		if hits == nil {
			hits = []map[string]any{}
		}
		return map[string]any{"policies": hits, "count": len(hits)}, nil
	})
}
