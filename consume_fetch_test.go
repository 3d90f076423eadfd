package queen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
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

// A 0.15 broker ignores autopilot and leases one message per pop: the default loop sizes the
// batch itself once an answer shows it, so a backlog costs at most one pop and one ack per 10
// messages (it cost one of each per message before).
func TestTheLoopSizesBatchesWhereTheBrokerDoesNot(t *testing.T) {
	t.Parallel()
	const backlog = 1000
	srv := queentest.NewServer(t, queentest.WithCompat("0.15"))
	proxy, base := testutil.NewSpy(t, srv.Handler())
	c := newTestClient(t, base)
	pushN(t, c, "sized", "p", backlog)

	var handled atomic.Int64
	err := c.Queue("sized").Limit(backlog).Each().Consume(testutil.Context(t), func(context.Context, *Message) error {
		handled.Add(1)
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, int64(backlog), handled.Load())
	sent := popQueries(proxy)
	t.Logf("0.15, default settings: %d pops and %d acks for %d messages (%.3f pops per message)",
		len(sent), len(proxy.Of(route.FamilyAck)), backlog, float64(len(sent))/backlog)
	assert.LessOrEqual(t, len(sent), backlog/10, "at most one pop per 10 messages")
	assert.LessOrEqual(t, len(proxy.Of(route.FamilyAck)), backlog/10, "at most one ack per 10 messages")
	assert.False(t, sent[0].Has("batch"), "the first pop leaves the batch to autopilot")
	assert.Equal(t, "true", sent[0].Get("autopilot"))
	assert.NotEmpty(t, sent[1].Get("batch"), "then the client sizes it")
	assert.Empty(t, drain(t, c, "sized"))
}

// On a 2.0 broker the default loop keeps leaving the batch to the broker's autopilot.
func TestTheLoopLeavesTheBatchToABrokerThatSizesIt(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	pops, base := testutil.NewSpy(t, srv.Handler())
	c := newTestClient(t, base)
	pushN(t, c, "auto", "p", 300)
	err := c.Queue("auto").Limit(300).Each().Consume(testutil.Context(t), func(context.Context, *Message) error { return nil })
	require.NoError(t, err)
	for i, q := range popQueries(pops) {
		assert.False(t, q.Has("batch"), "pop %d sent a batch", i)
	}
}

// A broker failing every request sees the pops that were in flight when it failed, then one
// probe per backoff period, growing, whatever the Concurrency (fake time).
func TestAFailingBrokerIsProbedOncePerBackoff(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var mu sync.Mutex
		var sent []time.Duration
		failing := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			sent = append(sent, time.Since(start))
			mu.Unlock()
			return &http.Response{StatusCode: http.StatusServiceUnavailable, Request: r,
				Header: http.Header{"Content-Type": {"application/json"}},
				Body:   io.NopCloser(strings.NewReader(`{"error":"down"}`))}, nil
		})
		c, err := New("http://broker.test", WithHTTPClient(&http.Client{Transport: failing}),
			WithRetry(0, time.Millisecond, time.Millisecond))
		require.NoError(t, err)
		defer c.Close()

		var reported errorLog
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		err = c.Queue("q").Concurrency(8).OnError(reported.record).Each().
			Consume(ctx, func(context.Context, *Message) error { return nil })
		require.NoError(t, err, "transient errors never end Consume")

		mu.Lock()
		defer mu.Unlock()
		// Pops sent before the first failure was known go out at once (one, from the fetch loop);
		// after that, only probes.
		first := 0
		for first < len(sent) && sent[first] == 0 {
			first++
		}
		assert.GreaterOrEqual(t, first, 1)
		assert.LessOrEqual(t, first, 8)
		probes := sent[first:]
		// Shortest jittered waits 125ms, 250ms, 500ms, 1s, 2s, 4s; longest 375ms ... 6s.
		assert.GreaterOrEqual(t, len(probes), 4)
		assert.LessOrEqual(t, len(probes), 6)
		prev, wait := time.Duration(0), 250*time.Millisecond
		for _, at := range probes {
			assert.GreaterOrEqual(t, at-prev, wait/2, "probe at %v came too soon", at)
			prev, wait = at, 2*wait
		}
		_, errs := reported.all()
		assert.Len(t, errs, len(sent), "every failed pop went to OnError")
	})
}

