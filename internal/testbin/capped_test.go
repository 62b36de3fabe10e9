package testbin

import (
	"os/exec"
	"testing"
	"time"
)

// TestRunCappedMeasuresTheProgram: the peak RSS RunCapped reports is the
// program's own — a test process that has grown large does not inflate it
// (Linux carries a vfork parent's peak over the exec) — and the cap holds.
func TestRunCappedMeasuresTheProgram(t *testing.T) {
	big := make([]byte, 400<<20)
	for i := range big {
		big[i] = 1
	}
	r, err := RunCapped(exec.Command("/bin/true"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode != 0 || r.PeakRSS > 100<<20 {
		t.Errorf("/bin/true after the test touched 400 MB: %s", r)
	}
	_ = big[len(big)-1]
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	r, err = RunCapped(exec.Command(py, "-c", "x = bytearray(3 << 30)"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode == 0 {
		t.Errorf("3 GiB allocated under a %d MiB cap: %s", MemoryCap>>20, r)
	}
}
