package otelqueen_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/otelqueen"
	"github.com/queenmq/queen-go/queentest"
)

// A message pushed inside a span is handled in a span of the same trace, with the attributes
// of the messaging conventions, and its handler runs under that span; a broker that does not
// count deliveries (0.15) gets no delivery attempt.
func TestConsumerSpanJoinsTheProducersTrace(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		r := newRig(t, m.Options())
		ctx, producer := r.tp.Tracer("test").Start(t.Context(), "produce")
		res, err := r.client.Queue("orders").Partition("eu").
			Push(ctx, queen.PushItem{Data: map[string]int{"n": 1}, TraceID: otelqueen.TraceID(ctx)})
		require.NoError(t, err)
		producer.End()

		var inHandler trace.SpanContext
		err = r.client.Queue("orders").Group("billing").SubscriptionMode(queen.SubscribeAll).Limit(1).Each().
			Consume(testutil.Context(t), func(ctx context.Context, m *queen.Message) error {
				inHandler = trace.SpanContextFromContext(ctx)
				return nil
			})
		require.NoError(t, err)

		spans := r.processSpans()
		require.Len(t, spans, 1)
		s := spans[0]
		want := producer.SpanContext().TraceID()
		assert.Equal(t, want, s.SpanContext().TraceID(), "the consumer span is in the producer's trace")
		assert.Equal(t, s.SpanContext(), inHandler, "the handler runs under the process span")
		assert.Equal(t, "process orders", s.Name())
		assert.Equal(t, trace.SpanKindConsumer, s.SpanKind())
		assert.Equal(t, codes.Unset, s.Status().Code)
		require.Len(t, s.Links(), 1)
		assert.Equal(t, want, s.Links()[0].SpanContext.TraceID())
		attrs := map[string]any{
			"messaging.system":                         "queen",
			"messaging.operation.name":                 "process",
			"messaging.operation.type":                 "process",
			"messaging.destination.name":               "orders",
			"messaging.destination.partition.id":       "eu",
			"messaging.consumer.group.name":            "billing",
			"messaging.message.id":                     res[0].MessageID,
			"messaging.queen.message.delivery_attempt": int64(1),
			"messaging.queen.outcome":                  "completed",
		}
		if m.V015 { // 0.15 does not count deliveries
			delete(attrs, "messaging.queen.message.delivery_attempt")
		}
		assert.Equal(t, attrs, spanAttrs(s))
	})
}

// Every outcome appears on its span and in the process duration, with its error.type.
func TestEveryOutcomeIsRecorded(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		r := newRig(t, m.Options())
		items := []queen.PushItem{}
		for _, tx := range []string{"ok", "fail", "retry", "dlq", "panic"} {
			items = append(items, queen.PushItem{Data: 1, TransactionID: tx})
		}
		_, err := r.client.Queue("outcomes").Push(t.Context(), items...)
		require.NoError(t, err)
		boom := errors.New("boom")
		// ok, fail (then completed), retry (then completed), dlq, panic (then completed): 8 calls.
		seen := map[string]bool{}
		err = r.client.Queue("outcomes").Limit(8).RetryBackoff(0, 0).Each().Consume(testutil.Context(t), func(_ context.Context, m *queen.Message) error {
			if seen[m.TransactionID] {
				return nil
			}
			seen[m.TransactionID] = true
			switch m.TransactionID {
			case "fail":
				return fmt.Errorf("charge: %w", &queen.APIError{StatusCode: 502, Message: "bank gateway"})
			case "retry":
				return queen.Retry(fmt.Errorf("%w: %w", boom, context.DeadlineExceeded))
			case "dlq":
				return queen.DeadLetter(&chargeError{})
			case "panic":
				panic("card reader on fire")
			}
			return nil
		})
		require.NoError(t, err)

		byOutcome := map[string][]map[string]any{}
		statuses := map[string]codes.Code{}
		for _, s := range r.processSpans() {
			a := spanAttrs(s)
			o := a["messaging.queen.outcome"].(string)
			byOutcome[o] = append(byOutcome[o], a)
			statuses[o] = s.Status().Code
		}
		assert.Len(t, byOutcome["completed"], 4)
		for _, o := range []string{"failed", "retry", "dlq", "panic"} {
			assert.Len(t, byOutcome[o], 1, o)
		}
		assert.Equal(t, "5xx", byOutcome["failed"][0]["error.type"])
		assert.Equal(t, "timeout", byOutcome["retry"][0]["error.type"])
		assert.Equal(t, "_OTHER", byOutcome["dlq"][0]["error.type"])
		assert.Equal(t, "panic", byOutcome["panic"][0]["error.type"])
		assert.NotContains(t, byOutcome["completed"][0], "error.type")
		assert.Equal(t, map[string]codes.Code{"completed": codes.Unset, "retry": codes.Unset,
			"failed": codes.Error, "dlq": codes.Error, "panic": codes.Error}, statuses)

		rm := r.metrics(t)
		assert.Equal(t, map[string]uint64{"completed": 4, "failed": 1, "retry": 1, "dlq": 1, "panic": 1},
			histogramCounts(t, metricNamed(t, rm, "messaging.process.duration"), "messaging.queen.outcome"))
		assert.Equal(t, map[string]int64{"outcomes": 8},
			sumBy(t, metricNamed(t, rm, "messaging.client.consumed.messages"), "messaging.destination.name"))
		assert.Equal(t, "s", metricNamed(t, rm, "messaging.process.duration").Unit)
	})
}

