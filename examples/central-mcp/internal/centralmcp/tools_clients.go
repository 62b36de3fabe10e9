package centralmcp

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type listClientsIn struct {
	SiteID         string `json:"site_id,omitempty" jsonschema:"only clients of this site id"`
	SerialNumber   string `json:"serial_number,omitempty" jsonschema:"only clients connected to this device (AP, switch or gateway serial number)"`
	Status         string `json:"status,omitempty" jsonschema:"client status; Central returns Connected clients unless told otherwise"`
	ConnectionType string `json:"connection_type,omitempty" jsonschema:"Wired or Wireless"`
	WLANName       string `json:"wlan_name,omitempty" jsonschema:"only clients on this WLAN (SSID)"`
	VLANID         string `json:"vlan_id,omitempty" jsonschema:"only clients in this VLAN"`
	Limit          int    `json:"limit,omitempty" jsonschema:"clients per answer"`
	Cursor         string `json:"cursor,omitempty" jsonschema:"the next value of an earlier answer, to continue"`
	All            bool   `json:"all,omitempty" jsonschema:"true to fetch every page (can be large)"`
}

var clientFields = []string{"macAddress", "clientName", "hostName", "ipv4", "userName", "status",
	"clientConnectionType", "wlanName", "vlanId", "role", "connectedDeviceSerial", "connectedTo",
	"siteId", "siteName", "wirelessBand"}

type findClientIn struct {
	Query string `json:"query" jsonschema:"text to look for in the client's MAC, name, host name, IP address or user name"`
}

type clientIn struct {
	MAC string `json:"mac" jsonschema:"the client's MAC address"`
}

type disconnectIn struct {
	MAC      string `json:"mac" jsonschema:"the wireless client's MAC address"`
	APSerial string `json:"ap_serial,omitempty" jsonschema:"serial number of the AP the client is on; looked up when omitted"`
}

// registerClients adds the client tools: list, find, details, disconnect.
func (s *server) registerClients(ms *mcp.Server) {
	c := s.central

	addTool(s, ms, toolSpec{
		name: "list_clients", title: "List clients", kind: kindRead,
		desc: "List the wired and wireless clients Central sees, optionally only those of one site, device, WLAN, VLAN, status or connection type. " +
			"Returns one page (limit) and a next cursor; set all=true to fetch every page.",
		patch: pagingPatch(1000, defaultLimit, func(sc *jsonschema.Schema) {
			enum(sc, "status", "Connected", "Failed")
			enum(sc, "connection_type", "Wired", "Wireless")
		}),
	}, nil, func(ctx context.Context, in listClientsIn) (any, error) {
		q := url.Values{}
		setIf(q, "site-id", in.SiteID)
		setIf(q, "serial-number", in.SerialNumber)
		var f odata
		f.eq("status", in.Status)
		f.eq("clientConnectionType", in.ConnectionType)
		f.eq("wlanName", in.WLANName)
		f.eq("vlanId", in.VLANID)
		f.set(q)
		res, err := c.list(ctx, epClients, q, pageReq(in.Limit, in.Cursor, in.All), s.pageSize())
		if err != nil {
			return nil, err
		}
		return listAnswer(res, in.All, "macAddress", clientFields...), nil
	})

	addTool(s, ms, toolSpec{
		name: "find_client", title: "Find a client", kind: kindRead,
		desc: "Find clients (connected or failed) whose MAC address, name, host name, IP address or user name contains the given text. " +
			"Use it when you know something about a client but not its MAC.",
		patch: func(sc *jsonschema.Schema) { prop(sc, "query").MinLength = intp(2) },
	}, nil, func(ctx context.Context, in findClientIn) (any, error) {
		q := url.Values{}
		var f odata
		f.in("status", "Connected", "Failed")
		f.set(q)
		res, err := c.list(ctx, epClients, q, pageReq(0, "", true), s.pageSize())
		if err != nil {
			return nil, err
		}
		needle := strings.ToLower(strings.TrimSpace(in.Query))
		var hits []map[string]any
		for _, it := range res.Items {
			for _, k := range []string{"macAddress", "clientName", "hostName", "ipv4", "ipv6", "userName"} {
				if v, ok := it[k].(string); ok && strings.Contains(strings.ToLower(v), needle) {
					hits = append(hits, it)
					break
				}
			}
		}
		return map[string]any{"items": project(hits, "macAddress", clientFields...), "count": len(hits)}, nil
	})

	addTool(s, ms, toolSpec{
		name: "get_client", title: "Get client details", kind: kindRead,
		desc:  "Get everything Central knows about one client by MAC address: connection, device and port or AP, WLAN, VLAN, role, IP, OS, authentication and status.",
		patch: func(sc *jsonschema.Schema) { pattern(sc, "mac", macPattern) },
	}, nil, func(ctx context.Context, in clientIn) (any, error) {
		mac, err := normalMAC(in.MAC)
		if err != nil {
			return nil, err
		}
		var out map[string]any
		if _, err := c.do(ctx, http.MethodGet, "/network-monitoring/v1/clients/"+url.PathEscape(mac), nil, nil, &out); err != nil {
			return nil, err
		}
		return out, nil
	})

	addTool(s, ms, toolSpec{
		name: "disconnect_client", title: "Disconnect a wireless client", kind: kindDestructive,
		desc: "Disconnect (deauthenticate) one wireless client from its access point. The client may reconnect on its own. " +
			"Needs writes enabled and the user's confirmation.",
		patch: func(sc *jsonschema.Schema) { pattern(sc, "mac", macPattern) },
	}, func(in disconnectIn) string {
		return fmt.Sprintf("Disconnect wireless client %s from its access point?", in.MAC)
	}, func(ctx context.Context, in disconnectIn) (any, error) {
		mac, err := normalMAC(in.MAC)
		if err != nil {
			return nil, err
		}
		ap := in.APSerial
		if ap == "" {
			var cl struct {
				Type   string `json:"clientConnectionType"`
				Serial string `json:"connectedDeviceSerial"`
			}
			if _, err := c.do(ctx, http.MethodGet, "/network-monitoring/v1/clients/"+url.PathEscape(mac), nil, nil, &cl); err != nil {
				return nil, err
			}
			if strings.EqualFold(cl.Type, "Wired") {
				return nil, fmt.Errorf("client %s is wired; only wireless clients can be disconnected", mac)
			}
			if cl.Serial == "" {
				return nil, fmt.Errorf("client %s is not connected to an access point", mac)
			}
			ap = cl.Serial
		}
		var out map[string]any
		p := "/network-troubleshooting/v1/aps/" + url.PathEscape(ap) + "/disconnectUserByMacAddress"
		if _, err := c.do(ctx, http.MethodPost, p, nil, map[string]string{"userMacAddress": mac}, &out); err != nil {
			return nil, err
		}
		return map[string]any{"mac": mac, "ap_serial": ap, "result": out}, nil
	})
}
