package scenarios

import (
	"strings"
	"testing"
)

// A fault may throttle the token endpoint (issue 19, item 4: "token-endpoint
// throttling too"), and rate-limit fields are checked.
func TestFaultsOnTheTokenEndpoint(t *testing.T) {
	doc := func(fault string) string {
		return `format: 1
id: alerts-990
suite: alerts
category: edge
intent: Which alerts are active?
platform: central
fixture: site-a
write_gate: read
expect:
  api_calls: [GET /network-notifications/v1/alerts]
faults:
  - ` + fault + `
result_schema: {type: object}
reference_result: {}
success_criteria: The alerts are listed despite a throttled token refresh.
`
	}
	for fault, want := range map[string]string{
		`{route: POST /oauth2/token, status: 429, after: 1, retry_after: 1}`:    "",
		`{route: POST /as/token.oauth2, status: 429, after: 2}`:                 "",
		`{route: POST /oauth2/tokens, status: 429}`:                             "POST /oauth2/tokens is not served by the fake Central",
		`{route: GET /network-notifications/v1/alerts, status: 429, after: -2}`: "faults[0].after: -2",
	} {
		list, err := Parse("m.yaml", []byte(doc(fault)))
		if err != nil {
			t.Fatal(err)
		}
		err = Validate(list, &ValidateOptions{Catalog: newTestCatalog()})
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", fault, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: want %q, got %v", fault, want, err)
		}
	}
}
