package fakecentral

import (
	"slices"
	"testing"
)

// A fixture knows the token and secrets of its fakes without one being
// built (scoring reads them so, for every fixture of a batch), and the
// token stays what it was: recorded runs hold it (a server caches it, and
// scoring masks it), so a change of its derivation breaks every store.
func TestFixtureTokenIsTheIssuedOne(t *testing.T) {
	if got, want := MustLoadFixture("site-a").Token(), "fc1.5b502598321841835a488b1a549ffc632d508ce3"; got != want {
		t.Errorf("site-a's token is %q, was %q", got, want)
	}
	for _, name := range FixtureNames() {
		fx := MustLoadFixture(name)
		c := New(&Options{Fixture: fx})
		if fx.Token() != c.Token() {
			t.Errorf("fixture %s: Token %q, a fake issues %q", name, fx.Token(), c.Token())
		}
		if got := append(fx.Secrets(), fx.Token()); !slices.Equal(got, c.Secrets()) {
			t.Errorf("fixture %s: secrets %q, a fake's %q", name, got, c.Secrets())
		}
	}
}
