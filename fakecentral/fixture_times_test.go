package fakecentral

import (
	"strings"
	"testing"
)

// A relative time Go cannot read is refused with the entity and field,
// never served as some default.
func TestFixtureRefusesADayOffset(t *testing.T) {
	base := "format: fakecentral.fixture/v1\nname: x\nnow: \"2026-11-20T10:00:00Z\"\nseed: 1\n" +
		"sites: [{id: \"1\", name: S}]\ndevices: [{serial: A1, name: a, type: ACCESS_POINT, site: \"1\", status: ONLINE}]\n"
	if _, err := ParseFixture([]byte(base+"alerts: [{id: X, name: n, severity: Major, status: Active, createdAt: \"-48h\"}]\n"), "t"); err != nil {
		t.Fatalf("hours: %v", err)
	}
	_, err := ParseFixture([]byte(base+"alerts: [{id: X, name: n, severity: Major, status: Active, createdAt: \"-2d\"}]\n"), "t")
	if err == nil || !strings.Contains(err.Error(), `alerts[0] createdAt: "-2d"`) {
		t.Errorf("-2d: %v", err)
	}
}
