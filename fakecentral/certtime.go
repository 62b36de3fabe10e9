package fakecentral

import "time"

// certWindow is the validity of the per-run CA and of the certificates it
// signs: from an hour before the earlier of the clock's reading and the
// fixture's fixed time to a week after the later. bench may start a server
// with its clock pinned to the fixture's time (libfaketime; see the
// recorder's docs/clock.md), and such a server must trust the fake's
// certificates as one on the wall clock does.
func (s *Server) certWindow() (notBefore, notAfter time.Time) {
	from, to := s.opts.Now(), s.opts.Now()
	if fx := s.Fixture(); fx != nil && !fx.Now().IsZero() {
		if f := fx.Now(); f.Before(from) {
			from = f
		} else if f.After(to) {
			to = f
		}
	}
	return from.Add(-time.Hour), to.Add(7 * 24 * time.Hour)
}
