package queen

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// sendOutcome is one OnResult call.
type sendOutcome struct {
	queue string
	item  PushItem
	res   PushResult
	err   error
}

// outcomes records every OnResult call.
type outcomes struct {
	mu   sync.Mutex
	all  []sendOutcome
	byTx map[string]int
}

func (o *outcomes) record(queue string, item PushItem, res PushResult, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.byTx == nil {
		o.byTx = map[string]int{}
	}
	o.all = append(o.all, sendOutcome{queue, item, res, err})
	o.byTx[queue+"/"+item.TransactionID]++
}

func (o *outcomes) snapshot() []sendOutcome {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.all)
}

// pushedItems is how many items the pushes a spy saw carried.
func pushedItems(t *testing.T, spy *testutil.Spy) int {
	n := 0
	for _, r := range spy.Of(route.FamilyPush) {
		var body struct{ Items []json.RawMessage }
		require.NoError(t, json.Unmarshal(r.Body, &body))
		n += len(body.Items)
	}
	return n
}

// stored pops everything of queue/partition for a fresh group and returns the transactionIds.
func storedTx(t *testing.T, c *Client, queue, partition string) []string {
	t.Helper()
	msgs, err := c.Queue(queue).Partition(partition).Group("check-" + queue + "-" + partition).
		SubscriptionMode(SubscribeAll).Batch(10000).Pop(t.Context())
	require.NoError(t, err)
	var out []string
	for _, m := range msgs {
		out = append(out, m.TransactionID)
	}
	return out
}

// Items of many queues and partitions, sent from many goroutines, are each stored once, in Send
// order per partition, and each gets one OnResult, also when the broker answers 5xx before and
// after applying requests and drops connections before and after.
func TestProducerExactlyOnceUnderFaults(t *testing.T) {
	t.Parallel()
	for name, faulty := range map[string]bool{"clean": false, "faults": true} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := queentest.NewServer(t)
			if faulty {
				for _, f := range []queentest.Fault{
					{Route: "push", Times: 1},
					{Route: "push", Status: 503, Times: 4}, // more than the transport's retries
					{Route: "push", Times: 2},
					{Route: "push", After: true, Status: 500, Times: 2},
					{Route: "push", Drop: true},
					{Route: "push", Times: 1},
					{Route: "push", After: true, Times: 2}, // applied, connection dropped
					{Route: "push", Status: 502},
					{Route: "push", Times: 3},
					{Route: "push", After: true, Status: 503, Times: 4},
				} {
					srv.Fail(f)
				}
			}
			c := newTestClient(t, srv.URL(), WithRetry(2, time.Millisecond, 2*time.Millisecond))
			var got outcomes
			p, err := c.NewProducer(ProducerConfig{MaxBatch: 40, Linger: time.Millisecond, OnResult: got.record})
			require.NoError(t, err)

			const senders, perSender = 6, 150
			queues := []string{"orders", "audit"}
			var wg sync.WaitGroup
			for g := range senders {
				wg.Go(func() {
					// Each sender owns its partitions, so its order is the Send order there.
					for i := range perSender {
						q := queues[i%2]
						item := PushItem{Data: i, TransactionID: fmt.Sprintf("g%d-%d", g, i),
							Partition: fmt.Sprintf("p%d-%d", g, i%3)}
						if g == 0 {
							item.Partition = "" // Default
						}
						assert.NoError(t, p.Send(t.Context(), q, item))
					}
				})
			}
			wg.Wait()
			require.NoError(t, p.Close(t.Context()))
			if faulty {
				assert.Zero(t, srv.FaultsLeft(), "every fault met a push")
			}

			all := got.snapshot()
			require.Len(t, all, senders*perSender, "one OnResult per item")
			for k, n := range got.byTx {
				assert.Equal(t, 1, n, "OnResult calls for %s", k)
			}
			for _, o := range all {
				require.NoError(t, o.err, o.item.TransactionID)
				assert.Contains(t, []string{"queued", "duplicate"}, o.res.Status)
				assert.Equal(t, o.item.TransactionID, o.res.TransactionID)
			}
			for g := range senders {
				for _, q := range queues {
					for part := range 3 {
						partition := fmt.Sprintf("p%d-%d", g, part)
						if g == 0 {
							partition = "Default"
						}
						var want []string
						for i := range perSender {
							if queues[i%2] == q && (g == 0 || i%3 == part) {
								want = append(want, fmt.Sprintf("g%d-%d", g, i))
							}
						}
						if g == 0 && part > 0 {
							continue
						}
						assert.Equal(t, want, storedTx(t, c, q, partition), "%s/%s: stored once each, in Send order", q, partition)
					}
				}
			}
		})
	}
}

