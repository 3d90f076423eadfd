package otelqueen_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/otelqueen"
	"github.com/queenmq/queen-go/queentest"
)

// rig is a reference broker and a client instrumented with otelqueen, recording into memory.
type rig struct {
	srv    *queentest.Server
	client *queen.Client
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
}

func newRig(t *testing.T, srvOpts []queentest.Option, opts ...queen.Option) *rig {
	t.Helper()
	r := &rig{srv: queentest.NewServer(t, srvOpts...), spans: tracetest.NewSpanRecorder(),
		reader: sdkmetric.NewManualReader()}
	r.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	t.Cleanup(func() {
		_ = r.tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	otelOpts := []otelqueen.Option{otelqueen.WithTracerProvider(r.tp), otelqueen.WithMeterProvider(mp)}
	all := append([]queen.Option{
		queen.WithRetry(2, time.Millisecond, 5*time.Millisecond),
		queen.WithMiddleware(otelqueen.Middleware(otelOpts...)),
		queen.WithHooks(otelqueen.Hooks(otelOpts...)),
	}, opts...)
	c, err := queen.New(r.srv.URL(), all...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	r.client = c
	return r
}

// processSpans are the ended spans the middleware made, in the order they ended.
func (r *rig) processSpans() []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range r.spans.Ended() {
		if s.InstrumentationScope().Name == "github.com/queenmq/queen-go/otelqueen" {
			out = append(out, s)
		}
	}
	return out
}

func (r *rig) metrics(t *testing.T) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.reader.Collect(context.Background(), &rm))
	return rm
}

// metricNamed finds one metric of the collection, failing the test when it is absent.
func metricNamed(t *testing.T, rm metricdata.ResourceMetrics, name string) metricdata.Metrics {
	t.Helper()
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m
			}
		}
	}
	t.Fatalf("no metric %s", name)
	return metricdata.Metrics{}
}

// attrsOf turns an attribute set into a map, for comparing.
func attrsOf(set attribute.Set) map[string]any {
	out := map[string]any{}
	for _, kv := range set.ToSlice() {
		out[string(kv.Key)] = kv.Value.AsInterface()
	}
	return out
}

func spanAttrs(s sdktrace.ReadOnlySpan) map[string]any {
	return attrsOf(attribute.NewSet(s.Attributes()...))
}

// histogramCounts sums a histogram's counts by the value of one attribute.
func histogramCounts(t *testing.T, m metricdata.Metrics, key string) map[string]uint64 {
	t.Helper()
	h, ok := m.Data.(metricdata.Histogram[float64])
	require.True(t, ok, "%s is a float histogram", m.Name)
	return tally(h.DataPoints, key, func(dp metricdata.HistogramDataPoint[float64]) (attribute.Set, uint64) {
		return dp.Attributes, dp.Count
	})
}

// sumBy sums an integer counter by the value of one attribute.
func sumBy(t *testing.T, m metricdata.Metrics, key string) map[string]int64 {
	t.Helper()
	s, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "%s is an int sum", m.Name)
	return tally(s.DataPoints, key, func(dp metricdata.DataPoint[int64]) (attribute.Set, int64) {
		return dp.Attributes, dp.Value
	})
}

// tally adds up the points' numbers by the value each has for the attribute key ("" without it).
func tally[P any, N int64 | uint64](points []P, key string, of func(P) (attribute.Set, N)) map[string]N {
	out := map[string]N{}
	for _, p := range points {
		attrs, n := of(p)
		v, _ := attrs.Value(attribute.Key(key))
		out[v.String()] += n
	}
	return out
}

// The shortest lease the SDK accepts, and a renewal often enough to notice its loss at once.
const (
	queenSecond = time.Second
	renewEvery  = 10 * time.Millisecond
)
