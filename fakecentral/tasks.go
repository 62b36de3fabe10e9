package fakecentral

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// task is an async operation (troubleshooting run or alert action).
type task struct {
	id      string
	kind    string // "troubleshooting" or "alerts"
	devType string
	serial  string
	action  string
	polls   int
	output  map[string]any
	started time.Time
}

var devTypeSegment = map[string]string{"aps": "ACCESS_POINT", "cx": "SWITCH", "aos-s": "SWITCH", "switches": "SWITCH", "gateways": "GATEWAY"}

func (st *state) newTask(kind string) *task {
	st.taskSeq++
	t := &task{id: fmt.Sprintf("%08x-0000-4000-8000-%012d", seeded(st.fx.Version(), kind)&0xffffffff, st.taskSeq), kind: kind,
		started: st.now.Add(time.Duration(st.taskSeq) * time.Second)}
	st.tasks[t.id] = t
	return t
}

func startTask(w http.ResponseWriter, rq *request, st *state) *apiError {
	want, ok := devTypeSegment[rq.param("device-type")]
	if !ok {
		return notFound("Resource not found for the given input. Unknown device type %q", rq.param("device-type"))
	}
	d, ok := st.dev[rq.param("serial-number")]
	if !ok {
		return notFound("Resource not found for the given input.")
	}
	if d.Type != want {
		return badRequest("Device %s is a %s, not addressable under /%s", d.Serial, d.Type, rq.param("device-type"))
	}
	action := rq.param("action")
	if !knownAction(action) {
		return notFound("Resource not found for the given input. Unknown operation %q", action)
	}
	if action == "list-tasks" || action == "show-commands" {
		return notFound("Resource not found for the given input.")
	}
	var body map[string]any
	if len(rq.body) > 0 && json.Unmarshal(rq.body, &body) != nil {
		return badRequest("Invalid JSON body")
	}
	if d.Status == "OFFLINE" {
		return badRequest("Device %s is offline; troubleshooting operations need a connected device", d.Serial)
	}
	t := st.newTask("troubleshooting")
	t.devType, t.serial, t.action = rq.param("device-type"), d.Serial, action
	out, aerr := st.taskOutput(d, action, body)
	if aerr != nil {
		delete(st.tasks, t.id)
		return aerr
	}
	t.output = out
	loc := strings.TrimSuffix(rq.path, "/") + "/async-operations/" + t.id
	w.Header().Set("Location", loc)
	writeJSON(w, 202, map[string]any{"location": loc, "startTime": st.ts(t.started), "status": "INITIATED"})
	return nil
}

func knownAction(a string) bool {
	if diagnosticActions[a] {
		return true
	}
	switch a {
	case "reboot", "rebootSwarm", "halt", "poeBounce", "portBounce", "disconnectUserAll", "disconnectUserByMacAddress",
		"disconnectUserByNetwork", "disconnectClientAll", "disconnectClientByMacAddress":
		return true
	}
	return false
}

func (st *state) troubleshootingFor(serial, action string) []TroubleshootingOutput {
	var exact, any []TroubleshootingOutput
	for _, o := range st.fx.Troubleshooting {
		if o.Action != action {
			continue
		}
		if o.Serial == serial {
			exact = append(exact, o)
		} else if o.Serial == "*" || o.Serial == "" {
			any = append(any, o)
		}
	}
	return append(exact, any...)
}