// An item whose transactionId is already stored gets "duplicate", and nothing is stored again.
func TestProducerReportsDuplicates(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	c := newTestClient(t, srv.URL())
	_, err := c.Queue("q").Push(t.Context(), PushItem{Data: 1, TransactionID: "t1"})
	require.NoError(t, err)
	var got outcomes
	p, err := c.NewProducer(ProducerConfig{OnResult: got.record})
	require.NoError(t, err)
	require.NoError(t, p.Send(t.Context(), "q", PushItem{Data: 2, TransactionID: "t1"}))
	require.NoError(t, p.Send(t.Context(), "q", PushItem{Data: 3}))
	require.NoError(t, p.Close(t.Context()))
	all := got.snapshot()
	require.Len(t, all, 2)
	assert.Equal(t, "duplicate", all[0].res.Status)
	assert.Equal(t, int64(0), all[0].res.Offset)
	assert.Equal(t, "queued", all[1].res.Status)
	assert.NotEmpty(t, all[1].item.TransactionID, "OnResult sees the transactionId made for the item")
	assert.Equal(t, all[1].item.TransactionID, all[1].res.TransactionID)
	assert.Equal(t, int64(2), srv.Lag("q", ""))
}

// Items wait up to Linger for others, a full request goes at once, and Flush sends at once.
func TestProducerBatches(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	spy, url := testutil.NewSpy(t, srv.Handler())
	c := newTestClient(t, url)
	var got outcomes
	p, err := c.NewProducer(ProducerConfig{Linger: time.Hour, MaxBatch: 10, OnResult: got.record})
	require.NoError(t, err)
	for i := range 10 { // one full request, without waiting for Linger
		require.NoError(t, p.Send(t.Context(), "q", PushItem{Data: i}))
	}
	for i := range 3 { // lingers until Flush
		require.NoError(t, p.Send(t.Context(), "q", PushItem{Data: i, Partition: "other"}))
	}
	require.NoError(t, p.Flush(t.Context()))
	assert.Len(t, got.snapshot(), 13, "Flush returns once every item is answered")
	assert.Equal(t, 2, spy.Count(route.Push))
	assert.Equal(t, 13, pushedItems(t, spy))
	require.NoError(t, p.Close(t.Context()))
	assert.Equal(t, 2, spy.Count(route.Push), "Close has nothing left to send")
}

// gate holds every push until it is opened.
type gate struct {
	open    chan struct{}
	arrived chan struct{}
}

func gatedBroker(t *testing.T, srv *queentest.Server) (*gate, string) {
	g := &gate{open: make(chan struct{}), arrived: make(chan struct{}, 100)}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/push" {
			g.arrived <- struct{}{}
			select {
			case <-g.open:
			case <-r.Context().Done():
				return
			}
		}
		srv.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return g, hs.URL
}

