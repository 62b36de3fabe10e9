package traces

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// ID is the SHA-256 of a payload's canonical JSON bytes.
type ID [32]byte

// Hash returns the ID of data, which must already be canonical.
func Hash(data []byte) ID { return sha256.Sum256(data) }

// String returns the ID as 64 lower-case hex digits.
func (id ID) String() string { return hex.EncodeToString(id[:]) }

// Short returns the first 12 hex digits, enough to name a run to a person.
func (id ID) Short() string { return id.String()[:12] }

// IsZero reports whether id is the zero ID (no content).
func (id ID) IsZero() bool { return id == ID{} }

// MarshalText encodes the ID as hex, so IDs read well in JSON.
func (id ID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

// UnmarshalText parses 64 hex digits.
func (id *ID) UnmarshalText(b []byte) error {
	p, err := ParseID(string(b))
	if err != nil {
		return err
	}
	*id = p
	return nil
}

// ParseID parses a full 64-digit hex ID.
func ParseID(s string) (ID, error) {
	var id ID
	if len(s) != 2*len(id) {
		return id, fmt.Errorf("invalid ID %q: want %d hex digits, got %d", s, 2*len(id), len(s))
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return ID{}, fmt.Errorf("invalid ID %q: %w", s, err)
	}
	return id, nil
}
