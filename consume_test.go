package queen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

type payload struct {
	P string `json:"p"`
	I int    `json:"i"`
}

func decode(t testing.TB, m *Message) payload {
	var p payload
	if err := json.Unmarshal(m.Data, &p); err != nil {
		t.Errorf("decode %s: %v", m.TransactionID, err)
	}
	return p
}

// R16, R19: each partition is handled one message at a time in push order, while several
// partitions run at once.
func TestConsumeKeepsPartitionOrderAndRunsPartitionsInParallel(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		_, c := modeBrokerAndClient(t, mode)
		const partitions, perPartition = 16, 10
		for p := range partitions {
			pushN(t, c, "order", fmt.Sprintf("p%02d", p), perPartition)
		}

		var (
			mu       sync.Mutex
			seen     = map[string][]int{}
			running  = map[string]bool{}
			overlap  bool
			inFlight atomic.Int32
		)
		parallel := newCloseOnce()
		err := c.Queue("order").Concurrency(8).Limit(partitions*perPartition).Each().
			Consume(testutil.Context(t), func(ctx context.Context, m *Message) error {
				p := decode(t, m)
				mu.Lock()
				if running[p.P] {
					overlap = true // two messages of one partition at once
				}
				running[p.P] = true
				seen[p.P] = append(seen[p.P], p.I)
				mu.Unlock()
				if inFlight.Add(1) >= 2 {
					parallel.close()
				}
				// The first handlers wait until a second one runs: only parallel partitions get past.
				select {
				case <-parallel.done():
				case <-time.After(testutil.Timeout):
					t.Error("no second handler ran while the first one was running")
				}
				inFlight.Add(-1)
				mu.Lock()
				running[p.P] = false
				mu.Unlock()
				return nil
			})
		require.NoError(t, err)

		assert.False(t, overlap, "two messages of one partition were handled at once")
		require.Len(t, seen, partitions)
		for p, got := range seen {
			want := make([]int, perPartition)
			for i := range want {
				want[i] = i
			}
			assert.Equal(t, want, got, "partition %s", p)
		}
		assert.Empty(t, drain(t, c, "order"), "every message was completed")
	})
}

// R135, R136, R69, R91: a panic is recovered, logged, reported and acked failed; the message
// comes back one attempt higher until the budget is spent and it is dead-lettered, while the
// other partitions complete.
func TestConsumePanicIsNackedRedeliveredThenDeadLettered(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		srv := mode.Server(t)
		var logs testutil.LogBuffer
		c := newTestClient(t, srv.URL(), WithLogger(jsonLogger(&logs)))
		configureQueue(t, c, "poison", map[string]any{"retryLimit": 2})
		pushN(t, c, "poison", "bad", 1)
		for p := range 4 {
			pushN(t, c, "poison", fmt.Sprintf("good%d", p), 2)
		}

		var (
			mu       sync.Mutex
			attempts []int
			good     = map[string]int{}
			reported errorLog
			seen     deliveries
		)
		err := c.Queue("poison").Concurrency(4).Limit(8+3).OnError(reported.record).Each().
			Consume(testutil.Context(t), func(ctx context.Context, m *Message) error {
				mu.Lock()
				defer mu.Unlock()
				if decode(t, m).P == "bad" {
					attempts = append(attempts, seen.next(t, mode, m))
					panic("boom")
				}
				good[m.TransactionID]++
				return nil
			})
		require.NoError(t, err)

		assert.Equal(t, []int{1, 2, 3}, attempts, "delivered retryLimit+1 times, one attempt higher each")
		assert.Len(t, good, 8)
		for id, n := range good {
			assert.Equal(t, 1, n, "good message %s handled once", id)
		}
		dl := deadLetters(t, c, "poison")
		require.Len(t, dl, 1)
		assert.Equal(t, "bad-0", dl[0].TransactionID)
		assert.Equal(t, "panic: boom", dl[0].ErrorMessage)
		assert.Equal(t, 2, dl[0].RetryCount)
		assert.Empty(t, drain(t, c, "poison"))

		msgs, errs := reported.all()
		require.Len(t, errs, 3, "OnError saw every panic")
		for i, err := range errs {
			var p *PanicError
			require.ErrorAs(t, err, &p)
			assert.Equal(t, "boom", p.Value)
			assert.Equal(t, "panic: boom", err.Error())
			assert.Equal(t, "bad-0", msgs[i].TransactionID)
		}
		out := logs.String()
		assert.Contains(t, out, `"msg":"queen: consume handler panicked"`)
		assert.Contains(t, out, `"transactionId":"bad-0"`)
		if !mode.V015 { // 0.15 sends no delivery attempt to log
			assert.Contains(t, out, `"attempt":3`)
		}
		assert.Contains(t, out, `"partition":"bad"`)
		assert.Contains(t, out, "consume_test.go", "the stack shows the handler")
		assert.NotContains(t, out, "(*consumer).handleEach", "the stack is trimmed to the handler")
	})
}

