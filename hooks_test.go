package queen

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// hookLog records every hook call, in order.
type hookLog struct {
	mu        sync.Mutex
	requests  []RequestEvent
	handled   []HandledEvent
	acked     []AckedEvent
	leaseLost []LeaseLostEvent
}

func (h *hookLog) hooks() Hooks {
	return Hooks{
		Request:   func(e RequestEvent) { h.mu.Lock(); h.requests = append(h.requests, e); h.mu.Unlock() },
		Handled:   func(e HandledEvent) { h.mu.Lock(); h.handled = append(h.handled, e); h.mu.Unlock() },
		Acked:     func(e AckedEvent) { h.mu.Lock(); h.acked = append(h.acked, e); h.mu.Unlock() },
		LeaseLost: func(e LeaseLostEvent) { h.mu.Lock(); h.leaseLost = append(h.leaseLost, e); h.mu.Unlock() },
	}
}

func (h *hookLog) requestLines() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, e := range h.requests {
		out = append(out, fmt.Sprintf("%s %s #%d %d", e.Method, e.Route, e.Attempt, e.Status))
	}
	return out
}

func (h *hookLog) ackedLines() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, e := range h.acked {
		out = append(out, fmt.Sprintf("%s %s %v", e.Message.TransactionID, e.Status, e.Success))
	}
	return out
}

func (h *hookLog) handledLines() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, e := range h.handled {
		out = append(out, fmt.Sprintf("%s %q panicked=%v", e.Message.TransactionID, e.Outcome, e.Panicked))
	}
	return out
}

// Every attempt reaches the Request hook with its route pattern, never a name, and its number.
func TestHooksSeeEveryAttemptWithItsRoutePattern(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	proxy, url := testutil.NewSpy(t, srv.Handler())
	var rec hookLog
	c := newTestClient(t, url, WithHooks(rec.hooks()))

	var failedOnce atomic.Bool
	proxy.Override(func(r *http.Request) (int, bool) {
		return http.StatusServiceUnavailable, r.URL.Path == "/api/v1/push" && !failedOnce.Swap(true)
	})
	_, err := c.Queue("secret-queue").Partition("secret-part").Push(t.Context(), PushItem{Data: 1}, PushItem{Data: 2})
	require.NoError(t, err)
	msgs, err := c.Queue("secret-queue").Partition("secret-part").Batch(1).Pop(t.Context())
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	_, err = msgs[0].Renew(t.Context(), time.Minute)
	require.NoError(t, err)
	require.NoError(t, msgs[0].Ack(t.Context()))
	_, err = c.Queue("secret-queue").Pop(t.Context())
	require.NoError(t, err)
	require.NoError(t, c.Do(t.Context(), http.MethodDelete, "/api/v1/resources/queues/secret-queue", nil, nil, nil))

	assert.Equal(t, []string{
		"POST /api/v1/push #1 503",
		"POST /api/v1/push #2 201",
		"GET /api/v1/pop/queue/{queue}/partition/{partition} #1 200",
		"POST /api/v1/lease/{leaseId}/extend #1 200",
		"POST /api/v1/ack #1 200",
		"GET /api/v1/pop/queue/{queue} #1 200",
		"DELETE /api/v1/resources/queues/{queue} #1 200",
	}, rec.requestLines())
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, e := range rec.requests {
		assert.NotContains(t, e.Route, "secret")
		assert.Equal(t, url, e.Server)
		assert.NoError(t, e.Err)
		assert.Positive(t, e.Duration)
	}
	assert.Equal(t, 2, rec.requests[0].Items, "a push reports its items")
	assert.Equal(t, 1, rec.requests[4].Items, "an ack reports its item")
}

// An attempt that got no answer reaches the hook with its error and status 0.
func TestHooksSeeAFailedAttempt(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	proxy, url := testutil.NewSpy(t, srv.Handler())
	var rec hookLog
	c := newTestClient(t, url, WithHooks(rec.hooks()), WithRetry(0, 0, 0))
	proxy.Override(func(*http.Request) (int, bool) { return 0, true }) // drop the connection
	_, err := c.Queue("q").Push(t.Context(), PushItem{Data: 1})
	require.Error(t, err)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.Len(t, rec.requests, 1)
	e := rec.requests[0]
	assert.Equal(t, 0, e.Status)
	assert.Equal(t, 1, e.Attempt)
	assert.Error(t, e.Err)
}

