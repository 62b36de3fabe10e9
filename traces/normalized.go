package traces

// Normalized is one piece of an event that a profile's normalisation rule
// replaced with a placeholder before the run was hashed: a time a server
// printed in a tool result, a window it put in a query to the fake. The
// event's payload holds Placeholder where Original was; Event.Normalized
// keeps the originals, in the order the rules met them (the document order
// of the payload), so that a display can show what the server really sent.
//
// Event.Normalized is tagged trace:"side": it is kept beside the run, like
// the servers' stderr, never in its ID, so that two recordings that differ
// only in the normalised text have one ID.
type Normalized struct {
	// Placeholder is the text the payload holds instead.
	Placeholder string `json:"placeholder"`
	// Original is the text replaced; for a rule on a JSON path, the
	// replaced value (a string's text, or the JSON of a number, object...).
	Original string `json:"original"`
	// Rule names the rule: "pattern" or its JSON path.
	Rule string `json:"rule,omitempty"`
}
