// Observability is a worker that is watched: its handler calls are traced (spans printed to
// stdout) and measured (Prometheus metrics served on /metrics) through otelqueen. Each order
// is pushed inside a "checkout" span with that span's trace id, so the span of its handling
// lands in the checkout's trace.
//
//	go run .                        # pushes 20 demo orders, handles them, prints its metrics, exits
//	go run . -demo 0 -addr :9464    # handles orders until Ctrl-C; scrape http://localhost:9464/metrics
//
// Its module is its own, so that the SDK's module never depends on OpenTelemetry or Prometheus.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/examples/internal/exampleenv"
	"github.com/queenmq/queen-go/otelqueen"
)

func main() {
	exampleenv.Main("observability", func(ctx context.Context, out io.Writer) error {
		return run(ctx, os.Args[1:], out)
	})
}

// telemetry is where the worker's spans and metrics go.
type telemetry struct {
	tracer   *sdktrace.TracerProvider
	meter    *sdkmetric.MeterProvider
	registry *prometheus.Registry
}

// newTelemetry prints spans to traces and keeps metrics for a Prometheus scrape.
func newTelemetry(traces io.Writer) (*telemetry, error) {
	spans, err := stdouttrace.New(stdouttrace.WithWriter(traces))
	if err != nil {
		return nil, err
	}
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry))
	if err != nil {
		return nil, err
	}
	return &telemetry{
		tracer:   sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans)),
		meter:    sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter)),
		registry: registry,
	}, nil
}

// metricsHandler serves the Prometheus text format.
func (t *telemetry) metricsHandler() http.Handler {
	return promhttp.HandlerFor(t.registry, promhttp.HandlerOpts{})
}

// clientOptions instrument a queen.Client.
func (t *telemetry) clientOptions() []queen.Option {
	opts := []otelqueen.Option{otelqueen.WithTracerProvider(t.tracer), otelqueen.WithMeterProvider(t.meter)}
	return []queen.Option{
		queen.WithMiddleware(otelqueen.Middleware(opts...)),
		queen.WithHooks(otelqueen.Hooks(opts...)),
	}
}

func (t *telemetry) shutdown(ctx context.Context) error {
	return errors.Join(t.tracer.Shutdown(ctx), t.meter.Shutdown(ctx))
}

type order struct {
	ID    int `json:"id"`
	Cents int `json:"cents"`
}

func run(ctx context.Context, args []string, out io.Writer) error {
	flags := flag.NewFlagSet("observability", flag.ContinueOnError)
	demo := flags.Int("demo", 20, "push this many demo orders and exit once they are handled (0: run until signalled)")
	addr := flags.String("addr", "127.0.0.1:0", "where to serve /metrics")
	traces := flags.Bool("traces", true, "print spans to stdout")
	flags.SetOutput(out)
	if err := flags.Parse(args); err != nil {
		return err
	}

	spanOut := io.Discard
	if *traces {
		spanOut = out
	}
	tel, err := newTelemetry(spanOut)
	if err != nil {
		return err
	}
	defer func() { _ = tel.shutdown(context.WithoutCancel(ctx)) }()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", tel.metricsHandler())
	metrics := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = metrics.Serve(ln) }()
	defer func() { _ = metrics.Close() }()
	metricsURL := "http://" + ln.Addr().String() + "/metrics"
	fmt.Fprintln(out, "metrics on", metricsURL)

	client, closeAll, err := exampleenv.Connect(tel.clientOptions()...)
	if err != nil {
		return err
	}
	defer closeAll()
	if err := work(ctx, client, tel.tracer.Tracer("checkout"), *demo, out); err != nil {
		return err
	}
	if *demo > 0 {
		return printProcessMetrics(ctx, metricsURL, out)
	}
	return nil
}

// work pushes demo orders, each from its own checkout span, and handles orders: one in five
// is declined on its first delivery, so the metrics show failures and their redelivery.
func work(ctx context.Context, client *queen.Client, checkout trace.Tracer, demo int, out io.Writer) error {
	orders := client.Queue(exampleenv.QueueName("observability-orders"))
	for i := range demo {
		ctx, span := checkout.Start(ctx, "checkout")
		_, err := orders.Push(ctx, queen.PushItem{Data: order{ID: i, Cents: 100 * (i + 1)}, TraceID: otelqueen.TraceID(ctx)})
		span.End()
		if err != nil {
			return err
		}
	}
	consumer := orders.Group("billing").SubscriptionMode(queen.SubscribeAll)
	if demo > 0 {
		// Every declined order is handled twice. Should an order be lost on the way (filed as
		// a dead letter, say), the demo ends once nothing has come for a while, with counts
		// that say so, rather than wait for ever.
		consumer = consumer.Limit(demo + (demo+4)/5).IdleTimeout(5 * time.Second)
	}
	var mu sync.Mutex
	declined := map[string]bool{}
	completed := 0
	err := consumer.Each().Consume(ctx, func(ctx context.Context, m *queen.Message) error {
		var o order
		if err := m.Decode(&o); err != nil {
			return queen.DeadLetter(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if o.ID%5 == 0 && !declined[m.TransactionID] {
			declined[m.TransactionID] = true
			return errors.New("card declined")
		}
		completed++
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "orders handled: %d completed, %d declined once\n", completed, len(declined))
	return nil
}

// printProcessMetrics scrapes the worker's own /metrics and prints the process duration's
// counts, as a Prometheus server would see them.
func printProcessMetrics(ctx context.Context, url string, out io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		if strings.HasPrefix(lines.Text(), "messaging_process_duration_seconds_count") {
			fmt.Fprintln(out, lines.Text())
		}
	}
	return lines.Err()
}