// A pop of the loop that the broker never answers ends once the http.Client's Timeout has
// passed, and counts as a failure: it is reported and waited out like any other, never taken
// for a pop the loop cut short itself, which would be sent again at once.
func TestAPopThatOutlivesTheTimeoutIsReportedAndWaitedOut(t *testing.T) {
	t.Parallel()
	for _, conc := range []int{1, 4} {
		t.Run(fmt.Sprintf("concurrency=%d", conc), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var sent atomic.Int32
				silent := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					sent.Add(1)
					<-r.Context().Done()
					return nil, r.Context().Err()
				})
				c, err := New("http://broker.test", WithRetry(0, time.Millisecond, time.Millisecond),
					WithHTTPClient(&http.Client{Transport: silent, Timeout: time.Second}))
				require.NoError(t, err)
				defer c.Close()

				var reported errorLog
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
				defer cancel()
				err = c.Queue("q").Concurrency(conc).Wait(false).OnError(reported.record).Each().
					Consume(ctx, func(context.Context, *Message) error { return nil })
				require.NoError(t, err)

				_, errs := reported.all()
				require.NotEmpty(t, errs)
				assert.Len(t, errs, int(sent.Load()), "every pop that timed out went to OnError")
				for _, err := range errs {
					assert.ErrorIs(t, err, context.DeadlineExceeded)
				}
				// A second each, and the backoff between: never one right after the other.
				assert.LessOrEqual(t, int(sent.Load()), 5+conc)
			})
		})
	}
}

// Which pop errors end Consume (an invalid option, 401, 403, a 404 whatever its body, another
// 4xx) and which are waited out (408, 429, 5xx, a 0.15 failure answered 200, a lost connection).
func TestWhichPopErrorsEndConsume(t *testing.T) {
	t.Parallel()
	api := func(status int, notJSON bool) error {
		return &APIError{StatusCode: status, Method: http.MethodGet, Path: "/api/v1/pop", NotJSON: notJSON}
	}
	fatal := map[string]error{
		"401":            api(401, false),
		"403":            api(403, false),
		"404 not JSON":   api(404, true),
		"404 JSON":       api(404, false),
		"400":            api(400, false),
		"invalid option": invalidOption("batch", 0, "must be 1..10000"),
	}
	for name, err := range fatal {
		assert.True(t, isFatal(err), name)
		assert.True(t, isFatal(fmt.Errorf("wrapped: %w", err)), name)
	}
	transient := map[string]error{
		"408":               api(408, false),
		"429":               api(429, false),
		"500":               api(500, false),
		"503":               api(503, false),
		"0.15 200 failure":  api(200, false),
		"connection reset":  errors.New("read tcp: connection reset by peer"),
		"deadline exceeded": context.DeadlineExceeded,
	}
	for name, err := range transient {
		assert.False(t, isFatal(err), name)
	}
}

// A BatchHandler receives one partition's messages per call, in offset order; Partitions(4)
// claims four partitions in one pop, under one lease, which the loop splits by partition.
func TestAMultiPartitionPopIsHandledOnePartitionPerCall(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		srv := mode.Server(t)
		proxy, url := testutil.NewSpy(t, srv.Handler())
		c := newTestClient(t, url)
		for p := range 4 {
			pushN(t, c, "batches", fmt.Sprintf("p%d", p), 5)
		}
		var mu sync.Mutex
		got := map[string][]int{}
		leases := map[string]bool{}
		err := c.Queue("batches").Batch(20).Partitions(4).Concurrency(4).Limit(20).
			Consume(testutil.Context(t), func(ctx context.Context, msgs []*Message) error {
				mu.Lock()
				defer mu.Unlock()
				part := msgs[0].PartitionID
				leases[msgs[0].LeaseID] = true
				for _, m := range msgs {
					assert.Equal(t, part, m.PartitionID, "one partition per call")
					p := decode(t, m)
					got[p.P] = append(got[p.P], p.I)
				}
				return nil
			})
		require.NoError(t, err)
		require.Len(t, got, 4)
		for p, is := range got {
			assert.Equal(t, []int{0, 1, 2, 3, 4}, is, p)
		}
		assert.Len(t, leases, 1, "the four partitions came from one pop")
		assert.Equal(t, 4, len(proxy.Of(route.FamilyAck)), "one batch ack per partition")
		assert.Empty(t, drain(t, c, "batches"))
	})
}

