package recorder

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/traces"
)

// checkFastEncodings asserts that the spliced encodings of req equal the
// reference ones: the canonical json.Marshal and RequestKey.
func checkFastEncodings(t *testing.T, req *llm.Request, split int) {
	t.Helper()
	a, err := encodeTools(req.Tools[:split])
	if err != nil {
		t.Fatalf("tools do not encode: %v", err)
	}
	b, err := encodeTools(req.Tools[split:])
	if err != nil {
		t.Fatalf("tools do not encode: %v", err)
	}
	enc := a.join(b)
	wantJSON, errW := json.Marshal(req)
	if errW == nil {
		if c, err := traces.Canonical(wantJSON); err == nil {
			wantJSON = c
		}
	}
	gotJSON, errG := requestJSON(req, enc)
	if (errW == nil) != (errG == nil) || !bytes.Equal(wantJSON, gotJSON) {
		t.Fatalf("requestJSON = %s (%v)\ncanonical json.Marshal  %s (%v)", gotJSON, errG, wantJSON, errW)
	}
	wantKey, errW := RequestKey("openai", "openai:gpt-4.1", req, "alerts-001", 3)
	gotKey, errG := requestKey("openai", "openai:gpt-4.1", req, enc, "alerts-001", 3)
	if (errW == nil) != (errG == nil) || wantKey != gotKey {
		t.Fatalf("requestKey = %s (%v), RequestKey = %s (%v)", gotKey, errG, wantKey, errW)
	}
	// Turn after turn, as the loop grows a request, the incremental
	// encoder gives the same bytes.
	re := newReqEncoder(enc)
	for k := 1; k <= len(req.Messages); k++ {
		sub := *req
		sub.Messages = req.Messages[:k]
		checkReqEncoder(t, re, &sub, enc)
	}
}

func checkReqEncoder(t *testing.T, re *reqEncoder, req *llm.Request, enc *encodedTools) {
	t.Helper()
	wantKey, errK := requestKey("openai", "openai:gpt-4.1", req, enc, "alerts-001", 3)
	wantJSON, errJ := requestJSON(req, enc)
	gotKey, gotJSON, err := re.encode("openai", "openai:gpt-4.1", req, "alerts-001", 3)
	if errK != nil || errJ != nil {
		if err == nil {
			t.Fatalf("%d messages: reqEncoder accepted what requestKey (%v) or requestJSON (%v) refuse", len(req.Messages), errK, errJ)
		}
		return
	}
	if err != nil || gotKey != wantKey || !bytes.Equal(gotJSON, wantJSON) {
		t.Fatalf("%d messages: reqEncoder = %s %s (%v)\nwant %s %s", len(req.Messages), gotKey.Short(), gotJSON, err, wantKey.Short(), wantJSON)
	}
}

// A model that edits the request it was given (a message already encoded)
// gets the encoding of what it changed, not of what was.
func TestReqEncoderMessageChanged(t *testing.T) {
	req := sampleRequest()
	enc, err := encodeTools(req.Tools)
	if err != nil {
		t.Fatal(err)
	}
	re := newReqEncoder(enc)
	checkReqEncoder(t, re, req, enc)
	edited := *req
	edited.Messages = append([]llm.Message(nil), req.Messages...)
	edited.Messages[2].Content = "edited"
	edited.Messages[1].ToolCalls = []llm.ToolCall{{ID: "other", Name: "list_aps", Arguments: json.RawMessage(`{}`)}}
	checkReqEncoder(t, re, &edited, enc)
	checkReqEncoder(t, re, &llm.Request{Messages: req.Messages[:1], Tools: req.Tools}, enc) // shorter
	bad := *req
	bad.Messages = append([]llm.Message(nil), req.Messages...)
	bad.Messages = append(bad.Messages, llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "x", Name: "a", Arguments: json.RawMessage(`{"a":`)}}})
	checkReqEncoder(t, re, &bad, enc)
}

func sampleRequest() *llm.Request {
	temp, seed := 0.2, int64(7)
	return &llm.Request{
		System: SystemPrompt + " <&> \u2028 é",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "List the <down> APs & their sites"},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_x9", Name: "list_aps", Arguments: json.RawMessage(`{ "status" : "Down", "limit": 1.50e2 }`)}}},
			{Role: llm.RoleTool, ToolCallID: "call_x9", Content: `{"items":[{"serial":"CN1","name":"AP <1>"}]}`, IsError: true},
		},
		Tools: []llm.Tool{
			{Name: "list_aps", Description: "List APs. Filters: site, <status>.", InputSchema: json.RawMessage(`{"type":"object","properties":{"status":{"enum":["Up","Down"],"description":"é & <b>"}},"required":["status"]}`)},
			{Name: "get_ap", InputSchema: json.RawMessage(`{ "type": "object", "properties": {"serial": {"type":"string","maxLength": 1e2}} }`)},
			{Name: llm.SubmitTool, Description: SubmitDescription, InputSchema: json.RawMessage(`{"type":"object","properties":{"aps":{"type":"array"}}}`)},
		},
		ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceAuto},
		Sampling:   llm.Sampling{Temperature: &temp, Seed: &seed, MaxTokens: 512},
	}
}

// TestFastEncodings: the loop's spliced encodings are byte for byte the
// reference ones, whatever the split between server tools and submit_result.
func TestFastEncodings(t *testing.T) {
	req := sampleRequest()
	for split := 0; split <= len(req.Tools); split++ {
		checkFastEncodings(t, req, split)
	}
	bare := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
	checkFastEncodings(t, bare, 0)
	noSystem := sampleRequest()
	noSystem.System, noSystem.ToolChoice, noSystem.Sampling = "", llm.ToolChoice{}, llm.Sampling{}
	checkFastEncodings(t, noSystem, 1)
	// A request with another number of tools than were encoded is
	// refused, not mis-keyed.
	enc, _ := encodeTools(req.Tools[:1])
	if _, err := requestKey("p", "m", req, enc, "s", 0); err == nil {
		t.Error("requestKey accepted a request with other tools than the encoded ones")
	}
}

func FuzzFastEncodings(f *testing.F) {
	f.Add("List the <down> APs", `{"status":"Down"}`, `{"type":"object"}`, "desc & <x>", 1)
	f.Add("é\u2028", `{"a":[1,2.0,-0,1e400]}`, `{"type":"object","properties":{"a":{"type":"array"}}}`, "", 0)
	f.Add("", `{}`, `{"$schema":"x","type":"object"}`, "\x00\x1f", 2)
	f.Fuzz(func(t *testing.T, content, args, schema, desc string, split int) {
		if !json.Valid([]byte(args)) || !json.Valid([]byte(schema)) {
			return
		}
		req := sampleRequest()
		req.Messages[0].Content = content
		req.Messages[1].ToolCalls[0].Arguments = json.RawMessage(args)
		req.Tools[1].InputSchema = json.RawMessage(schema)
		req.Tools[1].Description = desc
		if split < 0 {
			split = -split
		}
		checkFastEncodings(t, req, split%(len(req.Tools)+1))
	})
}
