package otelqueen_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"

	"github.com/queenmq/queen-go/otelqueen"
)

func TestTraceIDIsTheSpansTraceIDAsAUUID(t *testing.T) {
	t.Parallel()
	assert.Empty(t, otelqueen.TraceID(context.Background()))
	id, err := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	require.NoError(t, err)
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: id, SpanID: trace.SpanID{1}})
	ctx := trace.ContextWithSpanContext(context.Background(), sc)
	assert.Equal(t, "4bf92f35-77b3-4da6-a3ce-929d0e0e4736", otelqueen.TraceID(ctx))
}