// A pop in flight when the stop begins loses nothing: what it brings is released with retry
// and comes back at once (the broker's clock never moves here).
func TestWhatAPopBringsAfterTheStopIsReleased(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t, queentest.WithManualClock())
	proxy, url := testutil.NewSpy(t, srv.Handler())
	c := newTestClient(t, url)
	pushN(t, c, "late", "p", 3)
	ctx, cancel := context.WithCancel(testutil.Context(t))
	defer cancel()
	proxy.Override(func(r *http.Request) (int, bool) {
		if testutil.RouteOf(r).Family == route.FamilyPop {
			cancel() // the stop begins while the broker is leasing
		}
		return 0, false
	})
	var handled atomic.Int32
	err := c.Queue("late").Batch(3).Each().Consume(ctx, func(context.Context, *Message) error {
		handled.Add(1)
		return nil
	})
	require.NoError(t, err)
	assert.Zero(t, handled.Load())
	msgs := drain(t, c, "late")
	require.Len(t, msgs, 3)
	for _, m := range msgs {
		assert.Equal(t, 2, m.DeliveryAttempt, "leased once, then released")
	}
}

// Transient errors are reported, retried with a growing jittered backoff, and the loop
// recovers once the broker does.
func TestPopFailuresAreReportedAndWaitedOutUntilTheBrokerRecovers(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	proxy, url := testutil.NewSpy(t, srv.Handler())
	const failures = 3
	var failed atomic.Int32
	proxy.Override(func(r *http.Request) (int, bool) {
		if testutil.RouteOf(r).Family == route.FamilyPop && failed.Add(1) <= failures {
			return http.StatusServiceUnavailable, true
		}
		return 0, false
	})
	c := newTestClient(t, url, WithRetry(0, time.Millisecond, time.Millisecond))
	pushN(t, c, "flaky", "p", 1)

	var reported errorLog
	began := time.Now()
	err := c.Queue("flaky").Limit(1).OnError(reported.record).Each().
		Consume(testutil.Context(t), func(context.Context, *Message) error { return nil })
	require.NoError(t, err)
	elapsed := time.Since(began)

	assert.Equal(t, failures+1, len(proxy.Of(route.FamilyPop)), "each failure retried once, then success")
	msgs, errs := reported.all()
	require.Len(t, errs, failures)
	for i, err := range errs {
		assert.Nil(t, msgs[i], "transport errors come without a message")
		var api *APIError
		require.ErrorAs(t, err, &api)
		assert.Equal(t, http.StatusServiceUnavailable, api.StatusCode)
	}
	// The shortest jittered waits are 125ms, 250ms and 500ms: no spinning.
	assert.GreaterOrEqual(t, elapsed, 875*time.Millisecond)
	assert.Empty(t, drain(t, c, "flaky"))
}

// A broker that drops every connection for a while (a restart): the loop carries on, and every
// message is completed in the end.
func TestTheLoopSurvivesABrokerRestart(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	proxy, url := testutil.NewSpy(t, srv.Handler())
	c := newTestClient(t, url, WithRetry(0, time.Millisecond, time.Millisecond))
	for p := range 4 {
		pushN(t, c, "restart", fmt.Sprintf("p%d", p), 5)
	}

	var mu sync.Mutex
	seen := map[string]bool{}
	var down atomic.Int32
	err := c.Queue("restart").Batch(2).LeaseTime(time.Second).IdleTimeout(3*time.Second).Each().
		Consume(testutil.Context(t), func(ctx context.Context, m *Message) error {
			mu.Lock()
			defer mu.Unlock()
			seen[m.TransactionID] = true
			if len(seen) == 5 {
				// The broker goes away for the next 4 requests, whatever they are.
				proxy.Override(func(r *http.Request) (int, bool) {
					return 0, down.Add(1) <= 4
				})
			}
			return nil
		})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, down.Load(), int32(4), "the outage happened")
	assert.Len(t, seen, 20)
	assert.Empty(t, drain(t, c, "restart"), "every message was completed")
}