type chargeError struct{}

func (*chargeError) Error() string { return "card declined" }

// A handler that returns an error once HandlerTimeout ended its ctx failed its message (a
// timeout is the message's fault, unlike a stop), and error.type names the timeout.
func TestAHandlerTimeoutIsAFailureNamedHandlerTimeout(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		r := newRig(t, m.Options())
		_, err := r.client.Queue("slow").Push(t.Context(), queen.PushItem{Data: 1})
		require.NoError(t, err)
		calls := 0
		err = r.client.Queue("slow").HandlerTimeout(time.Millisecond).RetryBackoff(0, 0).Limit(2).Each().
			Consume(testutil.Context(t), func(ctx context.Context, _ *queen.Message) error {
				calls++
				if calls > 1 {
					return nil
				}
				<-ctx.Done() // ended by HandlerTimeout
				return ctx.Err()
			})
		require.NoError(t, err)

		spans := r.processSpans()
		require.Len(t, spans, 2)
		a := spanAttrs(spans[0])
		assert.Equal(t, "failed", a["messaging.queen.outcome"])
		assert.Equal(t, "handler_timeout", a["error.type"])
		assert.Equal(t, "completed", spanAttrs(spans[1])["messaging.queen.outcome"])
	})
}

// A lost lease is the batch's outcome and is counted.
func TestALostLeaseIsRecorded(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		r := newRig(t, m.Options(queentest.WithManualClock()))
		_, err := r.client.Queue("lost").Push(t.Context(), queen.PushItem{Data: 1})
		require.NoError(t, err)
		started := make(chan struct{})
		done := testutil.Go(func() error {
			return r.client.Queue("lost").LeaseTime(queenSecond).RenewLease(true, renewEvery).Limit(1).Each().
				Consume(testutil.Context(t), func(ctx context.Context, _ *queen.Message) error {
					close(started)
					<-ctx.Done()
					return ctx.Err()
				})
		})
		testutil.Recv(t, started, "the handler to start")
		expired := 2 * queenSecond
		if m.V015 { // 0.15 ignores the pop's lease time: the queue's default of 300 s applies
			expired = 301 * time.Second
		}
		r.srv.Advance(expired) // the broker lets the lease run out; the next renewal is refused
		require.NoError(t, testutil.Recv(t, done, "Consume to return"))

		spans := r.processSpans()
		require.Len(t, spans, 1)
		a := spanAttrs(spans[0])
		assert.Equal(t, "lease_lost", a["messaging.queen.outcome"])
		assert.Equal(t, "lease_lost", a["error.type"])
		assert.Equal(t, map[string]int64{"lost": 1},
			sumBy(t, metricNamed(t, r.metrics(t), "messaging.queen.lease.lost"), "messaging.destination.name"))
	})
}

