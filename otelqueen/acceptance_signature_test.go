package otelqueen_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/otelqueen"
)

// Every exported name of otelqueen keeps the signature callers compile against.
func TestAcceptanceOtelqueenSignatures(t *testing.T) {
	t.Parallel()
	var (
		_ func(...otelqueen.Option) queen.Middleware  = otelqueen.Middleware
		_ func(...otelqueen.Option) queen.Hooks       = otelqueen.Hooks
		_ func(context.Context) string                = otelqueen.TraceID
		_ func(trace.TracerProvider) otelqueen.Option = otelqueen.WithTracerProvider
		_ func(metric.MeterProvider) otelqueen.Option = otelqueen.WithMeterProvider
	)
	if got := otelqueen.TraceID(context.Background()); got != "" {
		t.Fatalf("TraceID of a ctx without a span = %q, want empty", got)
	}
}