// At MaxBuffered unanswered items Send blocks until an answer makes room, or its ctx ends (the
// item is then not accepted).
func TestProducerBackpressure(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	g, url := gatedBroker(t, srv)
	c := newTestClient(t, url)
	var got outcomes
	p, err := c.NewProducer(ProducerConfig{MaxBuffered: 3, OnResult: got.record})
	require.NoError(t, err)
	for i := range 3 {
		require.NoError(t, p.Send(t.Context(), "q", PushItem{Data: i, TransactionID: fmt.Sprint(i)}))
	}
	<-g.arrived // a full buffer goes without lingering

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	err = p.Send(ctx, "q", PushItem{Data: "refused", TransactionID: "refused"})
	require.ErrorIs(t, err, context.DeadlineExceeded, "Send blocks while the buffer is full")

	sent := make(chan error, 1)
	go func() { sent <- p.Send(t.Context(), "q", PushItem{Data: 3, TransactionID: "3"}) }()
	select {
	case err := <-sent:
		t.Fatalf("Send returned %v with the buffer full", err)
	default:
	}
	close(g.open)
	require.NoError(t, testutil.Recv(t, sent, "Send to return once there is room"))
	require.NoError(t, p.Close(t.Context()))
	assert.Len(t, got.snapshot(), 4)
	assert.Zero(t, got.byTx["q/refused"], "an item Send refused gets no OnResult")
	assert.Equal(t, []string{"0", "1", "2", "3"}, storedTx(t, c, "q", ""))
}

// Close with a broker that refuses connections reports every unanswered item with an error
// wrapping ErrClosed, and not ErrOutcomeUnknown: no request reached the broker. It returns
// ctx's error.
func TestProducerCloseWithDeadBroker(t *testing.T) {
	t.Parallel()
	for name, closeCtx := range map[string]func(t *testing.T) (context.Context, context.CancelFunc){
		"timeout": func(t *testing.T) (context.Context, context.CancelFunc) {
			return context.WithTimeout(t.Context(), 50*time.Millisecond)
		},
		"cancelled": func(t *testing.T) (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			return ctx, cancel
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := queentest.NewServer(t)
			url := srv.URL()
			require.NoError(t, srv.Close()) // nothing answers any more
			c := newTestClient(t, url, WithRetry(3, time.Millisecond, 2*time.Millisecond))
			var got outcomes
			p, err := c.NewProducer(ProducerConfig{MaxBatch: 7, OnResult: got.record})
			require.NoError(t, err)
			const n = 50
			for i := range n {
				require.NoError(t, p.Send(t.Context(), fmt.Sprintf("q%d", i%4), PushItem{Data: i}))
			}
			ctx, cancel := closeCtx(t)
			defer cancel()
			err = p.Close(ctx)
			require.ErrorIs(t, err, ctx.Err())
			all := got.snapshot()
			require.Len(t, all, n, "every unanswered item is reported")
			for k, calls := range got.byTx {
				assert.Equal(t, 1, calls, k)
			}
			for _, o := range all {
				require.ErrorIs(t, o.err, ErrClosed)
				assert.NotErrorIs(t, o.err, ErrOutcomeUnknown, "nothing was sent")
				assert.Equal(t, o.item.TransactionID, o.res.TransactionID)
			}
			require.ErrorIs(t, p.Send(t.Context(), "q", PushItem{Data: 1}), ErrClosed)
			require.NoError(t, p.Close(t.Context()), "a second Close has nothing to do")
		})
	}
}

// With retries off, the first failure to connect is every item's final error, and it says
// nothing was sent: neither ErrClosed nor ErrOutcomeUnknown.
func TestProducerWithoutRetriesReportsARefusedConnection(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	url := srv.URL()
	require.NoError(t, srv.Close())
	c := newTestClient(t, url, WithRetry(0, 0, 0))
	var got outcomes
	p, err := c.NewProducer(ProducerConfig{OnResult: got.record})
	require.NoError(t, err)
	for i := range 10 {
		require.NoError(t, p.Send(t.Context(), fmt.Sprintf("q%d", i%2), PushItem{Data: i}))
	}
	require.NoError(t, p.Close(testutil.Context(t)))
	all := got.snapshot()
	require.Len(t, all, 10)
	for _, o := range all {
		require.Error(t, o.err)
		assert.NotErrorIs(t, o.err, ErrOutcomeUnknown)
		assert.NotErrorIs(t, o.err, ErrClosed)
	}
}

