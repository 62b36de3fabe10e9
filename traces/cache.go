package traces

import (
	"container/list"
	"sync"
)

// valueCache keeps verified canonical values by ID, least recently used
// out first, within a bound on their bytes. A nil *valueCache caches
// nothing. Values are immutable once added (content-addressed): get hands
// out the cached bytes, which callers only read or copy.
type valueCache struct {
	mu    sync.Mutex
	max   int
	size  int
	order *list.List // of *cached, most recent first
	items map[ID]*list.Element
}

type cached struct {
	id  ID
	val []byte
}

func newValueCache(max int) *valueCache {
	return &valueCache{max: max, order: list.New(), items: map[ID]*list.Element{}}
}

func (c *valueCache) get(id ID) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[id]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*cached).val, true
}

// add copies val into the cache under id; a value above a quarter of the
// bound is not kept.
func (c *valueCache) add(id ID, val []byte) {
	if c == nil || len(val) > c.max/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[id]; ok {
		c.order.MoveToFront(el)
		return
	}
	v := append([]byte(nil), val...)
	c.items[id] = c.order.PushFront(&cached{id: id, val: v})
	c.size += len(v)
	for c.size > c.max {
		el := c.order.Back()
		e := el.Value.(*cached)
		c.order.Remove(el)
		delete(c.items, e.id)
		c.size -= len(e.val)
	}
}