// A BatchHandler gets one span for its batch; messages of one trace make it a child of that
// trace, messages of several link to each.
func TestABatchGetsOneSpanInItsSharedTraceOrLinkedToEach(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		r := newRig(t, m.Options())
		ctx, producer := r.tp.Tracer("test").Start(t.Context(), "produce")
		traceID := otelqueen.TraceID(ctx)
		producer.End()
		_, other := r.tp.Tracer("test").Start(t.Context(), "other")
		other.End()
		otherID := otelqueen.TraceID(trace.ContextWithSpan(t.Context(), other))

		q := r.client.Queue("batches")
		_, err := q.Partition("same").Push(t.Context(),
			queen.PushItem{Data: 1, TraceID: traceID}, queen.PushItem{Data: 2, TraceID: traceID}, queen.PushItem{Data: 3, TraceID: traceID})
		require.NoError(t, err)
		_, err = q.Partition("mixed").Push(t.Context(), queen.PushItem{Data: 1, TraceID: traceID}, queen.PushItem{Data: 2, TraceID: otherID})
		require.NoError(t, err)
		err = q.Batch(10).Partitions(2).Limit(5).Consume(testutil.Context(t), func(context.Context, []*queen.Message) error { return nil })
		require.NoError(t, err)

		spans := r.processSpans()
		require.Len(t, spans, 2)
		byPartition := map[string]int{}
		for i, s := range spans {
			byPartition[spanAttrs(s)["messaging.destination.partition.id"].(string)] = i
		}
		same, mixed := spans[byPartition["same"]], spans[byPartition["mixed"]]
		assert.Equal(t, producer.SpanContext().TraceID(), same.SpanContext().TraceID())
		assert.Equal(t, int64(3), spanAttrs(same)["messaging.batch.message_count"])
		assert.NotContains(t, spanAttrs(same), "messaging.message.id", "a batch has no one message id")
		assert.Len(t, same.Links(), 1)
		assert.NotEqual(t, producer.SpanContext().TraceID(), mixed.SpanContext().TraceID())
		assert.NotEqual(t, other.SpanContext().TraceID(), mixed.SpanContext().TraceID())
		require.Len(t, mixed.Links(), 2)
		assert.Equal(t, producer.SpanContext().TraceID(), mixed.Links()[0].SpanContext.TraceID())
		assert.Equal(t, other.SpanContext().TraceID(), mixed.Links()[1].SpanContext.TraceID())
	})
}

// Given first to WithMiddleware, the middleware records the outcome the loop's own
// middleware settles on.
func TestTheOutcomeInnerMiddlewareSettlesOnIsRecorded(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		r := newRig(t, m.Options())
		_, err := r.client.Queue("rewrite").Push(t.Context(), queen.PushItem{Data: 1}, queen.PushItem{Data: 2})
		require.NoError(t, err)
		toDLQ := func(ctx context.Context, _ []*queen.Message, next func(context.Context) error) error {
			if err := next(ctx); err != nil {
				return queen.DeadLetter(err)
			}
			return nil
		}
		err = r.client.Queue("rewrite").Use(toDLQ).Limit(2).Each().
			Consume(testutil.Context(t), func(context.Context, *queen.Message) error { return errors.New("unfixable") })
		require.NoError(t, err)
		spans := r.processSpans()
		require.Len(t, spans, 2)
		for _, s := range spans {
			assert.Equal(t, "dlq", spanAttrs(s)["messaging.queen.outcome"])
			assert.Equal(t, "_OTHER", spanAttrs(s)["error.type"])
		}
	})
}

// A handler the shutdown cut short is acked retry, and recorded so.
func TestAStoppedHandlerIsRecordedAsRetry(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		r := newRig(t, m.Options())
		_, err := r.client.Queue("stopped").Push(t.Context(), queen.PushItem{Data: 1})
		require.NoError(t, err)
		ctx, stop := context.WithCancel(testutil.Context(t))
		started := make(chan struct{})
		done := testutil.Go(func() error {
			return r.client.Queue("stopped").ShutdownTimeout(0).Each().Consume(ctx, func(ctx context.Context, _ *queen.Message) error {
				close(started)
				<-ctx.Done()
				return ctx.Err()
			})
		})
		testutil.Recv(t, started, "the handler to start")
		stop()
		require.NoError(t, testutil.Recv(t, done, "Consume to return"))
		spans := r.processSpans()
		require.Len(t, spans, 1)
		assert.Equal(t, "retry", spanAttrs(spans[0])["messaging.queen.outcome"])
		assert.Equal(t, codes.Unset, spans[0].Status().Code)
	})
}