func (st *state) taskOutput(d *Device, action string, body map[string]any) (map[string]any, *apiError) {
	outs := st.troubleshootingFor(d.Serial, action)
	switch action {
	case "showCommands":
		var cmds []string
		if raw, ok := body["commands"].([]any); ok {
			for _, c := range raw {
				if s, ok := c.(string); ok {
					cmds = append(cmds, s)
				}
			}
		}
		if len(cmds) == 0 {
			return nil, badRequest("Body must name at least one command: {\"commands\": [\"show ...\"]}")
		}
		var results []any
		for _, c := range cmds {
			text := fmt.Sprintf("%% No output recorded for %q on %s in fixture %s", c, d.Name, st.fx.Name)
			for _, o := range outs {
				if strings.EqualFold(strings.TrimSpace(o.Command), strings.TrimSpace(c)) {
					text = o.Output
					break
				}
			}
			results = append(results, map[string]any{"command": c, "output": text})
		}
		cmdList := make([]any, len(cmds))
		for i, c := range cmds {
			cmdList[i] = c
		}
		return map[string]any{"commands": cmdList, "results": results}, nil
	case "disconnectUserByMacAddress", "disconnectClientByMacAddress":
		mac, _ := body["userMacAddress"].(string)
		if mac == "" {
			mac, _ = body["macAddress"].(string)
		}
		c, ok := st.client[strings.ToLower(mac)]
		if !ok {
			return nil, notFound("Resource not found for the given input. Unknown client %q", mac)
		}
		c.Status = "Disconnected"
		st.rebuild()
		return map[string]any{"output": fmt.Sprintf("Client %s disconnected from %s", c.MAC, d.Name)}, nil
	}
	for _, o := range outs {
		if o.Result != nil {
			return cloneJSON(normalizeYAML(o.Result)).(map[string]any), nil
		}
		if o.Output != "" {
			return map[string]any{"output": o.Output}, nil
		}
	}
	return map[string]any{"output": fmt.Sprintf("%s completed on %s", action, d.Name)}, nil
}

func pollTask(w http.ResponseWriter, rq *request, st *state) *apiError {
	t, ok := st.tasks[rq.param("task-id")]
	if !ok || t.kind != "troubleshooting" || t.serial != rq.param("serial-number") || t.action != rq.param("action") {
		return notFound("Resource not found for the given input.")
	}
	t.polls++
	if t.polls <= rq.c.opts.AsyncPolls {
		writeJSON(w, 200, map[string]any{"status": "RUNNING", "progressPercent": 50, "startTime": st.ts(t.started), "endTime": nil})
		return nil
	}
	writeJSON(w, 200, map[string]any{"status": "COMPLETED", "progressPercent": 100, "startTime": st.ts(t.started),
		"endTime": st.ts(t.started.Add(3 * time.Second)), "output": t.output})
	return nil
}

func alertAction(action string) handler {
	return func(w http.ResponseWriter, rq *request, st *state) *apiError {
		var body struct {
			Keys     []string `json:"keys"`
			Priority string   `json:"priority"`
		}
		if json.Unmarshal(rq.body, &body) != nil || len(body.Keys) == 0 {
			return badRequest("Body must be {\"keys\": [...]} with at least one alert key")
		}
		byID := map[string]*Alert{}
		for _, a := range st.alerts {
			byID[a.ID] = a
		}
		for _, k := range body.Keys {
			if _, ok := byID[k]; !ok {
				return notFound("Resource not found for the given input. Unknown alert %s", k)
			}
		}
		for _, k := range body.Keys {
			a := byID[k]
			switch action {
			case "clear":
				a.Status, a.ClearedReason = "Cleared", "Manually cleared"
			case "defer":
				a.Status = "Deferred"
			case "active":
				a.Status, a.ClearedReason = "Active", ""
			case "priority":
				if body.Priority != "" {
					a.Priority = body.Priority
				}
			}
		}
		st.rebuild()
		t := st.newTask("alerts")
		t.action = action
		loc := "/network-notifications/v1/alerts/async-operations/" + t.id
		w.Header().Set("Location", loc)
		writeJSON(w, 202, map[string]any{"location": loc, "response": "Accepted", "taskId": t.id})
		return nil
	}
}

func alertTask(w http.ResponseWriter, rq *request, st *state) *apiError {
	t, ok := st.tasks[rq.param("task-id")]
	if !ok || t.kind != "alerts" {
		return notFound("Resource not found for the given input.")
	}
	t.polls++
	state := "SUCCEEDED"
	pct := 100
	if t.polls <= rq.c.opts.AsyncPolls {
		state, pct = "IN_PROGRESS", 50
	}
	writeJSON(w, 200, map[string]any{"id": t.id, "type": "network-notifications/async-operation", "state": state,
		"progressPercent": pct, "startedAt": st.ts(t.started), "endedAt": st.ts(t.started.Add(time.Second)),
		"sourceResourceUri": "/network-notifications/v1/alerts/" + t.action, "logMessages": []any{}})
	return nil
}
