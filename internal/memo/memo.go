// Package memo holds a small bounded memo: a map from bytes to what a
// function derives from them, for the caches of long-lived objects (a
// scorer's tool lists, a recorder's compiled schemas).
package memo

import "sync"

// Bytes maps keys (bytes) to what derive gave for them. It is safe for
// concurrent use. It holds at most Max entries (no bound when Max is 0):
// past it, it starts again empty, a bound on memory and not a policy of
// what to keep, for values that are cheap to derive again. Two callers
// that miss the same key at once may both derive it; the values must be
// the same whoever derives them.
type Bytes[V any] struct {
	Max int

	mu sync.Mutex
	m  map[string]V
}

// Get returns the value of key, derived by derive if the memo has none.
func (b *Bytes[V]) Get(key []byte, derive func([]byte) V) V {
	b.mu.Lock()
	v, ok := b.m[string(key)]
	b.mu.Unlock()
	if ok {
		return v
	}
	v = derive(key)
	b.mu.Lock()
	if b.m == nil || b.Max > 0 && len(b.m) >= b.Max {
		b.m = map[string]V{} // a bound on memory, not a policy
	}
	b.m[string(key)] = v
	b.mu.Unlock()
	return v
}

// Len is how many values the memo holds.
func (b *Bytes[V]) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.m)
}
