package traces

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2"
)

// Reading past damage.
//
// When pebble cannot read a block of a table (its checksum does not match),
// an iterator stops there with an error, and so would a plain scan: one
// flipped byte would hide every key after it. The tolerant scan below goes
// on past such a block: from the last key it read, it finds the first
// position beyond the block (a seek that does not meet the same error: the
// block is found by bisecting the key space, then the keys between it and
// that position are read walking backwards), and carries on from there. What
// it could not read is a hole: the keys between the last key read before it
// and the first key read after it. Every key outside the holes is read once.
//
// Each read of a damaged block costs pebble a search for a single flipped
// bit (about 0.2 s for a 16 KiB block), so a hole costs a few of those, and
// the holes found are kept (Store.holes) so that nothing reads them again.

// kvIter is what the tolerant scan needs of a pebble iterator (the tests
// give it a fake one, with blocks that fail).
type kvIter interface {
	SeekGE(key []byte) bool
	SeekLT(key []byte) bool
	Last() bool
	Next() bool
	Prev() bool
	Key() []byte
	ValueAndErr() ([]byte, error)
	Error() error
}

// A hole is a stretch of keys that cannot be read: every key after after
// (nil: from lower, the start of the scan that met it) and before before
// (nil: up to upper, the end of that scan), or the one key key whose value
// cannot be read.
type hole struct {
	after, before []byte
	lower, upper  []byte
	key           []byte
	err           error  // wraps ErrCorrupt
	msg           string // the first line of pebble's error
}

func (h hole) contains(k []byte) bool {
	if h.key != nil {
		return bytes.Equal(h.key, k)
	}
	switch {
	case h.after != nil && bytes.Compare(k, h.after) <= 0:
		return false
	case h.after == nil && h.lower != nil && bytes.Compare(k, h.lower) < 0:
		return false
	case h.before != nil && bytes.Compare(k, h.before) >= 0:
		return false
	case h.before == nil && h.upper != nil && bytes.Compare(k, h.upper) >= 0:
		return false
	}
	return true
}

// String describes the hole by the keys around it.
func (h hole) String() string {
	if h.key != nil {
		return fmt.Sprintf("the value of %s cannot be read: %v", describeKey(h.key), h.err)
	}
	from := "the start of the store"
	switch {
	case h.after != nil:
		from = describeKey(h.after)
	case h.lower != nil:
		from = describeBound(h.lower)
	}
	to := "the end of the store"
	switch {
	case h.before != nil:
		to = describeKey(h.before)
	case h.upper != nil:
		to = describeBound(h.upper)
	}
	return fmt.Sprintf("the keys between %s and %s cannot be read: %v", from, to, h.err)
}

// describeBound names a scan's bound: where a kind of key starts or ends.
func describeBound(b []byte) string {
	for _, p := range keyPrefixes {
		switch {
		case bytes.Equal(b, p):
			return fmt.Sprintf("the start of the %s keys", strings.TrimSuffix(string(p), "/"))
		case bytes.Equal(b, prefixEnd(p)):
			return fmt.Sprintf("the end of the %s keys", strings.TrimSuffix(string(p), "/"))
		}
	}
	return describeKey(b)
}

// isPebbleCorruption reports whether err is pebble's own corruption error
// (a checksum that does not match, a truncated table or log).
func isPebbleCorruption(err error) bool { return pebble.IsCorruptionError(err) }

// sameDamage reports whether two pebble errors name the same damage: the
// same block of the same table gives the same first line.
func sameDamage(a, b error) bool { return firstLine(a) == firstLine(b) }

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// maxFailedSeeks bounds the seeks into damage that skipDamage spends to
// separate two damaged blocks close to one another; past it, the keys
// between them (if any) are taken as unreadable. maxHops bounds how many
// damaged blocks in a row one hole crosses before it is taken to reach the
// candidate.
// maxHiddenSeeks bounds those spent looking for the one key a walk back
// cannot read (see skipDamage).
// maxHalvings bounds the halvings of an interval, seeks into damage or
// not.
const (
	maxFailedSeeks = 24
	maxHiddenSeeks = 6
	maxHops        = 64
	maxHalvings    = 64
)

