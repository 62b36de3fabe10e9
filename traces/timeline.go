package traces

// Times returns each event's time since the run started, in microseconds,
// all on the run's own origin, and the shift it applied to the fake
// Central's events (http, egress) to put them there.
//
// A run recorded before 2026-12-02 counted its fake Central's journal from
// the fake's own start, which is later than the run's when the run waited
// for its server to start: its HTTP rows came seconds before the tool call
// that made them. Such a run's journal events are moved by the smallest
// shift that puts none of them before its tool call (the start of that
// call is the earliest they can have been); a run recorded since has
// one origin already, and a shift of 0.
func (r *Run) Times() (at []int64, journalShiftUS int64) {
	callAt := map[int]int64{}
	for _, e := range r.Events {
		if e.Kind == KindCall && e.Call != nil {
			if _, seen := callAt[e.Call.Index]; !seen {
				callAt[e.Call.Index] = e.AtUS
			}
		}
	}
	for _, e := range r.Events {
		if e.Kind != KindHTTP || e.HTTP == nil || e.HTTP.Boot {
			continue
		}
		if c, ok := callAt[e.HTTP.Call]; ok {
			journalShiftUS = max(journalShiftUS, c-e.AtUS)
		}
	}
	at = make([]int64, len(r.Events))
	for i, e := range r.Events {
		at[i] = e.AtUS
		if e.Kind == KindHTTP || e.Kind == KindEgress {
			at[i] += journalShiftUS
		}
	}
	return at, journalShiftUS
}
