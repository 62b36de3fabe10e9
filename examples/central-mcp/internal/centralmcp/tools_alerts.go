package centralmcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type listAlertsIn struct {
	Status     string `json:"status,omitempty" jsonschema:"alert status; default Active"`
	SiteID     string `json:"site_id,omitempty" jsonschema:"only alerts of this site id"`
	Category   string `json:"category,omitempty" jsonschema:"only alerts of this category"`
	DeviceType string `json:"device_type,omitempty" jsonschema:"only alerts raised by this kind of device"`
	Limit      int    `json:"limit,omitempty" jsonschema:"alerts per answer"`
	Cursor     string `json:"cursor,omitempty" jsonschema:"the next value of an earlier answer, to continue"`
	All        bool   `json:"all,omitempty" jsonschema:"true to fetch every page"`
}

var alertFields = []string{"key", "id", "name", "summary", "severity", "priority", "status", "category",
	"deviceType", "createdAt"}

type clearAlertsIn struct {
	Keys   []string `json:"keys" jsonschema:"keys of the alerts to clear (the key field from list_alerts)"`
	Reason string   `json:"reason,omitempty" jsonschema:"why the alerts are cleared; default Problem was resolved"`
	Notes  string   `json:"notes,omitempty" jsonschema:"free-text notes stored with the alerts"`
}

var clearReasons = []string{"Problem was resolved", "False Positive",
	"Insufficient information for troubleshooting", "Alert is not important", "Other"}

// registerAlerts adds the alert tools: list and acknowledge (clear).
func (s *server) registerAlerts(ms *mcp.Server) {
	c := s.central

	addTool(s, ms, toolSpec{
		name: "list_alerts", title: "List alerts", kind: kindRead,
		desc: "List alerts (default: Active) with severity, priority, category, device type and summary, optionally only those of one site, category or device type. " +
			"Returns one page (limit) and a next cursor; set all=true to fetch every page.",
		patch: pagingPatch(100, defaultLimit, func(sc *jsonschema.Schema) {
			enum(sc, "status", alertStatuses...)
			enum(sc, "category", "Clients", "System", "LAN", "WLAN", "WAN", "Cluster", "Routing", "Security")
			enum(sc, "device_type", "Access Point", "Gateway", "Switch", "Bridge")
		}),
	}, nil, func(ctx context.Context, in listAlertsIn) (any, error) {
		status := in.Status
		if status == "" {
			status = "Active"
		}
		q := url.Values{}
		var f odata
		f.eq("status", status)
		f.eq("siteId", in.SiteID)
		f.eq("category", in.Category)
		f.eq("deviceType", in.DeviceType)
		f.set(q)
		res, err := c.list(ctx, epAlerts, q, pageReq(in.Limit, in.Cursor, in.All), s.pageSize())
		if err != nil {
			return nil, err
		}
		return listAnswer(res, in.All, "key", alertFields...), nil
	})

	addTool(s, ms, toolSpec{
		name: "clear_alerts", title: "Acknowledge and clear alerts", kind: kindWrite,
		desc: "Acknowledge alerts by clearing them, with a reason and optional notes, and report the outcome. Needs writes enabled.",
		patch: func(sc *jsonschema.Schema) {
			itemsRange(sc, "keys", 1, 100)
			enum(sc, "reason", clearReasons...)
		},
	}, confirmBulkClear, func(ctx context.Context, in clearAlertsIn) (any, error) {
		if len(in.Keys) == 0 {
			return nil, errors.New("keys is required")
		}
		reason := in.Reason
		if reason == "" {
			reason = clearReasons[0]
		}
		body := map[string]any{"keys": in.Keys, "reason": reason}
		setIfAny(body, "notes", in.Notes)
		var acc struct {
			TaskID   string `json:"taskId"`
			Location string `json:"location"`
		}
		hdr, err := c.do(ctx, http.MethodPost, "/network-notifications/v1/alerts/clear", nil, body, &acc)
		if err != nil {
			return nil, err
		}
		task := acc.TaskID
		if task == "" {
			task = taskID(acc.Location, hdr)
		}
		if task == "" {
			return map[string]any{"status": "accepted", "keys": in.Keys}, nil
		}
		st, err := s.poll(ctx, "/network-notifications/v1/alerts/async-operations/"+url.PathEscape(task), "state", "SUCCEEDED", "FAILED")
		if err != nil {
			return nil, err
		}
		out := map[string]any{"task_id": task, "state": st["state"], "keys": in.Keys}
		if e, ok := st["error"]; ok && e != nil {
			out["error"] = e
		}
		return out, nil
	})
}

// confirmBulkClear asks before clearing more than one alert at once: one
// alert cleared is an acknowledgement, all of them is a mass action.
func confirmBulkClear(in clearAlertsIn) string {
	if len(in.Keys) <= 1 {
		return ""
	}
	return fmt.Sprintf("Clear %d alerts (%s)?", len(in.Keys), strings.Join(in.Keys, ", "))
}
