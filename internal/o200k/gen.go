//go:build ignore

// gen writes o200k_base.bin, the vocabulary package o200k embeds, from
// github.com/tiktoken-go/tokenizer's o200k_base codec (go generate; the
// file is committed, so a build needs no generation). The format:
//
//	"o200k_base 1\n"  the format's name and version
//	4 bytes           N, the ranks, little-endian
//	N bytes           each rank's token length, 0 for a rank with no token
//	the tokens' bytes, in rank order, back to back
package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"log"
	"os"

	"github.com/tiktoken-go/tokenizer/codec"
)

func main() {
	c := codec.NewO200kBase()
	// The special tokens (<|endoftext|>, <|endofprompt|>) are not ranks of
	// the byte-pair encoding: Count never yields them from text.
	const n = 199998
	var lens, toks bytes.Buffer
	seen := 0
	for id := range n {
		s, err := c.Decode([]uint{uint(id)})
		if err != nil {
			lens.WriteByte(0)
			continue
		}
		if len(s) == 0 || len(s) > 255 {
			log.Fatalf("rank %d: a token of %d bytes", id, len(s))
		}
		lens.WriteByte(byte(len(s)))
		toks.WriteString(s)
		seen++
	}
	if _, err := c.Decode([]uint{n}); err == nil {
		log.Fatalf("rank %d has a token: the vocabulary is larger than %d", n, n)
	}
	var out bytes.Buffer
	out.WriteString(header)
	binary.Write(&out, binary.LittleEndian, uint32(n))
	out.Write(lens.Bytes())
	out.Write(toks.Bytes())
	if err := os.WriteFile("o200k_base.bin", out.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("o200k_base.bin: %d ranks, %d tokens, %d bytes\n", n, seen, out.Len())
}

const header = "o200k_base 1\n"
