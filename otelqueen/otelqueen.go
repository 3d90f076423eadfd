// Package otelqueen traces and measures queen-go consumers and clients with OpenTelemetry,
// following the OpenTelemetry semantic conventions for messaging.
//
// Wire it into a client with [queen.WithMiddleware] and [queen.WithHooks]:
//
//	client, err := queen.New(url,
//		queen.WithMiddleware(otelqueen.Middleware()), // a process span and metrics per handler call
//		queen.WithHooks(otelqueen.Hooks()),           // request durations, sent messages, retries, lost leases
//	)
//
// and carry the trace across the queue by pushing with the producer's trace id ([TraceID]):
//
//	q.Push(ctx, queen.PushItem{Data: order, TraceID: otelqueen.TraceID(ctx)})
//
// The handler of that message then runs in a span of the same trace. Spans and metrics go to
// the global providers unless [WithTracerProvider] and [WithMeterProvider] say otherwise; to
// serve the metrics to Prometheus, give WithMeterProvider a meter provider whose reader is the
// OpenTelemetry Prometheus exporter (go.opentelemetry.io/otel/exporters/prometheus).
//
// # Spans
//
// [Middleware] starts one span of kind Consumer per handler call, named "process <queue>": one
// per message for an Each handler, one per batch for a [queen.BatchHandler]. Its attributes are
// messaging.system ("queen"), messaging.operation.name and messaging.operation.type
// ("process"), messaging.destination.name (the queue), messaging.destination.partition.id
// (the partition's name), messaging.consumer.group.name (absent in queue mode),
// messaging.message.id and messaging.queen.message.delivery_attempt (for one message),
// messaging.batch.message_count (for a batch), messaging.queen.outcome and, unless the
// outcome is completed, error.type. The span's status is Error for the failed, dlq and panic
// outcomes.
//
// The outcome is what the handler's return means to the loop: completed, failed, retry or
// dlq (see [queen.OutcomeOf]), panic for a handler that panicked (acked failed), and lease_lost
// when the loop lost the batch's lease (nothing is acked). A handler stopped by shutdown that
// returns an error (other than [queen.DeadLetter]) is acked retry, and recorded as retry.
//
// # error.type
//
// error.type is a name from a short, fixed list, so that a dashboard can group by it and a
// metric keeps a handful of series, as the conventions ask; never a Go type or a message:
//
//   - panic and lease_lost, for those outcomes;
//   - handler_timeout, for a handler that returned an error after HandlerTimeout ended its ctx;
//   - the SDK's sentinel the error wraps: outcome_unknown ([queen.ErrOutcomeUnknown], whatever
//     its resend got), lease_lost, handler_timeout, lease_expired, already_settled, transaction_failed, closed,
//     invalid_option;
//   - timeout (a deadline, or a network timeout) and canceled;
//   - 4xx or 5xx, the status class of the broker's error answer ([queen.APIError]; a 0.15
//     database failure answered as a 200 is 5xx);
//   - network, for a connection that failed;
//   - _OTHER for anything else, such as a handler's own error.
//
// A message's trace id is all the broker keeps of its producer's context: 128 bits, no span
// id and no sampling decision. When every message of a call carries the same trace id, the
// span is made a child of that trace, under a parent span id derived from the trace id itself
// (tracing backends show it as a span of the producer's trace whose parent was not recorded),
// and it is sampled as if that parent was: this is what puts consumers in their producer's
// trace. Each message's trace is also linked, as the conventions ask; a batch that mixes
// traces is linked to each and parented by the handler's ctx.
//
// # Metrics
//
// Middleware records messaging.process.duration (seconds, a histogram) and
// messaging.client.consumed.messages (a counter of messages handed to a handler), with
// messaging.system, messaging.operation.name, messaging.destination.name,
// messaging.consumer.group.name, and on the duration messaging.queen.outcome and error.type.
// Partitions are left out of metrics, as a queue may have very many of them.
//
// [Hooks] records, from every HTTP attempt ([queen.RequestEvent]),
// messaging.client.operation.duration (seconds, per attempt) with messaging.operation.name
// pop, ack, push, renew or transaction, its messaging.operation.type (receive, settle, send)
// where there is one, server.address, server.port and error.type (4xx or 5xx for an error
// answer, or timeout, canceled or network when none came); messaging.client.sent.messages
// (messages in answered pushes and transactions); messaging.queen.client.retries (attempts
// after the first); and messaging.queen.lease.lost (leases the broker refused to renew, by
// messaging.destination.name). Requests that are not messaging operations (administration,
// health) are not recorded.
package otelqueen

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	queen "github.com/queenmq/queen-go"
)

// scope is the instrumentation scope of every span and instrument.
const scope = "github.com/queenmq/queen-go/otelqueen"

// Option configures Middleware and Hooks.
type Option func(*config)

type config struct {
	tp trace.TracerProvider
	mp metric.MeterProvider
}

// WithTracerProvider sets where spans go. Default: the global provider (otel.GetTracerProvider).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) {
		if tp != nil {
			c.tp = tp
		}
	}
}

// WithMeterProvider sets where metrics go. Default: the global provider (otel.GetMeterProvider).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) {
		if mp != nil {
			c.mp = mp
		}
	}
}

func newConfig(opts []Option) config {
	c := config{tp: otel.GetTracerProvider(), mp: otel.GetMeterProvider()}
	for _, opt := range opts {
		opt(&c)
	}
	return c
}

func (c config) tracer() trace.Tracer {
	return c.tp.Tracer(scope, trace.WithInstrumentationVersion(queen.Version),
		trace.WithSchemaURL(semconv.SchemaURL))
}

func (c config) meter() metric.Meter {
	return c.mp.Meter(scope, metric.WithInstrumentationVersion(queen.Version),
		metric.WithSchemaURL(semconv.SchemaURL))
}
