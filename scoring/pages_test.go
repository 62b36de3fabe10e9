package scoring

import (
	"encoding/json"
	"testing"

	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/traces"
)

func TestLastPage(t *testing.T) {
	for body, want := range map[string]bool{
		`{"count":25,"items":[],"next":"2","total":1140}`:  false,
		`{"count":15,"items":[],"next":null,"total":1140}`: true,
		`{"count":25,"items":[],"next":"","total":25}`:     true,
		`{"count":100,"items":[],"offset":0,"total":168}`:  false,
		`{"count":68,"items":[],"offset":100,"total":168}`: true,
		`{"count":20,"items":[],"offset":"20","total":45}`: false,
		`{"count":5,"items":[],"offset":null,"total":45}`:  true,
		`{"count":3,"devices":[],"total":3}`:               true,
		`{"count":3,"devices":[],"total":9}`:               false,
		`{"serial":"CNAPA0101"}`:                           false,
		`not json`:                                         false,
		`{"count":0,"items":[],"next":null,"total":1140}`:  false,
		`{"count":0,"items":[],"next":null,"total":0}`:     true,
		``: false,
		`{"count":1,"items":[],"offset":"x","total":1,"next":1}`: false,
	} {
		if got := lastPage(json.RawMessage(body)); got != want {
			t.Errorf("lastPage(%s) = %v, want %v", body, got, want)
		}
	}
}

// An all_pages call is met only by a 2xx answer that ends the list: the
// first page of a long list, or a last page answered 429, is not enough.
func TestAllPagesNeedsTheLastPage(t *testing.T) {
	sc := &scenarios.Scenario{Expect: scenarios.Expect{APICalls: []scenarios.CallSet{
		{AnyOf: []string{"GET /network-monitoring/v1/clients"}, AllPages: true},
	}}}
	page := func(status int, body string) *traces.HTTP {
		return &traces.HTTP{Method: "GET", Path: "/network-monitoring/v1/clients", Status: status, ResponseBody: json.RawMessage(body), Call: 0}
	}
	for name, tc := range map[string]struct {
		http []*traces.HTTP
		want bool
	}{
		"first page only":   {[]*traces.HTTP{page(200, `{"count":25,"items":[],"next":"2","total":60}`)}, false},
		"every page":        {[]*traces.HTTP{page(200, `{"count":25,"items":[],"next":"2","total":60}`), page(200, `{"count":25,"items":[],"next":"3","total":60}`), page(200, `{"count":10,"items":[],"next":null,"total":60}`)}, true},
		"last page refused": {[]*traces.HTTP{page(200, `{"count":25,"items":[],"next":"2","total":60}`), page(429, `{"count":10,"items":[],"next":null,"total":60}`)}, false},
	} {
		rm := &RunMetrics{NoResultSchema: true}
		scoreTask(rm, sc, &events{http: tc.http, plan: newPlan(sc)})
		if rm.TaskSuccess != tc.want {
			t.Errorf("%s: task success %v, want %v (missing %v)", name, rm.TaskSuccess, tc.want, rm.MissingAPICalls)
		}
	}
}