// scanTolerant calls fn for every key in [lower, upper) that can be read,
// in order, and returns the holes it met. hints, sorted, are keys the store
// may hold (the runs refs name, the bases meta/seq implies): between two
// damaged blocks close to one another, they are where it looks for readable
// keys first. A pebble error other than corruption, or an error from fn,
// stops it.
func scanTolerant(it kvIter, lower, upper []byte, hints [][]byte, fn func(k, v []byte) error) ([]hole, error) {
	var holes []hole
	var last []byte // the last key read
	var open *hole  // the hole being crossed: it ends at the next key read
	pos := lower    // where the scan is: the last key read, or the last seek
	ok := it.SeekGE(lower)
	for {
		for ; ok; ok = it.Next() {
			k := it.Key()
			v, err := it.ValueAndErr()
			if open != nil {
				open.before = bytes.Clone(k)
				holes = append(holes, *open)
				open = nil
			}
			last = append(last[:0], k...)
			pos = last
			if err != nil {
				if !isPebbleCorruption(err) {
					return holes, err
				}
				holes = append(holes, hole{key: bytes.Clone(k), err: wrapCorrupt(err), msg: firstLine(err)})
				continue
			}
			if err := fn(k, v); err != nil {
				return holes, err
			}
		}
		dmg := it.Error()
		if dmg == nil {
			if open != nil {
				holes = append(holes, *open)
			}
			return holes, nil
		}
		if !isPebbleCorruption(dmg) {
			return holes, dmg
		}
		if open == nil {
			open = &hole{after: bytes.Clone(last), lower: lower, upper: upper, err: wrapCorrupt(dmg), msg: firstLine(dmg)}
		}
		resume, found, err := skipDamage(it, pos, upper, hints, dmg)
		if err != nil {
			return holes, err
		}
		if found && (upper != nil && bytes.Compare(resume, upper) >= 0 || pos != nil && bytes.Compare(resume, pos) <= 0) {
			found = false // at the end, or no further: never seek there
		}
		if !found {
			holes = append(holes, *open)
			return holes, nil
		}
		pos = resume
		ok = it.SeekGE(resume)
	}
}

// skipDamage returns the first position after from (a key read, or the
// scan's lower bound) from which a seek does not meet the damage dmg, such
// that nothing readable lies between the damage and it; found is false when
// the damage reaches upper.
//
// It walks back from the scan's end over what can be read, which stops at
// the last damage before the end. That may be dmg, with nothing but one key
// between: pebble, stepping back onto a key, reads the entry before it too
// (to be sure it has seen every version of the key), so the key just after
// a damaged block is read going forward only; a seek finds it. Or it may be
// other damage, with readable keys between the two: a seek finds them, and
// the walk back goes on from there.
func skipDamage(it kvIter, from, upper []byte, hints [][]byte, dmg error) (resume []byte, found bool, err error) {
	lo, hi := from, upper // just after lo a seek meets dmg; hi: a candidate
	for hops := 0; ; {
		var ok bool
		if hi == nil {
			ok = it.Last()
		} else {
			ok = it.SeekLT(hi)
		}
		for ok && (lo == nil || bytes.Compare(it.Key(), lo) > 0) {
			hi = bytes.Clone(it.Key())
			ok = it.Prev()
		}
		e := it.Error()
		if ok || e == nil {
			return hi, hi != nil, nil // back at from, or at the start
		}
		if !isPebbleCorruption(e) {
			return nil, false, e
		}
		atDmg := sameDamage(e, dmg)
		sk := &skipper{it: it, dmg: dmg, hints: hints, budget: maxFailedSeeks}
		if atDmg {
			sk.budget = maxHiddenSeeks
		}
		k, next, nextDmg, err := sk.between(lo, hi)
		switch {
		case err != nil:
			return nil, false, err
		case k != nil && atDmg:
			return k, true, nil // the key hidden behind dmg
		case k != nil:
			hi = k
		case atDmg:
			return hi, hi != nil, nil
		case next != nil && hops < maxHops:
			// The other damage follows dmg with nothing readable between:
			// the hole goes on past it.
			lo, dmg = next, nextDmg
			hops++
		default:
			return hi, hi != nil, nil // they are one hole
		}
	}
}

// skipper searches the key space between two damaged stretches.
type skipper struct {
	it     kvIter
	dmg    error
	hints  [][]byte
	budget int    // seeks that may meet damage
	failed int    // seeks that met damage
	key    []byte // the key the last seek classified readable read
	reach  []byte // the furthest position a seek met dmg at
}

// keyPrefixes are where the store's kinds of keys start: positions a
// search between damaged blocks tries.
var keyPrefixes = [][]byte{prefixAnchor, prefixBase, prefixFamily, []byte("meta/"), prefixRef, prefixRun}

// Where a seek lands, between the damage dmg and a key hi read after other
// damage: in dmg, readable before hi, or past: in other damage (then
// classify returns it), or at hi or after.
const (
	inDamage = iota
	readable
	past
)

func (sk *skipper) classify(p, hi []byte) (int, error, error) {
	sk.key = nil
	if hi != nil && bytes.Compare(p, hi) >= 0 {
		return past, nil, nil
	}
	if sk.it.SeekGE(p) {
		if hi != nil && bytes.Compare(sk.it.Key(), hi) >= 0 {
			return past, nil, nil
		}
		sk.key = bytes.Clone(sk.it.Key())
		return readable, nil, nil
	}
	e := sk.it.Error()
	switch {
	case e == nil:
		return past, nil, nil
	case !isPebbleCorruption(e):
		return 0, nil, e
	}
	sk.failed++
	if sameDamage(e, sk.dmg) {
		return inDamage, e, nil
	}
	return past, e, nil
}