// R71, R72, R90: Retry redelivers at once without spending the budget; DeadLetter files the
// message at once with the error's text.
func TestConsumeRetryAndDeadLetterOutcomesReachTheBroker(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		_, c := modeBrokerAndClient(t, mode)
		configureQueue(t, c, "outcomes", map[string]any{"retryLimit": 0})
		pushN(t, c, "outcomes", "r", 1)
		pushN(t, c, "outcomes", "d", 1)

		var mu sync.Mutex
		var retried []int
		var seen deliveries
		err := c.Queue("outcomes").Concurrency(2).Limit(3).Each().
			Consume(testutil.Context(t), func(ctx context.Context, m *Message) error {
				if decode(t, m).P == "d" {
					return DeadLetter(errors.New("bad input"))
				}
				mu.Lock()
				defer mu.Unlock()
				n := seen.next(t, mode, m)
				retried = append(retried, n)
				if n == 1 {
					return Retry(errors.New("not yet"))
				}
				return nil
			})
		require.NoError(t, err)

		assert.Equal(t, []int{1, 2}, retried, "retry came back, and retryLimit 0 was not spent")
		dl := deadLetters(t, c, "outcomes")
		require.Len(t, dl, 1)
		assert.Equal(t, "d-0", dl[0].TransactionID)
		assert.Equal(t, "bad input", dl[0].ErrorMessage)
		assert.Equal(t, 0, dl[0].RetryCount)
		assert.Empty(t, drain(t, c, "outcomes"))
	})
}

// A failed message is acked after the completed ones below it, and nothing above it is acked:
// the rest of the batch comes back (O18, R69).
func TestConsumeFailureAcksUpToTheFailedMessage(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		_, c := modeBrokerAndClient(t, mode)
		pushN(t, c, "stop", "p", 5)

		var mu sync.Mutex
		var order, attempts []string
		var seen deliveries
		err := c.Queue("stop").Batch(5).Limit(6).Each().
			Consume(testutil.Context(t), func(ctx context.Context, m *Message) error {
				mu.Lock()
				defer mu.Unlock()
				n := seen.next(t, mode, m)
				order = append(order, fmt.Sprintf("%d#%d", decode(t, m).I, n))
				attempts = append(attempts, fmt.Sprintf("%d@%d", decode(t, m).I, m.DeliveryAttempt))
				if decode(t, m).I == 2 && n == 1 {
					return errors.New("transient")
				}
				return nil
			})
		require.NoError(t, err)
		// 0 and 1 completed; 2 failed; 3 and 4 were never handled in the first batch.
		assert.Equal(t, []string{"0#1", "1#1", "2#1", "2#2", "3#1", "4#1"}, order, "handled, and how often")
		if !mode.V015 { // 3 and 4 were leased with the first batch and released
			assert.Equal(t, []string{"0@1", "1@1", "2@1", "2@2", "3@2", "4@2"}, attempts)
		}
		assert.Empty(t, drain(t, c, "stop"))
	})
}

