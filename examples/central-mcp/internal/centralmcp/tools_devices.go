package centralmcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type listDevicesIn struct {
	DeviceType string `json:"device_type,omitempty" jsonschema:"only devices of this type"`
	SiteID     string `json:"site_id,omitempty" jsonschema:"only devices of this site id"`
	SiteName   string `json:"site_name,omitempty" jsonschema:"only devices of this site name"`
	Model      string `json:"model,omitempty" jsonschema:"only devices of this model"`
	DeviceName string `json:"device_name,omitempty" jsonschema:"only the device with this name"`
	Limit      int    `json:"limit,omitempty" jsonschema:"devices per answer"`
	Cursor     string `json:"cursor,omitempty" jsonschema:"the next value of an earlier answer, to continue"`
	All        bool   `json:"all,omitempty" jsonschema:"true to fetch every page (can be large)"`
}

var deviceFields = []string{"serialNumber", "deviceName", "deviceType", "model", "status", "siteId",
	"siteName", "ipv4", "macAddress", "firmwareVersion", "deviceFunction"}

type deviceIn struct {
	SerialNumber string `json:"serial_number" jsonschema:"the device serial number"`
	DeviceType   string `json:"device_type,omitempty" jsonschema:"the device type; looked up in the inventory when omitted"`
}

// ---- sites ----

type listSitesIn struct {
	SiteName string `json:"site_name,omitempty" jsonschema:"only the site with this name"`
	Limit    int    `json:"limit,omitempty" jsonschema:"sites per answer"`
	Cursor   string `json:"cursor,omitempty" jsonschema:"the next value of an earlier answer, to continue"`
	All      bool   `json:"all,omitempty" jsonschema:"true to fetch every page"`
}

type siteIn struct {
	SiteID   string `json:"site_id,omitempty" jsonschema:"the site id (preferred)"`
	SiteName string `json:"site_name,omitempty" jsonschema:"the site name, when the id is not known"`
}

// registerDevices adds the device and site tools: inventory, device health, site health.
func (s *server) registerDevices(ms *mcp.Server) {
	c := s.central

	addTool(s, ms, toolSpec{
		name: "list_devices", title: "List devices", kind: kindRead,
		desc: "List network devices (access points, switches, gateways) in the inventory with their status, site, model, IP and firmware, optionally filtered. " +
			"Returns one page (limit) and a next cursor; set all=true to fetch every page.",
		patch: pagingPatch(1000, defaultLimit, func(sc *jsonschema.Schema) { enum(sc, "device_type", deviceTypes...) }),
	}, nil, func(ctx context.Context, in listDevicesIn) (any, error) {
		q := url.Values{}
		var f odata
		f.eq("deviceType", in.DeviceType)
		f.eq("siteId", in.SiteID)
		f.eq("siteName", in.SiteName)
		f.eq("model", in.Model)
		f.eq("deviceName", in.DeviceName)
		f.set(q)
		res, err := c.list(ctx, epDevices, q, pageReq(in.Limit, in.Cursor, in.All), s.pageSize())
		if err != nil {
			return nil, err
		}
		return listAnswer(res, in.All, "serialNumber", deviceFields...), nil
	})

	addTool(s, ms, toolSpec{
		name: "get_device_health", title: "Get device health", kind: kindRead,
		desc:  "Get the monitoring details and health of one access point, switch or gateway by serial number: status, uptime, CPU and memory utilisation, radios or ports.",
		patch: func(sc *jsonschema.Schema) { enum(sc, "device_type", deviceTypes...) },
	}, nil, func(ctx context.Context, in deviceIn) (any, error) {
		if s.inject[InjectSlow] {
			if err := s.opts.Sleep(ctx, s.opts.SlowDelay); err != nil {
				return nil, err
			}
		}
		dt, err := s.deviceType(ctx, in.SerialNumber, in.DeviceType)
		if err != nil {
			return nil, err
		}
		seg := map[string]string{"ACCESS_POINT": "aps", "SWITCH": "switches", "GATEWAY": "gateways"}[dt]
		var out map[string]any
		if _, err := c.do(ctx, http.MethodGet, "/network-monitoring/v1/"+seg+"/"+url.PathEscape(in.SerialNumber), nil, nil, &out); err != nil {
			return nil, err
		}
		return out, nil
	})

	addTool(s, ms, toolSpec{
		name: "list_sites_health", title: "List sites with health", kind: kindRead,
		desc: "List sites with their id, overall health (good/fair/poor), device and client counts and alert counts. " +
			"Use it to find a site's id. Returns one page (limit) and a next cursor; set all=true to fetch every page.",
		patch: pagingPatch(1000, defaultLimit, nil),
	}, nil, func(ctx context.Context, in listSitesIn) (any, error) {
		q := url.Values{}
		var f odata
		f.eq("siteName", in.SiteName)
		f.set(q)
		res, err := c.list(ctx, epSitesHealth, q, pageReq(in.Limit, in.Cursor, in.All), s.pageSize())
		if err != nil {
			return nil, err
		}
		return listAnswer(res, in.All, "siteName", "id", "siteName", "health", "devices", "clients", "alerts"), nil
	})

	addTool(s, ms, toolSpec{
		name: "get_site_health", title: "Get site health", kind: kindRead,
		desc: "Get the health of one site broken down by device type and client type, with the reasons for poor health. Give site_id, or site_name to look the id up.",
	}, nil, func(ctx context.Context, in siteIn) (any, error) {
		id := in.SiteID
		if id == "" {
			if in.SiteName == "" {
				return nil, errors.New("give site_id or site_name")
			}
			q := url.Values{}
			var f odata
			f.eq("siteName", in.SiteName)
			f.set(q)
			res, err := c.list(ctx, epSitesHealth, q, pageReq(1, "", false), 0)
			if err != nil {
				return nil, err
			}
			if len(res.Items) == 0 {
				return nil, fmt.Errorf("no site named %q", in.SiteName)
			}
			id = fmt.Sprint(res.Items[0]["id"])
		}
		var out map[string]any
		if _, err := c.do(ctx, http.MethodGet, "/network-monitoring/v1/site-health/"+url.PathEscape(id), nil, nil, &out); err != nil {
			return nil, err
		}
		return out, nil
	})
}