// Under autopilot the loop sends batch and partitions only as set, caps the batch to what it
// can handle in half a lease, and takes every idle slot for its first pop.
func TestEachPopIsSizedForTheIdleSlotsAndTheLease(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, "http://127.0.0.1:1")
	l := newConsumer(t.Context(), c.Queue("q").Concurrency(8), eachHandling(func(context.Context, *Message) error { return nil }))
	assert.Equal(t, 8, l.slotsPerPop(l.newFetch()))
	p := l.nextPop(0, 8)
	assert.Zero(t, p.partitions, "autopilot chooses the partitions")
	assert.True(t, p.autopilot)
	assert.Zero(t, p.batch, "autopilot chooses the batch")

	size, most, ok := l.nextBatch()
	assert.True(t, ok)
	assert.Zero(t, size)
	assert.Equal(t, autopilotMaxBatch, most)
	l.pace.observe(1, 6*time.Second) // 60s lease: 5 messages fit in half of it
	size, most, _ = l.nextBatch()
	assert.Equal(t, 5, size)
	assert.Equal(t, 5, most)

	fixed := newConsumer(t.Context(), c.Queue("q").Batch(100).Autopilot(false), eachHandling(nil))
	assert.Equal(t, 1, fixed.slotsPerPop(fixed.newFetch()))
	size, _, _ = fixed.nextBatch()
	assert.Equal(t, 100, size)
	assert.Zero(t, fixed.nextPop(size, 1).partitions)

	manual := newConsumer(t.Context(), c.Queue("q").Autopilot(false).Concurrency(16), eachHandling(nil))
	assert.Equal(t, 3, manual.nextPop(0, 3).partitions, "one partition per idle slot without autopilot")
	assert.Zero(t, manual.nextPop(0, 1).partitions)
	onePartition := newConsumer(t.Context(), c.Queue("q").Partition("p").Concurrency(8), eachHandling(nil))
	assert.Equal(t, 1, onePartition.slotsPerPop(onePartition.newFetch()), "a partition route leases one partition at a time")
	grouped := newConsumer(t.Context(), c.Queue("q").Concurrency(8).Partitions(4), eachHandling(nil))
	assert.Equal(t, 4, grouped.nextPop(0, 8).partitions, "partitions as set")
	assert.Equal(t, 4, grouped.nextPop(0, 1).partitions, "partitions as set")

	limited := newConsumer(t.Context(), c.Queue("q").Limit(7), eachHandling(nil))
	size, _, _ = limited.nextBatch()
	assert.Zero(t, size, "Limit leaves the batch to autopilot")
	limited.reserved.Store(3)
	limited.held.Store(4) // leased or being popped
	_, _, ok = limited.nextBatch()
	assert.False(t, ok)
}

// The in-flight bound holds under failure: with Concurrency(1).Batch(10) and five partitions
// whose every message fails, the loop holds at most 2 × 10 × 1 leased messages at any time,
// those whose ack waits out a backoff included, and sends no pop while at the bound. (It held
// all 50 before: a batch waiting out its backoff gave its slot back, and the loop popped on.)
func TestTheInFlightBoundHoldsWhileBatchesWaitOutTheirBackoff(t *testing.T) {
	t.Parallel()
	for _, gen015 := range []bool{false, true} {
		t.Run(fmt.Sprintf("0.15=%v", gen015), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				f := newFakeBroker("down", gen015)
				f.retryLimit, f.countHeld = 1000, true
				for p := range 5 {
					f.pushN(fmt.Sprintf("p%d", p), 10)
				}
				c := f.client(t)
				ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
				defer cancel()
				var calls atomic.Int64
				err := c.Queue("down").Concurrency(1).Batch(10).Each().Consume(ctx, func(context.Context, *Message) error {
					calls.Add(1)
					return errors.New("downstream is down")
				})
				require.NoError(t, err)
				assert.Greater(t, calls.Load(), int64(5), "the loop kept handling")
				f.stats(func(f *fakeBroker) {
					assert.LessOrEqual(t, f.maxLeased, 20, "leased messages held at once")
					assert.Equal(t, 20, f.maxLeased, "the bound, not less: other partitions keep flowing")
				})
			})
		})
	}
}

// With MaxInFlightBytes(n) no pop is sent while the messages the loop holds carry n bytes of
// data or more.
func TestMaxInFlightBytesHoldsPopsBackAtTheBound(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const size, bound = 100, 250
		f := newFakeBroker("big", false)
		f.retryLimit, f.countHeld = 1000, true
		payload := `"` + strings.Repeat("x", size-2) + `"`
		for p := range 6 {
			f.push(fmt.Sprintf("p%d", p), payload, payload)
		}
		c := f.client(t)
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		err := c.Queue("big").Concurrency(4).Batch(2).MaxInFlightBytes(bound).Each().
			Consume(ctx, func(context.Context, *Message) error { return errors.New("not now") })
		require.NoError(t, err)
		f.stats(func(f *fakeBroker) {
			require.NotEmpty(t, f.heldAtPops)
			for i, held := range f.heldAtPops {
				assert.Less(t, held, bound, "pop %d was sent while %d bytes were held", i, held)
			}
			assert.Greater(t, f.maxLeased*size, bound, "the last pop may bring the held data past the bound")
			assert.LessOrEqual(t, f.maxLeased*size, bound+2*size, "but no further pop")
		})
	})
}