// between returns a key in (lo, hi) past dmg that a seek reads. When it
// finds none within its budget of seeks into damage, it returns instead
// the first position it found past dmg that meets other damage, and that
// damage. It first tries the positions it has reason to: the hints, where
// each kind of key starts, the keys just after each prefix of lo and the
// prefixes of hi (keys share long prefixes, which halving the key space
// would take hundreds of steps to reach); then it halves the interval those
// leave.
func (sk *skipper) between(lo, hi []byte) (key, next []byte, nextDmg, err error) {
	var cands [][]byte
	for j := len(lo) - 1; j >= 0; j-- {
		if lo[j] < 0xff {
			cands = append(cands, append(bytes.Clone(lo[:j]), lo[j]+1))
		}
	}
	for j := 1; j < len(hi); j++ {
		cands = append(cands, bytes.Clone(hi[:j]))
	}
	cands = append(cands, keyPrefixes...)
	from, _ := slices.BinarySearchFunc(sk.hints, lo, bytes.Compare)
	to := len(sk.hints)
	if hi != nil {
		to, _ = slices.BinarySearchFunc(sk.hints, hi, bytes.Compare)
	}
	cands = append(cands, sk.hints[from:max(from, to)]...)
	cands = slices.DeleteFunc(cands, func(c []byte) bool {
		return lo != nil && bytes.Compare(c, lo) <= 0 || hi != nil && bytes.Compare(c, hi) >= 0
	})
	slices.SortFunc(cands, bytes.Compare)
	cands = slices.CompactFunc(cands, bytes.Equal)
	// The first candidate past dmg, by bisection (positions in dmg come
	// first, then readable ones, then past them).
	var right []byte
	var rightDmg error
	a, b := 0, len(cands) // cands[:a] in dmg; cands[b:] past it
	for a < b && sk.failed < sk.budget {
		m := (a + b) / 2
		c, d, err := sk.classify(cands[m], hi)
		switch {
		case err != nil:
			return nil, nil, nil, err
		case c == readable:
			return sk.key, nil, nil, nil
		case c == inDamage:
			a = m + 1
		default:
			b = m
			right, rightDmg = cands[m], d
		}
	}
	left := lo
	if a > 0 {
		left = cands[a-1]
	}
	if right == nil {
		right = hi
		if right == nil {
			right = bytes.Repeat([]byte{0xff}, len(left)+1)
		}
	}
	for step := 0; step < maxHalvings && sk.failed < sk.budget; step++ {
		mid, ok := midpoint(left, right)
		if !ok {
			break
		}
		c, d, err := sk.classify(mid, hi)
		switch {
		case err != nil:
			return nil, nil, nil, err
		case c == readable:
			return sk.key, nil, nil, nil
		case c == inDamage:
			left = mid
		default:
			right, rightDmg = mid, d
		}
	}
	if rightDmg == nil {
		return nil, nil, nil, nil
	}
	return nil, right, rightDmg, nil
}

// midpoint returns a byte string strictly between lo and hi (lo < hi), or
// false when it finds none at a few bytes more precision.
func midpoint(lo, hi []byte) ([]byte, bool) {
	for n := max(len(lo), len(hi)) + 1; n <= max(len(lo), len(hi))+4; n++ {
		a := new(big.Int).SetBytes(padRight(lo, n))
		b := new(big.Int).SetBytes(padRight(hi, n))
		m := new(big.Int).Add(a, b)
		m.Rsh(m, 1)
		if m.Cmp(a) > 0 && m.Cmp(b) < 0 {
			return m.FillBytes(make([]byte, n)), true
		}
	}
	return nil, false
}

func padRight(b []byte, n int) []byte {
	out := make([]byte, n)
	copy(out, b)
	return out
}

// describeKey names a store key for a person: its prefix and what follows
// in the form that prefix uses.
func describeKey(k []byte) string {
	switch {
	case bytes.HasPrefix(k, prefixRun) && len(k) == len(prefixRun)+len(ID{}):
		return "run " + hex.EncodeToString(k[len(prefixRun):])
	case bytes.HasPrefix(k, prefixBase) && len(k) == len(prefixBase)+8:
		return fmt.Sprintf("base %d", binary.BigEndian.Uint64(k[len(prefixBase):]))
	case bytes.HasPrefix(k, prefixRef):
		return "ref " + string(k[len(prefixRef):])
	case bytes.HasPrefix(k, prefixFamily), bytes.HasPrefix(k, prefixAnchor):
		return strings.ReplaceAll(string(k), "\x00", "/")
	case bytes.HasPrefix(k, []byte("meta/")):
		return string(k)
	}
	return fmt.Sprintf("key %q", k)
}

// holeSet is the holes a store has met, for reads to skip.
type holeSet []hole

func (hs holeSet) find(k []byte) (hole, bool) {
	for _, h := range hs {
		if h.contains(k) {
			return h, true
		}
	}
	return hole{}, false
}