// A request sent through Client.Do reaches the Request hook with the pattern of the route its
// path matches, "/api/v1/{unknown}" (or "/{unknown}") when it matches none: never the path.
func TestADoRequestIsReportedByItsRoutePattern(t *testing.T) {
	t.Parallel()
	spy, url := testutil.NewSpy(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	var rec hookLog
	c := newTestClient(t, url, WithHooks(rec.hooks()))
	for path, want := range map[string]string{
		"/health":                                      "/health",
		"/api/v1/consumer-groups/lagging":              "/api/v1/consumer-groups/lagging",
		"/api/v1/consumer-groups/billing":              "/api/v1/consumer-groups/{group}",
		"/api/v1/consumer-groups/g/queues/q/seek":      "/api/v1/consumer-groups/{group}/queues/{queue}/seek",
		"/api/v1/dlq/123/replay":                       "/api/v1/dlq/{id}/replay",
		"/api/v1/messages/pid/tx":                      "/api/v1/messages/{partitionId}/{transactionId}",
		"/api/v1/some/new/route/with/names":            "/api/v1/{unknown}",
		"/metrics":                                     "/{unknown}",
		"/api/v1/status/queues/orders/messages":        "/api/v1/status/queues/{queue}/messages",
		"/api/v1/pop/queue/orders/partition/p%2F1":     "/api/v1/pop/queue/{queue}/partition/{partition}",
		"/api/v1/lease/01a22945-dbbd-7000-ae31/extend": "/api/v1/lease/{leaseId}/extend",
	} {
		rec.mu.Lock()
		rec.requests = nil
		rec.mu.Unlock()
		require.NoError(t, c.Do(t.Context(), http.MethodGet, path, nil, nil, nil))
		rec.mu.Lock()
		require.Len(t, rec.requests, 1, path)
		assert.Equal(t, want, rec.requests[0].Route, path)
		rec.mu.Unlock()
	}
	assert.Len(t, spy.All(), 11)
}

// The Acked hook sees every ack item the broker answered, through every way of acking.
func TestHooksSeeEveryAck(t *testing.T) {
	t.Parallel()
	_, c := brokerAndClient(t)
	var rec hookLog
	c.hooks.add(rec.hooks())
	pushN(t, c, "acks", "p", 5)
	msgs, err := c.Queue("acks").Batch(5).Pop(t.Context())
	require.NoError(t, err)
	require.Len(t, msgs, 5)

	require.NoError(t, msgs[0].Ack(t.Context()))
	_, err = c.AckBatch(t.Context(), []AckItem{{Message: msgs[1]}, {Message: msgs[2], Status: StatusCompleted}})
	require.NoError(t, err)
	_, err = c.Transaction().Ack(msgs[3], StatusCompleted).Push("elsewhere", PushItem{Data: 1}).Commit(t.Context())
	require.NoError(t, err)
	// A transaction the broker rolls back: the ack names a lease the message does not have.
	stranger := &Message{ID: msgs[4].ID, TransactionID: msgs[4].TransactionID, PartitionID: msgs[4].PartitionID,
		LeaseID: "00000000-0000-4000-8000-000000000000", ConsumerGroup: msgs[4].ConsumerGroup, client: c}
	_, err = c.Transaction().Ack(stranger, StatusCompleted).Commit(t.Context())
	require.ErrorIs(t, err, ErrTransactionFailed)

	pushN(t, c, "loop", "p", 2)
	require.NoError(t, c.Queue("loop").Limit(2).Each().Consume(testutil.Context(t), func(context.Context, *Message) error { return nil }))

	assert.Equal(t, []string{
		"p-0 completed true",
		"p-1 completed true",
		"p-2 completed true",
		"p-3 completed true",
		"p-4 completed false",
		"p-0 completed true",
		"p-1 completed true",
	}, rec.ackedLines())
}

// Handled sees each outcome the loop decided, with the handler's error and the panic flag.
func TestHooksSeeEveryOutcome(t *testing.T) {
	t.Parallel()
	_, c := brokerAndClient(t)
	var rec hookLog
	c.hooks.add(rec.hooks())
	pushN(t, c, "outcomes", "p", 4)
	boom := errors.New("boom")
	err := c.Queue("outcomes").Limit(4).RetryBackoff(0, 0).Each().Consume(testutil.Context(t), func(_ context.Context, m *Message) error {
		switch m.TransactionID {
		case "p-0":
			return nil
		case "p-1":
			if m.DeliveryAttempt == 1 {
				return Retry(boom)
			}
			return DeadLetter(boom)
		case "p-2":
			panic("at the disco")
		}
		return boom
	})
	require.NoError(t, err)
	assert.Equal(t, []string{
		`p-0 "completed" panicked=false`,
		`p-1 "retry" panicked=false`,
		`p-1 "dlq" panicked=false`,
		`p-2 "failed" panicked=true`,
	}, rec.handledLines())
	rec.mu.Lock()
	defer rec.mu.Unlock()
	assert.ErrorIs(t, rec.handled[1].Err, boom)
	var p *PanicError
	assert.ErrorAs(t, rec.handled[3].Err, &p)
}

// Hooks that panic are logged, and the loop and the requests go on.
func TestPanickingHooksDoNotStopTheLoop(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	var logs testutil.LogBuffer
	c := newTestClient(t, srv.URL(), WithLogger(jsonLogger(&logs)),
		WithHooks(Hooks{
			Request:   func(RequestEvent) { panic("request hook") },
			Handled:   func(HandledEvent) { panic("handled hook") },
			Acked:     func(AckedEvent) { panic("acked hook") },
			LeaseLost: func(LeaseLostEvent) { panic("lease hook") },
		}))
	pushN(t, c, "panics", "p", 3)
	var calls atomic.Int32
	err := c.Queue("panics").Batch(1).Limit(3).Each().Consume(testutil.Context(t), func(context.Context, *Message) error {
		calls.Add(1)
		return nil
	})
	require.NoError(t, err)
	assert.EqualValues(t, 3, calls.Load())
	assert.Empty(t, drain(t, c, "panics"), "every message was acked")
	out := logs.String()
	for _, kind := range []string{"Request", "Handled", "Acked"} {
		assert.Contains(t, out, "queen: "+kind+" hook panicked")
	}
}

// Several WithHooks compose: each is called, in the order given.
func TestWithHooksCompose(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	var mu sync.Mutex
	var order []string
	hook := func(name string) Hooks {
		return Hooks{Request: func(RequestEvent) { mu.Lock(); order = append(order, name); mu.Unlock() }}
	}
	c := newTestClient(t, srv.URL(), WithHooks(hook("a")), WithHooks(Hooks{}), WithHooks(hook("b")))
	_, err := c.Queue("q").Push(t.Context(), PushItem{Data: 1})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, order)
}