// A failed that spends the last retry files the message (R70) and leaves the lease on the
// messages above it; the loop releases them with retry, so they come back at once instead of
// after the lease (R71, R84). The broker's clock never moves here: only a release frees them.
func TestConsumeDeadLetteredFailureDoesNotStrandTheRestOfTheBatch(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		_, c := modeBrokerAndClient(t, mode, queentest.WithManualClock())
		configureQueue(t, c, "strand", map[string]any{"retryLimit": 0})
		pushN(t, c, "strand", "p", 4)

		var order, attempts []string
		var seen deliveries
		err := c.Queue("strand").Batch(4).Limit(4).Each().
			Consume(testutil.Context(t), func(ctx context.Context, m *Message) error {
				order = append(order, fmt.Sprintf("%d#%d", decode(t, m).I, seen.next(t, mode, m)))
				attempts = append(attempts, fmt.Sprintf("%d@%d", decode(t, m).I, m.DeliveryAttempt))
				if decode(t, m).I == 1 {
					return errors.New("poison")
				}
				return nil
			})
		require.NoError(t, err)
		assert.Equal(t, []string{"0#1", "1#1", "2#1", "3#1"}, order, "handled, and how often")
		if !mode.V015 { // 2 and 3 were leased with the first batch and released
			assert.Equal(t, []string{"0@1", "1@1", "2@2", "3@2"}, attempts)
		}
		require.Len(t, deadLetters(t, c, "strand"), 1)
		assert.Empty(t, drain(t, c, "strand"))
	})
}

// The same for a BatchHandler that settled the first message itself and failed on the second.
func TestConsumeBatchDeadLetteredFailureDoesNotStrandTheRest(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		_, c := modeBrokerAndClient(t, mode, queentest.WithManualClock())
		configureQueue(t, c, "strand-batch", map[string]any{"retryLimit": 0})
		pushN(t, c, "strand-batch", "p", 4)

		var order []string
		var seen deliveries
		err := c.Queue("strand-batch").Batch(4).AutoAck(false).Limit(6).
			Consume(testutil.Context(t), func(ctx context.Context, msgs []*Message) error {
				first := 0
				for i, m := range msgs {
					n := seen.next(t, mode, m)
					order = append(order, fmt.Sprintf("%d@%d", decode(t, m).I, n))
					if i == 0 {
						first = n
					}
				}
				if first == 1 {
					require.NoError(t, msgs[0].Ack(ctx))
					return errors.New("poison") // fails msgs[1], the first one left unsettled
				}
				for _, m := range msgs {
					require.NoError(t, m.Ack(ctx))
				}
				return nil
			})
		require.NoError(t, err)
		assert.Equal(t, []string{"0@1", "1@1", "2@1", "3@1", "2@2", "3@2"}, order)
		require.Len(t, deadLetters(t, c, "strand-batch"), 1)
		assert.Empty(t, drain(t, c, "strand-batch"))
	})
}

// A BatchHandler receives one partition's messages per call, in offset order; Partitions(4)
// claims four partitions in one pop (R32), which the loop splits by partition.
func TestConsumeBatchHandlerGetsOnePartitionPerCall(t *testing.T) {
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

// R136: with AutoAck(false) a handler acks itself; what it left unsettled when it fails is
// nacked; what it settled is not acked twice.
func TestConsumeWithoutAutoAck(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		_, c := modeBrokerAndClient(t, mode)
		pushN(t, c, "manual", "p", 2)

		var mu sync.Mutex
		var handled []string
		var reported errorLog
		var seen deliveries
		err := c.Queue("manual").AutoAck(false).Limit(3).OnError(reported.record).Each().
			Consume(testutil.Context(t), func(ctx context.Context, m *Message) error {
				mu.Lock()
				n := seen.next(t, mode, m)
				handled = append(handled, fmt.Sprintf("%d@%d", decode(t, m).I, n))
				mu.Unlock()
				if decode(t, m).I == 0 {
					assert.NoError(t, m.Ack(ctx))
					return nil
				}
				if n == 1 {
					return errors.New("left unsettled")
				}
				return m.Ack(ctx)
			})
		require.NoError(t, err)
		assert.Equal(t, []string{"0@1", "1@1", "1@2"}, handled)
		_, errs := reported.all()
		require.Len(t, errs, 1, "only the handler failure; no ack was refused")
		assert.EqualError(t, errs[0], "left unsettled")
		assert.Empty(t, drain(t, c, "manual"))
	})
}

