package queen

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// failPushes makes spy answer status (0: drop the connection) to every push whose body holds
// part, until the returned func is called.
func failPushes(spy *testutil.Spy, part string, status int) (heal func()) {
	var healed atomic.Bool
	spy.Override(func(r *http.Request) (int, bool) {
		if healed.Load() || testutil.RouteOf(r) != route.Push {
			return 0, false
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		return status, bytes.Contains(body, []byte(part))
	})
	return func() { healed.Store(true) }
}

// counted closes done once n items got a nil error in OnResult; any other outcome is recorded.
type counted struct {
	outcomes
	want   int
	stored atomic.Int64
	done   chan struct{}
}

func newCounted(n int) *counted { return &counted{want: n, done: make(chan struct{})} }

func (c *counted) record(queue string, item PushItem, res PushResult, err error) {
	c.outcomes.record(queue, item, res, err)
	if err == nil && c.stored.Add(1) == int64(c.want) {
		close(c.done)
	}
}

// One (queue, partition) whose pushes keep failing, with a 5xx, a 429 or a dropped connection,
// holds back no other: the items of the other queues and partitions are all stored while it
// fails, its own are kept (no OnResult) and stored once it heals, each once, in Send order.
// The client's logger hears when pushes start failing and when they succeed again, with the
// items waiting.
func TestAFailingPartitionHoldsBackNoOther(t *testing.T) {
	t.Parallel()
	for name, status := range map[string]int{"503": http.StatusServiceUnavailable, "429": http.StatusTooManyRequests, "dropped": 0} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
				srv := queentest.NewServer(t, m.Options()...)
				spy, url := testutil.NewSpy(t, srv.Handler())
				var logs testutil.LogBuffer
				c := newTestClient(t, url, WithRetry(2, time.Millisecond, 2*time.Millisecond), WithLogger(jsonLogger(&logs)))
				heal := failPushes(spy, `"queue":"sick"`, status)

				const healthy, perQueue = 1500, 500
				got := newCounted(healthy)
				p, err := c.NewProducer(ProducerConfig{MaxBatch: 100, OnResult: got.record})
				require.NoError(t, err)
				for i := range 20 {
					require.NoError(t, p.Send(t.Context(), "sick", PushItem{Data: i, TransactionID: fmt.Sprintf("s%d", i)}))
				}
				for i := range healthy {
					q := fmt.Sprintf("q%d", i/perQueue)
					require.NoError(t, p.Send(t.Context(), q, PushItem{Data: i, TransactionID: fmt.Sprintf("h%d", i),
						Partition: fmt.Sprintf("p%d", i%3)}))
				}
				testutil.Recv(t, got.done, "every healthy item stored while one queue fails")
				for _, o := range got.snapshot() {
					require.NotEqual(t, "sick", o.queue, "an item of the failing queue is kept, not answered: %v", o.err)
				}
				assert.Contains(t, logs.String(), `"msg":"queen: Producer pushes are failing; their items are kept and sent again"`)
				assert.Regexp(t, `"waiting":[1-9]`, logs.String(), "the warning says how many items wait")

				heal()
				require.NoError(t, p.Close(testutil.Context(t)))
				all := got.snapshot()
				require.Len(t, all, healthy+20, "one OnResult per item")
				for _, o := range all {
					require.NoError(t, o.err, "%s/%s", o.queue, o.item.TransactionID)
				}
				assert.Contains(t, logs.String(), `"msg":"queen: Producer pushes succeed again","waiting":`)

				var want []string
				for i := range 20 {
					want = append(want, fmt.Sprintf("s%d", i))
				}
				assert.Equal(t, want, storedTx(t, c, "sick", ""), "the failing queue's items, once each, in Send order")
				for q := range healthy / perQueue {
					for part := range 3 {
						want = want[:0]
						for i := q * perQueue; i < (q+1)*perQueue; i++ {
							if i%3 == part {
								want = append(want, fmt.Sprintf("h%d", i))
							}
						}
						assert.Equal(t, want, storedTx(t, c, fmt.Sprintf("q%d", q), fmt.Sprintf("p%d", part)))
					}
				}
			})
		})
	}
}

