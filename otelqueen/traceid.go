package otelqueen

import (
	"context"
	"encoding/hex"
	"strings"

	"go.opentelemetry.io/otel/trace"
)

// TraceID returns the W3C trace id of ctx's span as a UUID ("4bf92f35-77b3-4da6-a3ce-929d0e0e4736"),
// the form PushItem.TraceID takes, or "" when ctx has no span.
func TraceID(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.HasTraceID() {
		return ""
	}
	id := sc.TraceID()
	var b [36]byte
	hex.Encode(b[0:8], id[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], id[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], id[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], id[8:10])
	b[23] = '-'
	hex.Encode(b[24:36], id[10:16])
	return string(b[:])
}

// parseTraceID reads a message's trace id, a UUID in its canonical text form.
func parseTraceID(s string) (trace.TraceID, bool) {
	var id trace.TraceID
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return id, false
	}
	raw := strings.ReplaceAll(s, "-", "")
	if n, err := hex.Decode(id[:], []byte(raw)); err != nil || n != len(id) {
		return trace.TraceID{}, false
	}
	return id, id.IsValid()
}

// producerContext is the remote span context standing for a message's producer. Only the
// trace id travels with a message, so its span id is derived from the trace id (the same for
// every consumer of that trace) and it counts as sampled.
func producerContext(id trace.TraceID) trace.SpanContext {
	var span trace.SpanID
	copy(span[:], id[8:])
	if !span.IsValid() {
		copy(span[:], id[:8])
	}
	return trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: id, SpanID: span, TraceFlags: trace.FlagsSampled, Remote: true,
	})
}
