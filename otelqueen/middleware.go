package otelqueen

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/semconv/v1.43.0/messagingconv"
	"go.opentelemetry.io/otel/trace"

	queen "github.com/queenmq/queen-go"
)

// Attributes of queen's own, named as the conventions name a system's attributes.
const (
	outcomeKey         = attribute.Key("messaging.queen.outcome")
	deliveryAttemptKey = attribute.Key("messaging.queen.message.delivery_attempt")
)

// The outcomes besides the ack statuses.
const (
	outcomePanic     = "panic"
	outcomeLeaseLost = "lease_lost"
)

// queueModeGroup is the broker's name for the group of consumers that name none.
const queueModeGroup = "__QUEUE_MODE__"

// durationBuckets are the boundaries, in seconds, the conventions advise for messaging durations.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// Middleware returns a queen.Middleware that runs every handler call in a process span and
// records messaging.process.duration and messaging.client.consumed.messages (see the package
// documentation). Give it first to queen.WithMiddleware, so that its span covers the other
// middleware and it records the outcome they settle on.
func Middleware(opts ...Option) queen.Middleware {
	cfg := newConfig(opts)
	tracer := cfg.tracer()
	meter := cfg.meter()
	duration, err := messagingconv.NewProcessDuration(meter, metric.WithExplicitBucketBoundaries(durationBuckets...))
	handleErr(err)
	consumed, err := messagingconv.NewClientConsumedMessages(meter)
	handleErr(err)

	return func(ctx context.Context, msgs []*queen.Message, next func(context.Context) error) error {
		if len(msgs) == 0 {
			return next(ctx)
		}
		first := msgs[0]
		base := []attribute.KeyValue{
			semconv.MessagingSystemKey.String("queen"),
			semconv.MessagingOperationName("process"),
			semconv.MessagingDestinationName(first.Queue),
		}
		if g := first.ConsumerGroup; g != "" && g != queueModeGroup {
			base = append(base, semconv.MessagingConsumerGroupName(g))
		}
		consumed.AddSet(ctx, int64(len(msgs)), attribute.NewSet(base...))

		ctx, span := startProcess(ctx, tracer, msgs, base)
		started := time.Now()
		err := next(ctx)
		took := time.Since(started)

		outcome := outcomeOf(ctx, err)
		ended := []attribute.KeyValue{outcomeKey.String(outcome)}
		if outcome != string(queen.StatusCompleted) {
			ended = append(ended, errorType(ctx, outcome, err))
		}
		span.SetAttributes(ended...)
		switch outcome {
		case string(queen.StatusFailed), string(queen.StatusDLQ), outcomePanic:
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
		duration.RecordSet(ctx, took.Seconds(), attribute.NewSet(append(base, ended...)...))
		return err
	}
}

// startProcess starts the process span of one handler call, in the producer's trace when
// the messages share one, linked to every message's trace (see the package documentation).
func startProcess(ctx context.Context, tracer trace.Tracer, msgs []*queen.Message, base []attribute.KeyValue) (context.Context, trace.Span) {
	first := msgs[0]
	attrs := append(base[:len(base):len(base)],
		semconv.MessagingOperationTypeProcess,
		semconv.MessagingDestinationPartitionID(first.Partition))
	if len(msgs) == 1 {
		attrs = append(attrs, semconv.MessagingMessageID(first.ID))
		if first.DeliveryAttempt > 0 {
			attrs = append(attrs, deliveryAttemptKey.Int(first.DeliveryAttempt))
		}
	} else {
		attrs = append(attrs, semconv.MessagingBatchMessageCount(len(msgs)))
	}

	var links []trace.Link
	shared, same := trace.TraceID{}, true
	for i, m := range msgs {
		id, ok := parseTraceID(m.TraceID)
		if !ok {
			same = false
			continue
		}
		if i == 0 {
			shared = id
		} else if id != shared {
			same = false
		}
		if len(links) == 0 || links[len(links)-1].SpanContext.TraceID() != id {
			links = append(links, trace.Link{SpanContext: producerContext(id)})
		}
	}
	if same && shared.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, producerContext(shared))
	}
	return tracer.Start(ctx, "process "+first.Queue, trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(attrs...), trace.WithLinks(links...))
}

// outcomeOf names what the loop makes of a handler call that returned err on ctx.
func outcomeOf(ctx context.Context, err error) string {
	var p *queen.PanicError
	switch {
	case ctx.Err() != nil && errors.Is(context.Cause(ctx), queen.ErrLeaseLost):
		return outcomeLeaseLost
	case errors.As(err, &p):
		return outcomePanic
	case err != nil && ctx.Err() != nil && !timedOut(ctx) && queen.OutcomeOf(err) != queen.StatusDLQ:
		return string(queen.StatusRetry) // a stop is not the message's fault; a timeout is
	}
	return string(queen.OutcomeOf(err))
}

// timedOut says whether HandlerTimeout ended the handler's ctx.
func timedOut(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), queen.ErrHandlerTimeout)
}

// errorType is the error.type of an outcome other than completed: panic or lease_lost for
// those outcomes, handler_timeout for an error returned once HandlerTimeout ended ctx, else the
// name of the handler's error (see errorTypeOf).
func errorType(ctx context.Context, outcome string, err error) attribute.KeyValue {
	switch {
	case outcome == outcomePanic || outcome == outcomeLeaseLost:
		return semconv.ErrorTypeKey.String(outcome)
	case err == nil:
		return semconv.ErrorTypeOther
	case timedOut(ctx):
		return semconv.ErrorTypeKey.String("handler_timeout")
	}
	return semconv.ErrorTypeKey.String(errorTypeOf(err))
}

func handleErr(err error) {
	if err != nil {
		otel.Handle(err)
	}
}
