package scoring

import "encoding/json"

// lastPage reports whether a list response is the list's last page, by
// the envelope Central's lists use: "next" null or empty (cursor lists),
// "offset" null (config lists, where it is the next offset), or a
// numeric offset whose page reaches "total". A body that is no list
// envelope, or was not kept, proves nothing, and neither does an empty
// page of a list that has items (one asked for past its end).
func lastPage(body json.RawMessage) bool {
	var env map[string]json.RawMessage
	if len(body) == 0 || json.Unmarshal(body, &env) != nil {
		return false
	}
	num := func(k string) (int, bool) {
		var n int
		err := json.Unmarshal(env[k], &n)
		return n, env[k] != nil && err == nil
	}
	isNull := func(r json.RawMessage) bool { return string(r) == "null" || string(r) == `""` }
	count, hasCount := num("count")
	total, hasTotal := num("total")
	if hasCount && hasTotal && count == 0 && total > 0 {
		return false // a page past the end read nothing of the list
	}
	if next, ok := env["next"]; ok {
		return isNull(next)
	}
	if offset, ok := env["offset"]; ok {
		if isNull(offset) {
			return true
		}
		off, isNum := num("offset")
		return isNum && hasCount && hasTotal && off+count >= total
	}
	return hasCount && hasTotal && count >= total
}