// A request refused with a 4xx other than 401 and 403 is split until only the item the broker
// refuses gets the error: every other item is stored, in Send order.
func TestARefusedItemFailsAlone(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		srv := queentest.NewServer(t, m.Options()...)
		spy, url := testutil.NewSpy(t, srv.Handler())
		c := newTestClient(t, url)
		failPushes(spy, `"transactionId":"poison"`, http.StatusBadRequest)
		var got outcomes
		p, err := c.NewProducer(ProducerConfig{Linger: time.Hour, OnResult: got.record})
		require.NoError(t, err)
		const n = 500
		for i := range n {
			id := fmt.Sprintf("t%d", i)
			if i == 321 {
				id = "poison"
			}
			require.NoError(t, p.Send(t.Context(), fmt.Sprintf("q%d", i%4), PushItem{Data: i, TransactionID: id}))
		}
		require.NoError(t, p.Close(testutil.Context(t)))
		all := got.snapshot()
		require.Len(t, all, n)
		for _, o := range all {
			if o.item.TransactionID != "poison" {
				require.NoError(t, o.err, o.item.TransactionID)
				continue
			}
			var apiErr *APIError
			require.ErrorAs(t, o.err, &apiErr)
			assert.Equal(t, http.StatusBadRequest, apiErr.StatusCode)
			assert.NotErrorIs(t, o.err, ErrOutcomeUnknown, "a refusal says nothing was stored")
		}
		for q := range 4 {
			var want []string
			for i := q; i < n; i += 4 {
				if i != 321 {
					want = append(want, fmt.Sprintf("t%d", i))
				}
			}
			assert.Equal(t, want, storedTx(t, c, fmt.Sprintf("q%d", q), ""))
		}
	})
}

// A request refused with 401 or 403 is not split: the refusal is every item's, at once.
func TestAnUnauthorizedRequestIsNotSplit(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			t.Parallel()
			srv := queentest.NewServer(t)
			spy, url := testutil.NewSpy(t, srv.Handler())
			c := newTestClient(t, url)
			failPushes(spy, `"queue"`, status)
			var got outcomes
			p, err := c.NewProducer(ProducerConfig{Linger: time.Hour, OnResult: got.record})
			require.NoError(t, err)
			for i := range 40 {
				require.NoError(t, p.Send(t.Context(), fmt.Sprintf("q%d", i%4), PushItem{Data: i}))
			}
			require.NoError(t, p.Close(testutil.Context(t)))
			assert.Equal(t, 1, spy.Count(route.Push), "one request, not split")
			all := got.snapshot()
			require.Len(t, all, 40)
			for _, o := range all {
				var apiErr *APIError
				require.ErrorAs(t, o.err, &apiErr)
				assert.Equal(t, status, apiErr.StatusCode)
			}
		})
	}
}

// controlIDs is n items whose transactionIds are made of control characters, each six bytes
// on the wire ("\u0001") for one in memory: together, under the request limit as counted in
// memory, well over it as encoded.
func controlIDs(n, idLen int) []PushItem {
	items := make([]PushItem, n)
	for i := range items {
		items[i] = PushItem{Data: i, TransactionID: fmt.Sprintf("%06d", i) + strings.Repeat("\x01", idLen)}
	}
	return items
}

// sizeCheckingBroker answers every push with one result per item, and records how many items
// and bytes each push carried.
type sizeCheckingBroker struct {
	mu     sync.Mutex
	items  []int
	sizes  []int
	wholes int // bodies that were one JSON object with an items array
}

func (b *sizeCheckingBroker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	items := bytes.Count(body, []byte(`{"queue":"q",`)) // the transactionIds hold no such text
	whole := bytes.HasPrefix(body, []byte(`{"items":[{`)) && bytes.HasSuffix(body, []byte(`}]}`))
	b.mu.Lock()
	b.items, b.sizes = append(b.items, items), append(b.sizes, len(body))
	if whole {
		b.wholes++
	}
	b.mu.Unlock()
	var answer bytes.Buffer
	answer.WriteByte('[')
	for i := range items {
		if i > 0 {
			answer.WriteByte(',')
		}
		fmt.Fprintf(&answer, `{"index":%d,"status":"queued","message_id":"m%d","partition_id":"p","offset":%d}`, i, i, i)
	}
	answer.WriteByte(']')
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write(answer.Bytes())
}