// A Producer request whose answer was lost and that Close then gave up on is reported as
// possibly stored.
func TestProducerCloseAfterALostAnswerSaysItMayBeStored(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	srv.Fail(queentest.Fault{Route: "push", After: true, Times: math.MaxInt32}) // stored, never answered
	c := newTestClient(t, srv.URL(), WithRetry(1, time.Millisecond, time.Millisecond))
	var got outcomes
	p, err := c.NewProducer(ProducerConfig{OnResult: got.record})
	require.NoError(t, err)
	require.NoError(t, p.Send(t.Context(), "q", PushItem{Data: 1}))
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, p.Close(ctx), context.DeadlineExceeded)
	all := got.snapshot()
	require.Len(t, all, 1)
	require.ErrorIs(t, all[0].err, ErrClosed)
	require.ErrorIs(t, all[0].err, ErrOutcomeUnknown)
	assert.Equal(t, int64(1), srv.Lag("q", ""))
}

// A Send waiting for room when Close starts returns ErrClosed.
func TestProducerSendBlockedByCloseIsRefused(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	g, url := gatedBroker(t, srv)
	c := newTestClient(t, url)
	p, err := c.NewProducer(ProducerConfig{MaxBuffered: 1})
	require.NoError(t, err)
	require.NoError(t, p.Send(t.Context(), "q", PushItem{Data: 1}))
	<-g.arrived
	sent := make(chan error, 1)
	go func() { sent <- p.Send(t.Context(), "q", PushItem{Data: 2}) }()
	closed := make(chan error, 1)
	go func() { closed <- p.Close(t.Context()) }()
	require.ErrorIs(t, testutil.Recv(t, sent, "the blocked Send"), ErrClosed)
	close(g.open)
	require.NoError(t, testutil.Recv(t, closed, "Close"))
	assert.Equal(t, int64(1), srv.Lag("q", ""))
}

// A request the broker refuses (4xx) is not retried: its items get the error.
func TestProducerRefusalIsFinal(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	srv.Fail(queentest.Fault{Route: "push", Status: 400})
	c := newTestClient(t, srv.URL())
	var got outcomes
	p, err := c.NewProducer(ProducerConfig{OnResult: got.record})
	require.NoError(t, err)
	require.NoError(t, p.Send(t.Context(), "q", PushItem{Data: 1}))
	require.NoError(t, p.Flush(t.Context()))
	require.NoError(t, p.Send(t.Context(), "q", PushItem{Data: 2}))
	require.NoError(t, p.Close(t.Context()))
	all := got.snapshot()
	require.Len(t, all, 2)
	var apiErr *APIError
	require.ErrorAs(t, all[0].err, &apiErr)
	assert.Equal(t, 400, apiErr.StatusCode)
	assert.NoError(t, all[1].err)
	assert.Equal(t, int64(1), srv.Lag("q", ""))
}

// Bad settings and bad items are refused, naming the setting or field, before anything is sent.
func TestProducerValidation(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	spy, url := testutil.NewSpy(t, srv.Handler())
	c := newTestClient(t, url)
	for _, tc := range []struct {
		cfg  ProducerConfig
		want string
	}{
		{ProducerConfig{Linger: -time.Millisecond}, "Linger"},
		{ProducerConfig{MaxBatch: -1}, "MaxBatch"},
		{ProducerConfig{MaxBatch: 10001}, "MaxBatch=10001"},
		{ProducerConfig{MaxBuffered: -5}, "MaxBuffered=-5"},
	} {
		_, err := c.NewProducer(tc.cfg)
		require.ErrorIs(t, err, ErrInvalidOption, "%+v", tc.cfg)
		assert.Contains(t, err.Error(), tc.want)
	}

	p, err := c.NewProducer(ProducerConfig{MaxBatch: 10000})
	require.NoError(t, err)
	for _, tc := range []struct {
		queue string
		item  PushItem
		want  string
	}{
		{"", PushItem{Data: 1}, "queue"},
		{"q", PushItem{Data: 1, TraceID: "not-a-uuid"}, "item.traceId"},
		{"q", PushItem{Data: 1, Partition: ".."}, "item.partition"},
		{"q", PushItem{Data: json.RawMessage(`{"a":`)}, "item.data"},
		{"q", PushItem{Data: make(chan int)}, "item.data"},
		{"q", PushItem{Data: 1, TransactionID: "\xff"}, "item.transactionId"},
	} {
		err := p.Send(t.Context(), tc.queue, tc.item)
		require.ErrorIs(t, err, ErrInvalidOption, "%+v", tc.item)
		assert.Contains(t, err.Error(), tc.want)
	}
	require.NoError(t, p.Close(t.Context()))
	assert.Empty(t, spy.All(), "nothing was sent")
}

