package fakecentral

import (
	"strings"
	"testing"
)

// The config store takes the bodies the OpenAPI documents (issue 19, item
// 3): the NAC service wraps its object in input and has Central assign the
// id (createMacRegistration_request); a device-firmware object is per
// scope, named by its query, with no name of its own.
func TestConfigStoreTakesOpenAPIBodies(t *testing.T) {
	c := New(nil)
	code, _, body := do(t, c, "POST", "/network-config/v1alpha1/cnac-mac-reg",
		`{"input":{"macAddress":"aa:bb:cc:00:00:11","displayName":"printer-2f","enable":true,"type":"MAC_REG"}}`)
	if code != 200 {
		t.Fatalf("POST cnac-mac-reg with input: %d %s", code, body)
	}
	code, _, body = do(t, c, "GET", "/network-config/v1alpha1/cnac-mac-reg", "")
	if code != 200 || !strings.Contains(string(body), `"displayName":"printer-2f"`) || !strings.Contains(string(body), `"id":"`) {
		t.Errorf("the registration reads back with the id Central gave it: %d %s", code, body)
	}
	// The same request again is the same object: ids derive from what was sent.
	if code, _, body = do(t, c, "POST", "/network-config/v1alpha1/cnac-mac-reg",
		`{"input":{"macAddress":"aa:bb:cc:00:00:11","displayName":"printer-2f","enable":true,"type":"MAC_REG"}}`); code != 412 {
		t.Errorf("the same registration twice: %d %s, want 412", code, body)
	}
	code, _, body = do(t, c, "POST", "/network-config/v1alpha1/device-firmware?object-type=LOCAL&scope-id=3753337687&device-function=CAMPUS_AP",
		`{"firmware-version":"10.7.1.0"}`)
	if code != 200 {
		t.Fatalf("POST device-firmware for a scope: %d %s", code, body)
	}
	// Elsewhere an object is named by its body: without a name it is refused.
	if code, _, body = do(t, c, "POST", "/network-config/v1alpha1/auth-servers", `{"auth-port":1812}`); code != 400 {
		t.Errorf("an auth server without a name: %d %s, want 400", code, body)
	}
}