// Push and the Producer count a request's size as encoded, JSON escapes included: no body
// goes over the limit, and every item is sent.
func TestNoPushBodyGoesOverTheLimit(t *testing.T) {
	t.Parallel()
	const n, idLen = 8000, 400 // 3.3 MB in memory, 19.3 MB encoded
	for name, push := range map[string]func(t *testing.T, c *Client, items []PushItem){
		"Push": func(t *testing.T, c *Client, items []PushItem) {
			res, err := c.Queue("q").Push(t.Context(), items...)
			require.NoError(t, err)
			assert.Len(t, res, len(items))
		},
		"Producer": func(t *testing.T, c *Client, items []PushItem) {
			var got outcomes
			p, err := c.NewProducer(ProducerConfig{MaxBatch: maxPushItems, MaxBuffered: len(items), Linger: time.Hour, OnResult: got.record})
			require.NoError(t, err)
			for _, it := range items {
				require.NoError(t, p.Send(t.Context(), "q", it))
			}
			require.NoError(t, p.Close(testutil.Context(t)))
			require.Len(t, got.snapshot(), len(items))
			for _, o := range got.snapshot() {
				require.NoError(t, o.err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var broker sizeCheckingBroker
			srv := httptest.NewServer(&broker)
			t.Cleanup(srv.Close)
			push(t, newTestClient(t, srv.URL), controlIDs(n, idLen))
			broker.mu.Lock()
			defer broker.mu.Unlock()
			require.Greater(t, len(broker.sizes), 1, "the items were split")
			for _, size := range broker.sizes {
				assert.LessOrEqual(t, size, maxPushBytes+len(pushBodyHead)+len(pushBodyTail))
			}
			total := 0
			for _, k := range broker.items {
				total += k
			}
			assert.Equal(t, n, total, "every item sent once")
			assert.Equal(t, len(broker.sizes), broker.wholes, "each body whole")
		})
	}
}

// The Producer keeps several requests in flight, one per (queue, partition) at a time: items
// of partitions no request carries go while another request waits for its answer.
func TestTheProducerKeepsSeveralRequestsInFlight(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	g, url := gatedBroker(t, srv)
	c := newTestClient(t, url)
	var open sync.Once
	t.Cleanup(func() { open.Do(func() { close(g.open) }) }) // first, should the test fail
	var got outcomes
	p, err := c.NewProducer(ProducerConfig{Linger: time.Hour, OnResult: got.record})
	require.NoError(t, err)
	flushed := make(chan error, 3)
	sendAndFlush := func(n int, partitions ...string) {
		for _, part := range partitions {
			require.NoError(t, p.Send(t.Context(), "q", PushItem{Data: n, TransactionID: fmt.Sprint(part, n), Partition: part}))
		}
		go func() { flushed <- p.Flush(t.Context()) }()
	}
	sendAndFlush(1, "a", "b")
	testutil.Recv(t, g.arrived, "the first request")
	sendAndFlush(1, "c", "d")
	testutil.Recv(t, g.arrived, "a second request, while the first waits")
	sendAndFlush(2, "a") // waits for the answer to the first
	open.Do(func() { close(g.open) })
	for range 3 {
		require.NoError(t, testutil.Recv(t, flushed, "Flush"))
	}
	require.NoError(t, p.Close(testutil.Context(t)))
	assert.Len(t, got.snapshot(), 5)
	assert.Equal(t, []string{"a1", "a2"}, storedTx(t, c, "q", "a"))
}

// stubPusher answers pushes in memory, without a network, for tests in a synctest bubble:
// 503 to a push that holds failing, else one result per item; sick hears of the refused pushes
// while it has room.
type stubPusher struct {
	failing string
	sick    chan struct{}
}

func (s *stubPusher) RoundTrip(r *http.Request) (*http.Response, error) {
	body, _ := io.ReadAll(r.Body)
	rec := httptest.NewRecorder()
	if bytes.Contains(body, []byte(s.failing)) {
		rec.WriteHeader(http.StatusServiceUnavailable)
		_, _ = rec.WriteString(`{"error":"down"}`)
		select {
		case s.sick <- struct{}{}:
		default:
		}
		return rec.Result(), nil
	}
	var answer bytes.Buffer
	answer.WriteByte('[')
	for i := range bytes.Count(body, []byte(`{"queue":`)) {
		if i > 0 {
			answer.WriteByte(',')
		}
		fmt.Fprintf(&answer, `{"index":%d,"status":"queued","message_id":"m","partition_id":"p","offset":%d}`, i, i)
	}
	answer.WriteByte(']')
	rec.WriteHeader(http.StatusCreated)
	_, _ = rec.Write(answer.Bytes())
	return rec.Result(), nil
}

// An item of a healthy partition goes after its Linger even while the Producer waits out a
// failing partition's long backoff.
func TestAHealthyItemDoesNotWaitForAFailingPartitionsBackoff(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		broker := &stubPusher{failing: `"queue":"sick"`, sick: make(chan struct{}, 10)}
		c, err := New("http://broker.test", WithHTTPClient(&http.Client{Transport: broker}),
			WithRetry(1, time.Minute, time.Minute), WithLogger(slog.New(slog.DiscardHandler)))
		require.NoError(t, err)
		stored := make(chan time.Time, 1)
		p, err := c.NewProducer(ProducerConfig{OnResult: func(queue string, _ PushItem, _ PushResult, err error) {
			if queue == "healthy" {
				assert.NoError(t, err)
				stored <- time.Now()
			}
		}})
		require.NoError(t, err)
		require.NoError(t, p.Send(t.Context(), "sick", PushItem{Data: 1}))
		<-broker.sick // the request
		<-broker.sick // the transport's retry, a minute later
		synctest.Wait()
		// The Producer now waits out a minute before it sends the failing partition again.
		sent := time.Now()
		require.NoError(t, p.Send(t.Context(), "healthy", PushItem{Data: 2}))
		select {
		case at := <-stored:
			assert.Less(t, at.Sub(sent), time.Second, "stored after its Linger, not after the backoff")
		case <-time.After(time.Hour):
			t.Error("the healthy item was not stored within an hour")
		}

		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		assert.ErrorIs(t, p.Close(ctx), context.Canceled)
		require.NoError(t, c.Close())
	})
}
