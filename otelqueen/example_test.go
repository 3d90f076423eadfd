package otelqueen_test

import (
	"context"
	"fmt"
	"log"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/otelqueen"
	"github.com/queenmq/queen-go/queentest"
)

// Wire otelqueen into a client, and carry the producer's trace to the consumers: the handler's
// span lands in the trace of the span that pushed the message. Spans and metrics are kept in
// memory here; a program gives its own providers (an OTLP exporter, Prometheus).
func Example() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	metrics := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(metrics))
	defer func() { _ = mp.Shutdown(context.Background()) }()

	srv, err := queentest.Start() // the reference broker, in memory, on 127.0.0.1
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	tel := []otelqueen.Option{otelqueen.WithTracerProvider(tp), otelqueen.WithMeterProvider(mp)}
	client, err := queen.New(srv.URL(),
		queen.WithMiddleware(otelqueen.Middleware(tel...)), // spans and process metrics; give it first
		queen.WithHooks(otelqueen.Hooks(tel...)))           // client operation metrics
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	// The producer pushes inside a span of its own, with that span's trace id.
	ctx, checkout := tp.Tracer("shop").Start(context.Background(), "checkout")
	_, err = client.Queue("orders").Push(ctx, queen.PushItem{Data: map[string]int{"id": 1}, TraceID: otelqueen.TraceID(ctx)})
	checkout.End()
	if err != nil {
		log.Fatal(err)
	}
	err = client.Queue("orders").Group("billing").SubscriptionMode(queen.SubscribeAll).Limit(1).Each().
		Consume(context.Background(), func(context.Context, *queen.Message) error { return nil })
	if err != nil {
		log.Fatal(err)
	}

	for _, s := range spans.Ended() {
		if s.Name() != "checkout" {
			fmt.Printf("span %q (%s), in the checkout's trace: %t\n", s.Name(), s.SpanKind(),
				s.SpanContext().TraceID() == checkout.SpanContext().TraceID())
		}
	}
	var rm metricdata.ResourceMetrics
	if err := metrics.Collect(context.Background(), &rm); err != nil {
		log.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == "messaging.process.duration" {
				fmt.Println(m.Name, "recorded; unit:", m.Unit)
			}
		}
	}
	// Output:
	// span "process orders" (consumer), in the checkout's trace: true
	// messaging.process.duration recorded; unit: s
}