// Client.Close flushes and closes the Producers made from it.
func TestProducerClosedWithItsClient(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	c, err := New(srv.URL())
	require.NoError(t, err)
	var got outcomes
	p, err := c.NewProducer(ProducerConfig{Linger: time.Hour, OnResult: got.record})
	require.NoError(t, err)
	require.NoError(t, p.Send(t.Context(), "q", PushItem{Data: 1}))
	require.NoError(t, c.Close())
	require.Len(t, got.snapshot(), 1)
	assert.NoError(t, got.snapshot()[0].err)
	assert.Equal(t, int64(1), srv.Lag("q", ""))
	require.ErrorIs(t, p.Send(t.Context(), "q", PushItem{Data: 2}), ErrClosed)
	_, err = c.NewProducer(ProducerConfig{})
	require.ErrorIs(t, err, ErrClosed)
}

// A panicking OnResult is logged; the other items still get theirs.
func TestProducerOnResultPanic(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	c := newTestClient(t, srv.URL())
	var calls atomic.Int64
	p, err := c.NewProducer(ProducerConfig{OnResult: func(string, PushItem, PushResult, error) {
		if calls.Add(1) == 1 {
			panic("boom")
		}
	}})
	require.NoError(t, err)
	for i := range 3 {
		require.NoError(t, p.Send(t.Context(), "q", PushItem{Data: i}))
	}
	require.NoError(t, p.Close(t.Context()))
	assert.Equal(t, int64(3), calls.Load())
}

// The lane's ring keeps Send order across wrapping and growing.
func TestItemQueueOrder(t *testing.T) {
	t.Parallel()
	var q itemQueue
	next, want := uint64(0), uint64(0)
	push := func(n int) {
		for range n {
			next++
			q.push(queued{seq: next})
		}
	}
	take := func(n int) {
		for _, it := range q.take(nil, n) {
			want++
			require.Equal(t, want, it.seq)
		}
	}
	push(20)
	take(5)
	push(30) // wraps, then grows
	take(40)
	push(3)
	take(8)
	require.Zero(t, q.len())
	push(2000)
	take(2000)
	require.Nil(t, q.buf, "an emptied large ring is let go")
}

// Without OnResult, final errors are logged at warn, one line per request: a refusal, and the
// items Close gave up on.
func TestProducerWithoutOnResultLogsFinalErrors(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	var logs testutil.LogBuffer
	c := newTestClient(t, srv.URL(), WithLogger(jsonLogger(&logs)))
	srv.Fail(queentest.Fault{Route: "push", Status: 400})
	p, err := c.NewProducer(ProducerConfig{})
	require.NoError(t, err)
	require.NoError(t, p.Send(t.Context(), "q", PushItem{Data: 1}))
	require.NoError(t, p.Flush(t.Context()))
	assert.Contains(t, logs.String(), `"level":"WARN","msg":"queen: Producer could not push items","items":1,"queue":"q"`)
	assert.Contains(t, logs.String(), `400`)

	require.NoError(t, srv.Close()) // nothing answers any more
	for i := range 3 {
		require.NoError(t, p.Send(t.Context(), "q", PushItem{Data: i}))
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	require.ErrorIs(t, p.Close(ctx), context.Canceled)
	assert.Contains(t, logs.String(), `Producer closed before`)
}
