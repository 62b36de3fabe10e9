package otlp

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// encode converts a run's spans to one OTLP TracesData and writes it as
// OTLP JSON: the protobuf JSON mapping with lowerCamelCase names and enums
// as integers, except that trace and span IDs are hex strings, not base64
// (the OTLP/JSON rule). protojson varies its whitespace on purpose, so its
// output is decoded and encoded again (sorted keys, no spaces): the same
// run gives the same bytes.
func encode(r Run, b *built) ([]byte, error) {
	spans := slices.Clone(b.spans)
	// In the order they were started (the run's order), not the order
	// they ended.
	slices.SortStableFunc(spans, func(x, y sdktrace.ReadOnlySpan) int {
		return b.order[x.SpanContext().SpanID()] - b.order[y.SpanContext().SpanID()]
	})
	m := r.Run.Manifest
	res := []attribute.KeyValue{
		attribute.String("service.name", "bench"),
		attribute.String("bench.server.name", m.Server.Name),
	}
	scope := &commonpb.InstrumentationScope{Name: ScopeName}
	out := &tracepb.TracesData{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource:   &resourcepb.Resource{Attributes: keyValues(res)},
		ScopeSpans: []*tracepb.ScopeSpans{{Scope: scope, Spans: make([]*tracepb.Span, 0, len(spans))}},
	}}}
	for _, s := range spans {
		out.ResourceSpans[0].ScopeSpans[0].Spans = append(out.ResourceSpans[0].ScopeSpans[0].Spans, span(s))
	}
	raw, err := protojson.MarshalOptions{UseEnumNumbers: true}.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encoding OTLP JSON: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("re-reading OTLP JSON: %w", err)
	}
	if err := hexIDs(doc); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("encoding OTLP JSON: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// idFields are the OTLP/JSON fields that hold IDs as hex.
var idFields = map[string]bool{"traceId": true, "spanId": true, "parentSpanId": true}

// hexIDs rewrites, everywhere in doc, the ID fields protojson wrote in
// base64 as hex.
func hexIDs(doc any) error {
	switch v := doc.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && idFields[k] {
				b, err := base64.StdEncoding.DecodeString(s)
				if err != nil {
					return fmt.Errorf("OTLP JSON field %s: %w", k, err)
				}
				v[k] = hex.EncodeToString(b)
				continue
			}
			if err := hexIDs(x); err != nil {
				return err
			}
		}
	case []any:
		for _, x := range v {
			if err := hexIDs(x); err != nil {
				return err
			}
		}
	}
	return nil
}

// span converts one SDK span to its OTLP form (what the SDK's OTLP
// exporters do in their internal tracetransform package).
func span(s sdktrace.ReadOnlySpan) *tracepb.Span {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	out := &tracepb.Span{
		TraceId:                tid[:],
		SpanId:                 sid[:],
		Name:                   s.Name(),
		Kind:                   tracepb.Span_SpanKind(s.SpanKind()), // the same numbers: INTERNAL 1, SERVER 2, CLIENT 3
		StartTimeUnixNano:      uint64(s.StartTime().UnixNano()),
		EndTimeUnixNano:        uint64(s.EndTime().UnixNano()),
		Attributes:             keyValues(s.Attributes()),
		DroppedAttributesCount: uint32(s.DroppedAttributes()),
		DroppedEventsCount:     uint32(s.DroppedEvents()),
		Flags:                  uint32(sc.TraceFlags()) | uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK),
	}
	if p := s.Parent(); p.IsValid() {
		psid := p.SpanID()
		out.ParentSpanId = psid[:]
	}
	for _, e := range s.Events() {
		out.Events = append(out.Events, &tracepb.Span_Event{
			TimeUnixNano: uint64(e.Time.UnixNano()), Name: e.Name, Attributes: keyValues(e.Attributes),
			DroppedAttributesCount: uint32(e.DroppedAttributeCount),
		})
	}
	switch st := s.Status(); st.Code {
	case codes.Error:
		out.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: st.Description}
	case codes.Ok:
		out.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_OK}
	}
	return out
}

func keyValues(attrs []attribute.KeyValue) []*commonpb.KeyValue {
	out := make([]*commonpb.KeyValue, 0, len(attrs))
	for _, kv := range attrs {
		out = append(out, &commonpb.KeyValue{Key: string(kv.Key), Value: anyValue(kv.Value)})
	}
	return out
}

func anyValue(v attribute.Value) *commonpb.AnyValue {
	switch v.Type() {
	case attribute.BOOL:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: v.AsBool()}}
	case attribute.INT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v.AsInt64()}}
	case attribute.FLOAT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v.AsFloat64()}}
	case attribute.STRINGSLICE:
		var vals []*commonpb.AnyValue
		for _, s := range v.AsStringSlice() {
			vals = append(vals, &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}})
		}
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: vals}}}
	}
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v.Emit()}}
}