// Limit is exact across goroutines; the messages leased beyond it are released at once.
func TestConsumeLimitIsExactAcrossGoroutines(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		srv, c := modeBrokerAndClient(t, mode, queentest.WithManualClock())
		for p := range 8 {
			pushN(t, c, "limit", fmt.Sprintf("p%d", p), 5)
		}
		var handled atomic.Int32
		err := c.Queue("limit").Batch(10).Concurrency(4).Limit(5).Each().
			Consume(testutil.Context(t), func(ctx context.Context, m *Message) error {
				handled.Add(1)
				return nil
			})
		require.NoError(t, err)
		assert.EqualValues(t, 5, handled.Load())
		_ = srv // the clock never moved: what is left came back by release, not by expiry
		assert.Len(t, drain(t, c, "limit"), 40-5)
	})
}

// After ctx is done: running handlers finish and are acked, unstarted messages come back at
// once (no expiry needed), nothing is lost or handled twice, and Consume returns nil.
func TestConsumeCancelMidBatch(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		_, c := modeBrokerAndClient(t, mode, queentest.WithManualClock())
		pushN(t, c, "cancel", "p", 10)

		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		started, release := make(chan struct{}), make(chan struct{})
		var mu sync.Mutex
		var first []int
		done := testutil.Go(func() error {
			return c.Queue("cancel").Batch(10).Each().Consume(ctx, func(hctx context.Context, m *Message) error {
				i := decode(t, m).I
				mu.Lock()
				first = append(first, i)
				mu.Unlock()
				if i == 2 {
					close(started)
					select { // bounded: a failed wait below must not leave Close waiting forever
					case <-release:
					case <-time.After(testutil.Timeout):
					}
					if hctx.Err() != nil {
						t.Error("the handler ctx was cancelled within the shutdown grace")
					}
				}
				return nil
			})
		})
		testutil.Recv(t, started, "the third message")
		cancel()
		close(release)
		require.NoError(t, testutil.Recv(t, done, "Consume to return"))
		assert.Equal(t, []int{0, 1, 2}, first)

		// Released with retry: they are there now, one attempt higher, on an unmoved clock.
		var second []int
		err := c.Queue("cancel").Limit(7).Batch(10).Each().Consume(testutil.Context(t), func(ctx context.Context, m *Message) error {
			assert.Equal(t, mode.Attempt(2), m.DeliveryAttempt)
			second = append(second, decode(t, m).I)
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, []int{3, 4, 5, 6, 7, 8, 9}, second)
		assert.Empty(t, drain(t, c, "cancel"))
	})
}

