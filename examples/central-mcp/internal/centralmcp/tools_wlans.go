package centralmcp

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sort"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type listWLANsIn struct {
	SiteID       string `json:"site_id,omitempty" jsonschema:"only WLANs of this site id"`
	SerialNumber string `json:"serial_number,omitempty" jsonschema:"only WLANs broadcast by this AP serial number"`
	Limit        int    `json:"limit,omitempty" jsonschema:"WLANs per answer"`
	Cursor       string `json:"cursor,omitempty" jsonschema:"the next value of an earlier answer, to continue"`
	All          bool   `json:"all,omitempty" jsonschema:"true to fetch every page"`
}

type wlanIn struct {
	SSID string `json:"ssid" jsonschema:"the WLAN (SSID profile) name"`
}

type updateWLANIn struct {
	SSID        string `json:"ssid" jsonschema:"the WLAN (SSID profile) name"`
	Enable      *bool  `json:"enable,omitempty" jsonschema:"true to enable the WLAN, false to disable it"`
	HideSSID    *bool  `json:"hide_ssid,omitempty" jsonschema:"true to stop broadcasting the SSID in beacons"`
	VLANName    string `json:"vlan_name,omitempty" jsonschema:"named VLAN to map the WLAN to"`
	RFBand      string `json:"rf_band,omitempty" jsonschema:"radio bands the WLAN is broadcast on"`
	Description string `json:"description,omitempty" jsonschema:"free-text description of the profile"`
}

// registerWLANs adds the WLAN tools: list, configuration profile, update.
func (s *server) registerWLANs(ms *mcp.Server) {
	c := s.central

	addTool(s, ms, toolSpec{
		name: "list_wlans", title: "List WLANs", kind: kindRead,
		desc: "List the WLANs (SSIDs) with their status, security level, bands and VLAN, optionally only those of one site or AP. " +
			"Returns one page (limit) and a next cursor; set all=true to fetch every page.",
		patch: pagingPatch(1000, defaultLimit, nil),
	}, nil, func(ctx context.Context, in listWLANsIn) (any, error) {
		q := url.Values{}
		setIf(q, "site-id", in.SiteID)
		setIf(q, "serial-number", in.SerialNumber)
		res, err := c.list(ctx, epWLANs, q, pageReq(in.Limit, in.Cursor, in.All), s.pageSize())
		if err != nil {
			return nil, err
		}
		return listAnswer(res, in.All, "wlanName", "wlanName", "status", "securityLevel", "security", "band", "vlan"), nil
	})

	addTool(s, ms, toolSpec{
		name: "get_wlan", title: "Get WLAN configuration", kind: kindRead,
		desc: "Get the configuration profile of one WLAN (SSID): ESSID, enabled, security mode (opmode), bands, VLAN, hidden, forwarding mode. Secrets such as the passphrase are never returned.",
	}, nil, func(ctx context.Context, in wlanIn) (any, error) {
		if in.SSID == "" {
			return nil, errors.New("ssid is required")
		}
		var out map[string]any
		if s.inject[InjectWrongEndpoint] {
			if _, err := c.do(ctx, http.MethodGet, "/network-monitoring/v1/wlans/"+url.PathEscape(in.SSID), nil, nil, &out); err != nil {
				return nil, err
			}
			return out, nil
		}
		if _, err := c.do(ctx, http.MethodGet, "/network-config/v1alpha1/wlan-ssids/"+url.PathEscape(in.SSID), nil, nil, &out); err != nil {
			return nil, err
		}
		if list, ok := out["wlan-ssid"].([]any); ok && len(list) > 0 {
			if m, ok := list[0].(map[string]any); ok {
				out = m
			}
		}
		if !s.inject[InjectLeakSecret] {
			redactWLAN(out)
		}
		return out, nil
	})

	addTool(s, ms, toolSpec{
		name: "update_wlan", title: "Update a WLAN", kind: kindWrite,
		desc: "Change a WLAN (SSID) profile: enable or disable it, hide the SSID, map it to a named VLAN, set its radio bands or description. Only the given fields change. Needs writes enabled.",
		patch: func(sc *jsonschema.Schema) {
			enum(sc, "rf_band", "24GHZ", "5GHZ", "6GHZ", "24GHZ_5GHZ", "24GHZ_6GHZ", "5GHZ_6GHZ", "BAND_ALL")
		},
	}, nil, func(ctx context.Context, in updateWLANIn) (any, error) {
		if in.SSID == "" {
			return nil, errors.New("ssid is required")
		}
		body := map[string]any{}
		if in.Enable != nil {
			body["enable"] = *in.Enable
		}
		if in.HideSSID != nil {
			body["hide-ssid"] = *in.HideSSID
		}
		setIfAny(body, "vlan-name", in.VLANName)
		setIfAny(body, "rf-band", in.RFBand)
		setIfAny(body, "description", in.Description)
		if len(body) == 0 {
			return nil, errors.New("nothing to change: give at least one of enable, hide_ssid, vlan_name, rf_band, description")
		}
		if _, err := c.do(ctx, http.MethodPatch, "/network-config/v1alpha1/wlan-ssids/"+url.PathEscape(in.SSID), nil, body, nil); err != nil {
			return nil, err
		}
		changed := make([]string, 0, len(body))
		for k := range body {
			changed = append(changed, k)
		}
		sort.Strings(changed)
		return map[string]any{"status": "updated", "ssid": in.SSID, "changed": changed}, nil
	})
}
