package scenarios

import "testing"

// BenchmarkGolden loads the embedded suite: most of a command's start-up.
func BenchmarkGolden(b *testing.B) {
	for b.Loop() {
		if _, err := Golden(); err != nil {
			b.Fatal(err)
		}
	}
}