// A pop in flight when the stop begins loses nothing: what it brings is released with retry
// and comes back at once (the broker's clock never moves here).
func TestConsumeReleasesWhatAPopBringsAfterTheStop(t *testing.T) {
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

// A handler still running when ShutdownTimeout passes has its ctx cancelled; its ack is still
// sent, on a ctx of the loop's own.
func TestConsumeShutdownTimeoutCancelsHandlersButStillAcks(t *testing.T) {
	t.Parallel()
	_, c := brokerAndClient(t)
	pushN(t, c, "grace", "p", 1)
	ctx, cancel := context.WithCancel(t.Context())
	started := make(chan struct{})
	done := testutil.Go(func() error {
		return c.Queue("grace").ShutdownTimeout(0).Each().Consume(ctx, func(hctx context.Context, m *Message) error {
			close(started)
			<-hctx.Done()
			return nil // finished its work despite the cancel
		})
	})
	testutil.Recv(t, started, "the handler")
	cancel()
	require.NoError(t, testutil.Recv(t, done, "Consume to return"))
	assert.Empty(t, drain(t, c, "grace"), "the message was acked completed after the cancel")
}

// Close stops a running Consume, which returns nil; a later Consume returns ErrClosed.
func TestConsumeStopsOnClose(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	proxy, url := testutil.NewSpy(t, srv.Handler())
	polling := newCloseOnce()
	proxy.Override(func(r *http.Request) (int, bool) {
		if testutil.RouteOf(r).Family == route.FamilyPop {
			polling.close()
		}
		return 0, false
	})
	c, err := New(url)
	require.NoError(t, err)
	h := func(context.Context, *Message) error { return nil }
	done := testutil.Go(func() error { return c.Queue("idle").Each().Consume(testutil.Context(t), h) })
	testutil.Recv(t, polling.done(), "the first pop")
	require.NoError(t, c.Close())
	require.NoError(t, testutil.Recv(t, done, "Consume to return"))
	assert.ErrorIs(t, c.Queue("idle").Each().Consume(testutil.Context(t), h), ErrClosed)
}

// IdleTimeout ends the loop after that long with nothing to do.
func TestConsumeIdleTimeout(t *testing.T) {
	t.Parallel()
	_, c := brokerAndClient(t)
	pushN(t, c, "idle", "p", 3)
	var handled atomic.Int32
	err := c.Queue("idle").IdleTimeout(100*time.Millisecond).Each().
		Consume(testutil.Context(t), func(ctx context.Context, m *Message) error {
			handled.Add(1)
			return nil
		})
	require.NoError(t, err)
	assert.EqualValues(t, 3, handled.Load())
}

// A 401 ends Consume at once with the *APIError, after one request.
func TestConsumeUnauthorizedIsFatal(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t, queentest.WithToken("secret"))
	proxy, url := testutil.NewSpy(t, srv.Handler())
	c := newTestClient(t, url)
	err := c.Queue("q").Each().Consume(testutil.Context(t), func(context.Context, *Message) error { return nil })
	var api *APIError
	require.ErrorAs(t, err, &api)
	assert.Equal(t, http.StatusUnauthorized, api.StatusCode)
	assert.Equal(t, 1, len(proxy.All()))
}

// O10: a 404 whose body is not JSON (a 0.15 broker without the discovery route) is fatal.
func TestConsumeMissingRouteIsFatal(t *testing.T) {
	t.Parallel()
	proxy, url := testutil.NewSpy(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Not Found", http.StatusNotFound)
	}))
	c := newTestClient(t, url)
	err := c.Queue("").Namespace("billing").Task("invoices").Each().
		Consume(testutil.Context(t), func(context.Context, *Message) error { return nil })
	var api *APIError
	require.ErrorAs(t, err, &api)
	assert.Equal(t, http.StatusNotFound, api.StatusCode)
	assert.True(t, api.NotJSON)
	assert.Equal(t, 1, len(proxy.All()))
}

