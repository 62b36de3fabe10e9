package replayer

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpbench/bench/llm/reqkey"
	"github.com/mcpbench/bench/traces"
)

func minuteNormalizer() reqkey.Normalizer {
	re := regexp.MustCompile(`\d\d:\d\d`)
	return func(s string) (string, []traces.Normalized) {
		var orig []traces.Normalized
		return re.ReplaceAllStringFunc(s, func(m string) string {
			orig = append(orig, traces.Normalized{Placeholder: "<hh:mm>", Original: m})
			return "<hh:mm>"
		}), orig
	}
}

// clockRun is handRun with a server that prints the minute in its tool
// result, recorded under a normaliser at 10:00.
func clockRun(t *testing.T, n reqkey.Normalizer) *traces.Run {
	t.Helper()
	run := handRun(t)
	req := baseRequest()
	req.Messages[2].Content = `it is 10:00`
	e := reqkey.NewEncoder(reqkey.Scope{Provider: "openai", Model: "openai:gpt-x"}, nil)
	e.SetNormalizer(n)
	tr, key, err := e.Encode(req)
	if err != nil {
		t.Fatal(err)
	}
	run.Events[2].Turn.Request, run.Events[2].Turn.Key = tr, key
	return run
}

// TestNormalizedReplay: a recording keyed under the profile's normaliser
// replays clean an hour later (the server now prints 11:00) when the
// replayer keys under the same normaliser, and goes stale without it, with
// the tool result named as what changed.
func TestNormalizedReplay(t *testing.T) {
	later := baseRequest()
	later.Messages[2].Content = `it is 11:00`
	replay := func(n reqkey.Normalizer) (*Model, error) {
		m, err := New(clockRun(t, minuteNormalizer()), &Options{Normalize: n})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Generate(context.Background(), turn0()); err != nil {
			t.Fatal(err)
		}
		_, err = m.Generate(context.Background(), later)
		return m, err
	}
	m, err := replay(minuteNormalizer())
	if err != nil || m.Served() != 2 || len(m.Misses()) != 0 {
		t.Fatalf("with the normaliser: err %v, served %d, misses %v", err, m.Served(), m.Misses())
	}
	m, err = replay(nil)
	var miss *MissError
	if !errors.As(err, &miss) || miss.Outcome() != traces.OutcomeStale {
		t.Fatalf("without the normaliser: err %v, want a stale miss", err)
	}
	if expl := miss.Miss.Explain(); !strings.Contains(expl, "11:00") {
		t.Errorf("the miss does not show the tool result that changed:\n%s", expl)
	}
	// A miss for another reason, under the normaliser, does not list the
	// minute as a difference.
	other := baseRequest()
	other.Messages[2].Content = `it is 11:00, and the WLAN is gone`
	m, _ = New(clockRun(t, minuteNormalizer()), &Options{Normalize: minuteNormalizer()})
	m.Generate(context.Background(), turn0())
	_, err = m.Generate(context.Background(), other)
	if !errors.As(err, &miss) {
		t.Fatalf("changed result: err %v, want a miss", err)
	}
	if expl := miss.Miss.Explain(); strings.Contains(expl, "11:00") || !strings.Contains(expl, "gone") {
		t.Errorf("explanation under the normaliser:\n%s", expl)
	}
}