// Transient errors are reported, retried with a growing jittered backoff, and the loop
// recovers once the broker does.
func TestConsumeBacksOffOnServerErrorsAndRecovers(t *testing.T) {
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
func TestConsumeSurvivesBrokerRestart(t *testing.T) {
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

// Invalid options end Consume before any request.
func TestConsumeInvalidOptionsSendNothing(t *testing.T) {
	t.Parallel()
	proxy, url := testutil.NewSpy(t, http.NotFoundHandler())
	c := newTestClient(t, url)
	h := func(context.Context, *Message) error { return nil }
	cases := map[string]QueueBuilder{
		"batch":          c.Queue("q").Batch(0),
		"partitions":     c.Queue("q").Partitions(65),
		"timeout":        c.Queue("q").Timeout(61 * time.Second),
		"concurrency":    c.Queue("q").Concurrency(0),
		"limit":          c.Queue("q").Limit(0),
		"idleTimeout":    c.Queue("q").IdleTimeout(-time.Second),
		"queue":          c.Queue(""),
		"leaseTime":      c.Queue("q").LeaseTime(time.Millisecond),
		"renewLease":     c.Queue("q").RenewLease(true, -time.Second),
		"shutdown":       c.Queue("q").ShutdownTimeout(-1),
		"conflation":     c.Queue("q").Conflation(true),
		"subscription":   c.Queue("q").Group("g").SubscriptionMode("old"),
		"discovery+part": c.Queue("").Namespace("n").Partition("p"),
	}
	for name, b := range cases {
		err := b.Each().Consume(testutil.Context(t), h)
		assert.ErrorIs(t, err, ErrInvalidOption, name)
		assert.Contains(t, err.Error(), strings.Split(name, "+")[0], name)
		err = b.Consume(testutil.Context(t), func(context.Context, []*Message) error { return nil })
		assert.ErrorIs(t, err, ErrInvalidOption, name)
	}
	assert.ErrorIs(t, c.Queue("q").Each().Consume(testutil.Context(t), nil), ErrInvalidOption)
	assert.ErrorIs(t, c.Queue("q").Consume(testutil.Context(t), nil), ErrInvalidOption)
	assert.Equal(t, 0, len(proxy.All()))
}

// R138, R61: the renewer keeps a batch whose handler runs three leases long; nothing is
// delivered again meanwhile.
func TestConsumeRenewalKeepsALongHandlerLeased(t *testing.T) {
	t.Parallel()
	srv, c := brokerAndClient(t, queentest.WithManualClock())
	clock, renewed := useManualRenewClock(c)
	watcher := newTestClient(t, srv.URL())
	pushN(t, c, "long", "p", 1)

	started, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	done := testutil.Go(func() error {
		return c.Queue("long").LeaseTime(10*time.Second).RenewLease(true, 0).Limit(1).Each().
			Consume(testutil.Context(t), func(ctx context.Context, m *Message) error {
				calls.Add(1)
				close(started)
				<-release
				return ctx.Err()
			})
	})
	testutil.Recv(t, started, "the handler")
	for range 6 { // every 5s (half the lease), 30s of broker time: three leases
		clock.Advance(5 * time.Second)
		require.NoError(t, testutil.Recv(t, renewed, "a renewal"))
		srv.Advance(5 * time.Second)
		msgs, err := watcher.Queue("long").Pop(t.Context())
		require.NoError(t, err)
		require.Empty(t, msgs, "the leased message was handed out again")
	}
	close(release)
	require.NoError(t, testutil.Recv(t, done, "Consume to return"))
	assert.EqualValues(t, 1, calls.Load())
	assert.Empty(t, drain(t, c, "long"), "completed under the renewed lease")
}

// A refused renewal cancels the handler ctx with ErrLeaseLost, and no ack is sent for it.
func TestConsumeLostLeaseCancelsTheHandler(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t, queentest.WithManualClock())
	proxy, url := testutil.NewSpy(t, srv.Handler())
	c := newTestClient(t, url)
	clock, renewed := useManualRenewClock(c)
	pushN(t, c, "lost", "p", 1)

	started := make(chan struct{}, 2)
	causes := make(chan error, 2)
	var attempts []int
	done := testutil.Go(func() error {
		return c.Queue("lost").LeaseTime(10*time.Second).RenewLease(true, 0).Limit(2).Each().
			Consume(testutil.Context(t), func(ctx context.Context, m *Message) error {
				attempts = append(attempts, m.DeliveryAttempt)
				if m.DeliveryAttempt > 1 {
					return nil
				}
				started <- struct{}{}
				<-ctx.Done()
				causes <- context.Cause(ctx)
				return ctx.Err()
			})
	})
	testutil.Recv(t, started, "the handler")
	srv.Advance(11 * time.Second) // the broker expires the lease
	acksBefore := len(proxy.Of(route.FamilyAck))
	clock.Advance(5 * time.Second)
	assert.ErrorIs(t, testutil.Recv(t, renewed, "the renewal"), ErrLeaseExpired)
	assert.ErrorIs(t, testutil.Recv(t, causes, "the handler's ctx"), ErrLeaseLost)
	require.NoError(t, testutil.Recv(t, done, "Consume to return"))
	assert.Equal(t, []int{1, 2}, attempts)
	assert.Equal(t, acksBefore+1, len(proxy.Of(route.FamilyAck)), "only the redelivery was acked")
	assert.Empty(t, drain(t, c, "lost"))
}

// A message whose lease ran out (by the client's clock) while an earlier one was handled is
// never handed to the handler: it is released and handled on its redelivery.
func TestConsumeSkipsMessagesWhoseLeaseRanOut(t *testing.T) {
	t.Parallel()
	_, c := brokerAndClient(t, queentest.WithManualClock())
	clock, _ := useManualRenewClock(c)
	pushN(t, c, "expiry", "p", 3)

	var handled []string
	err := c.Queue("expiry").Batch(3).LeaseTime(10*time.Second).Limit(3).Each().
		Consume(testutil.Context(t), func(ctx context.Context, m *Message) error {
			handled = append(handled, fmt.Sprintf("%d@%d", decode(t, m).I, m.DeliveryAttempt))
			if len(handled) == 1 {
				clock.Advance(11 * time.Second) // the first message took longer than the lease
			}
			return nil
		})
	require.NoError(t, err)
	assert.Equal(t, []string{"0@1", "1@2", "2@2"}, handled)
}

// The loop sends batch and partitions only as set (R137), caps the batch to
// what it can handle in half a lease, and takes every idle slot for one pop.
func TestConsumePopSizing(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, "http://127.0.0.1:1")
	l := newConsumer(t.Context(), c.Queue("q").Concurrency(8), eachHandling(func(context.Context, *Message) error { return nil }))
	assert.Equal(t, 8, l.slotsPerPop())
	p := l.nextPop(0, 8)
	assert.Zero(t, p.partitions, "autopilot chooses the partitions (R137)")
	assert.True(t, p.autopilot)
	assert.Zero(t, p.batch, "autopilot chooses the batch (R137)")

	size, most, ok := l.nextBatch()
	assert.True(t, ok)
	assert.Zero(t, size)
	assert.Equal(t, autopilotMaxBatch, most)
	l.pace.observe(1, 6*time.Second) // 60s lease: 5 messages fit in half of it
	size, most, _ = l.nextBatch()
	assert.Equal(t, 5, size)
	assert.Equal(t, 5, most)

	fixed := newConsumer(t.Context(), c.Queue("q").Batch(100).Autopilot(false), eachHandling(nil))
	assert.Equal(t, 1, fixed.slotsPerPop())
	size, _, _ = fixed.nextBatch()
	assert.Equal(t, 100, size)
	assert.Zero(t, fixed.nextPop(size, 1).partitions)

	manual := newConsumer(t.Context(), c.Queue("q").Autopilot(false).Concurrency(16), eachHandling(nil))
	assert.Equal(t, 3, manual.nextPop(0, 3).partitions, "one partition per idle slot without autopilot")
	assert.Zero(t, manual.nextPop(0, 1).partitions)
	onePartition := newConsumer(t.Context(), c.Queue("q").Partition("p").Concurrency(8), eachHandling(nil))
	assert.Equal(t, 1, onePartition.slotsPerPop(), "a partition route leases one partition at a time")
	grouped := newConsumer(t.Context(), c.Queue("q").Concurrency(8).Partitions(4), eachHandling(nil))
	assert.Equal(t, 4, grouped.nextPop(0, 8).partitions, "partitions as set (R137)")
	assert.Equal(t, 4, grouped.nextPop(0, 1).partitions, "partitions as set (R137)")

	limited := newConsumer(t.Context(), c.Queue("q").Limit(7), eachHandling(nil))
	size, _, _ = limited.nextBatch()
	assert.Zero(t, size, "Limit leaves the batch to autopilot (R137)")
	limited.reserved.Store(3)
	limited.held.Store(4) // leased or being popped
	_, _, ok = limited.nextBatch()
	assert.False(t, ok)
}

func TestTrimStackKeepsTheHandlerFrames(t *testing.T) {
	t.Parallel()
	var p *PanicError
	func() {
		defer func() { p = newPanicError(recover()) }()
		panicky()
	}()
	assert.Equal(t, "panic: trimmed", p.Error())
	assert.True(t, strings.HasPrefix(p.Stack, "github.com/queenmq/queen-go.panicky("), p.Stack)
	assert.Contains(t, p.Stack, "TestTrimStackKeepsTheHandlerFrames")
	assert.NotContains(t, p.Stack, "runtime/debug.Stack")
	assert.True(t, slices.ContainsFunc(strings.Split(p.Stack, "\n"), func(s string) bool {
		return strings.Contains(s, "consume_test.go")
	}))
}

func panicky() { panic("trimmed") }
