package queen

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// backoffRig is a broker on a manual clock, so leases last until the test moves it, and a
// client whose loop waits on a manual clock that reports every timer it makes.
func backoffRig(t *testing.T, queue string, retryLimit int) (*queentest.Server, *Client, *manualClock) {
	t.Helper()
	srv, c := brokerAndClient(t, queentest.WithManualClock())
	clock, _ := useManualClock(c)
	clock.armed = make(chan time.Duration, 256)
	configureQueue(t, c, queue, map[string]any{"retryLimit": retryLimit})
	return srv, c, clock
}

// A failing message waits min·2^(n−1) (up to 25 % more) before each redelivery, capped at max.
func TestABackoffDoublesUpToItsCap(t *testing.T) {
	t.Parallel()
	_, c, clock := backoffRig(t, "backoff", 20)
	pushN(t, c, "backoff", "p", 1)
	calls := make(chan int, 16)
	ctx, cancel := context.WithCancel(testutil.Context(t))
	defer cancel()
	done := testutil.Go(func() error {
		return c.Queue("backoff").RetryBackoff(100*time.Millisecond, time.Second).Each().
			Consume(ctx, func(_ context.Context, m *Message) error {
				calls <- m.DeliveryAttempt
				return errors.New("down")
			})
	})
	for n, base := range []time.Duration{100, 200, 400, 800, 1000, 1000} {
		assert.Equal(t, n+1, testutil.Recv(t, calls, "a handler call"))
		d := testutil.Recv(t, clock.armed, "a backoff")
		base *= time.Millisecond
		assert.GreaterOrEqual(t, d, base, "failure %d", n+1)
		assert.LessOrEqual(t, d, min(base*5/4, time.Second), "failure %d", n+1)
		select {
		case <-calls:
			t.Fatalf("failure %d: handled again before its backoff passed", n+1)
		default:
		}
		clock.Advance(d)
	}
	testutil.Recv(t, calls, "the call after the last backoff")
	cancel()
	require.NoError(t, testutil.Recv(t, done, "Consume"))
}

// RetryAfter(d, err) waits d (plus jitter), whatever RetryBackoff says, and spends no retry.
func TestRetryAfterWaitsItsOwnTimeAndSpendsNoRetry(t *testing.T) {
	t.Parallel()
	_, c, clock := backoffRig(t, "after", 0)
	pushN(t, c, "after", "p", 1)
	var attempts []int
	done := testutil.Go(func() error {
		return c.Queue("after").RetryBackoff(time.Millisecond, 10*time.Millisecond).Limit(2).Each().
			Consume(testutil.Context(t), func(_ context.Context, m *Message) error {
				attempts = append(attempts, m.DeliveryAttempt)
				if len(attempts) == 1 {
					return RetryAfter(7*time.Second, errors.New("rate limited"))
				}
				return nil
			})
	})
	d := testutil.Recv(t, clock.armed, "the wait")
	assert.GreaterOrEqual(t, d, 7*time.Second)
	assert.LessOrEqual(t, d, 7*time.Second*5/4)
	clock.Advance(d)
	require.NoError(t, testutil.Recv(t, done, "Consume"))
	assert.Equal(t, []int{1, 2}, attempts, "retry limit 0, yet delivered again: a retry spends nothing")
	assert.Empty(t, deadLetters(t, c, "after"))
}

// A waiting message holds no handler slot: with Concurrency(1), another partition is handled
// while it waits.
func TestOtherPartitionsFlowDuringABackoff(t *testing.T) {
	t.Parallel()
	_, c, clock := backoffRig(t, "flow", 5)
	pushN(t, c, "flow", "slow", 1)
	var mu sync.Mutex
	var handled []string
	calls := make(chan string, 16)
	ctx, cancel := context.WithCancel(testutil.Context(t))
	defer cancel()
	done := testutil.Go(func() error {
		return c.Queue("flow").Concurrency(1).Each().Consume(ctx, func(_ context.Context, m *Message) error {
			mu.Lock()
			handled = append(handled, m.TransactionID)
			first := len(handled) == 1
			mu.Unlock()
			calls <- m.TransactionID
			if first {
				return errors.New("not yet")
			}
			return nil
		})
	})
	assert.Equal(t, "slow-0", testutil.Recv(t, calls, "the failing call"))
	testutil.Recv(t, clock.armed, "its backoff")
	pushN(t, c, "flow", "fast", 3)
	for i := range 3 {
		assert.Equal(t, fmt.Sprintf("fast-%d", i), testutil.Recv(t, calls, "a call on the other partition"))
	}
	clock.Advance(time.Second)
	assert.Equal(t, "slow-0", testutil.Recv(t, calls, "the failed message, after its backoff"))
	cancel()
	require.NoError(t, testutil.Recv(t, done, "Consume"))
}

// A stop ends a backoff at once, acking the held-back outcome itself: a retry spends no budget
// (retry limit 0: nothing is dead-lettered) and a failure spends its one retry, no more.
func TestAStopDuringABackoffSpendsNoRetry(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		outcome error
		limit   int
	}{
		"retry":   {Retry(errors.New("later")), 0},
		"failure": {errors.New("broken"), 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, c, clock := backoffRig(t, "stop", tc.limit)
			pushN(t, c, "stop", "p", 1)
			ctx, cancel := context.WithCancel(testutil.Context(t))
			done := testutil.Go(func() error {
				return c.Queue("stop").Each().Consume(ctx, func(context.Context, *Message) error { return tc.outcome })
			})
			testutil.Recv(t, clock.armed, "the backoff")
			cancel() // without moving the clock: the stop cuts the wait short
			require.NoError(t, testutil.Recv(t, done, "Consume"))

			assert.Empty(t, deadLetters(t, c, "stop"), "the stop spent no retry of its own")
			msgs, err := c.Queue("stop").Pop(t.Context())
			require.NoError(t, err)
			require.Len(t, msgs, 1, "delivered again at once")
			require.NoError(t, msgs[0].Nack(t.Context(), errors.New("again")))
			if tc.limit == 1 {
				assert.Len(t, deadLetters(t, c, "stop"), 1, "the first failure spent the one retry")
			}
		})
	}
}

// A handler whose ctx the stop cancelled (ShutdownTimeout passed) and that then returns an
// error is acked retry, not failed: with a retry limit of 0 the message is not dead-lettered,
// and it comes back at once.
func TestAStopIsNotTheMessagesFailure(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		_, c := modeBrokerAndClient(t, mode, queentest.WithManualClock())
		configureQueue(t, c, "cancelled", map[string]any{"retryLimit": 0})
		pushN(t, c, "cancelled", "p", 1)
		started := make(chan struct{})
		ctx, cancel := context.WithCancel(testutil.Context(t))
		var cause error
		done := testutil.Go(func() error {
			return c.Queue("cancelled").ShutdownTimeout(0).Each().Consume(ctx, func(hctx context.Context, _ *Message) error {
				close(started)
				<-hctx.Done()
				cause = context.Cause(hctx)
				return hctx.Err()
			})
		})
		testutil.Recv(t, started, "the handler")
		cancel()
		require.NoError(t, testutil.Recv(t, done, "Consume"))
		assert.ErrorIs(t, cause, errStopped)
		assert.Empty(t, deadLetters(t, c, "cancelled"), "a stop is not the message's failure")
		msgs, err := c.Queue("cancelled").Pop(t.Context())
		require.NoError(t, err)
		require.Len(t, msgs, 1)
		assert.Equal(t, mode.Attempt(2), msgs[0].DeliveryAttempt)
	})
}

// AckEvery(n, 0): after a crash, only what was handled since the last progress ack comes back.
func TestAckEveryBoundsWhatACrashDeliversAgain(t *testing.T) {
	t.Parallel()
	srv, c := brokerAndClient(t, queentest.WithManualClock())
	pushN(t, c, "progress", "p", 10)
	crashed := make(chan struct{})
	ctx, cancel := context.WithCancel(testutil.Context(t))
	done := testutil.Go(func() error {
		return c.Queue("progress").Batch(10).AckEvery(3, 0).ShutdownTimeout(0).Each().Consume(ctx, func(hctx context.Context, m *Message) error {
			if decode(t, m).I == 7 {
				close(crashed) // the process dies here: nothing more is sent for this batch
				<-hctx.Done()
			}
			return nil
		})
	})
	testutil.Recv(t, crashed, "the crash")
	srv.Advance(61 * time.Second) // the dead process's lease runs out
	msgs, err := c.Queue("progress").Batch(10).Pop(t.Context())
	require.NoError(t, err)
	var again []int
	for _, m := range msgs {
		again = append(again, decode(t, m).I)
	}
	assert.Equal(t, []int{6, 7, 8, 9}, again, "0..5 were acked in two progress acks of 3")
	cancel()
	require.NoError(t, testutil.Recv(t, done, "Consume"))
}

// A run of 503s on the ack route, longer than the transport's retries, while the lease still
// holds: the loop keeps sending the ack, and no handled message is delivered twice.
func TestAnAckOutlivesARunOfFailures(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		srv, c := modeBrokerAndClient(t, mode, queentest.WithManualClock())
		pushN(t, c, "burst", "p", 20)
		// newTestClient sends each request 3 times: this fails three acks in a row.
		srv.Fail(queentest.Fault{Route: "ack", Status: 503, Times: 9})
		var mu sync.Mutex
		deliveries := map[string]int{}
		err := c.Queue("burst").Batch(10).LeaseTime(10*time.Second).Limit(20).Each().
			Consume(testutil.Context(t), func(_ context.Context, m *Message) error {
				mu.Lock()
				deliveries[m.TransactionID]++
				mu.Unlock()
				return nil
			})
		require.NoError(t, err)
		srv.Advance(11 * time.Second)
		assert.Empty(t, drain(t, c, "burst"), "every handled message was acked")
		assert.Len(t, deliveries, 20)
		for tx, n := range deliveries {
			assert.Equal(t, 1, n, "%s delivered %d times", tx, n)
		}
	})
}

// Against a broker that sends no deliveryAttempt (0.15), the client counts the failures: the
// backoff still doubles. A wait of a second or more extends the lease first, whatever lease the
// client believes the queue has.
func TestTheLoopCountsFailuresWhereTheBrokerSendsNoDeliveryAttempt(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t, queentest.WithCompat("0.15"))
	proxy, base := testutil.NewSpy(t, srv.Handler())
	c := newTestClient(t, base)
	clock, _ := useManualClock(c)
	clock.armed = make(chan time.Duration, 16)
	configureQueue(t, c, "legacy", map[string]any{"retryLimit": 10})
	pushN(t, c, "legacy", "p", 1)
	calls := make(chan int, 8)
	ctx, cancel := context.WithCancel(testutil.Context(t))
	defer cancel()
	done := testutil.Go(func() error {
		return c.Queue("legacy").RetryBackoff(time.Second, time.Minute).Each().
			Consume(ctx, func(_ context.Context, m *Message) error {
				calls <- m.DeliveryAttempt
				return errors.New("down")
			})
	})
	for i, base := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		assert.Zero(t, testutil.Recv(t, calls, "a call"), "0.15 sends no deliveryAttempt")
		d := testutil.Recv(t, clock.armed, "a backoff")
		assert.GreaterOrEqual(t, d, base)
		assert.LessOrEqual(t, d, base*5/4)
		// Counted once the wait is armed: the next wait's extend may already be on its way
		// once the next call has returned.
		assert.Equal(t, i+1, proxy.Count(route.Extend), "each wait extended the lease first")
		clock.Advance(d)
	}
	testutil.Recv(t, calls, "the call after the third backoff")
	cancel()
	require.NoError(t, testutil.Recv(t, done, "Consume"))
}

// An ack whose answer was lost after the broker applied it is resent once by the transport;
// the resend's refusal is reported as an unknown outcome and not sent again.
func TestAnAckWhoseAnswerWasLostIsNotResentForever(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t, queentest.WithManualClock())
	proxy, base := testutil.NewSpy(t, srv.Handler())
	c := newTestClient(t, base)
	pushN(t, c, "lost-answer", "p", 1)
	srv.Fail(queentest.Fault{Route: "ack", After: true})
	var reported errorLog
	err := c.Queue("lost-answer").Limit(1).OnError(reported.record).Each().
		Consume(testutil.Context(t), func(context.Context, *Message) error { return nil })
	require.NoError(t, err)
	assert.Equal(t, 2, len(proxy.Of(route.FamilyAck)), "the request and the transport's one resend")
	_, errs := reported.all()
	require.Len(t, errs, 1)
	assert.ErrorIs(t, errs[0], ErrOutcomeUnknown)
	srv.Advance(61 * time.Second)
	assert.Empty(t, drain(t, c, "lost-answer"), "the first ack was applied")
}

// A message its handler dead-letters is filed even when the handler of the next message in the
// batch acks that one itself: the loop's dlq reaches the broker first. Were it held back to the
// end of the batch, the handler's own completed would move the cursor past it, the late dlq
// would change nothing (an ack never moves a cursor back), and the message would be neither
// done nor filed: lost. Found by the chaos suite (each/manual-ack).
func TestADeadLetterIsSentBeforeTheNextMessageIsHandled(t *testing.T) {
	t.Parallel()
	for _, autoAck := range []bool{false, true} {
		t.Run(fmt.Sprintf("autoAck=%v", autoAck), func(t *testing.T) {
			t.Parallel()
			_, c := brokerAndClient(t, queentest.WithManualClock())
			pushN(t, c, "filed", "p", 4)

			var order []string
			err := c.Queue("filed").Batch(4).AutoAck(autoAck).Limit(4).Each().
				Consume(testutil.Context(t), func(ctx context.Context, m *Message) error {
					i := decode(t, m).I
					order = append(order, fmt.Sprintf("%d@%d", i, m.DeliveryAttempt))
					if i == 1 {
						return DeadLetter(errors.New("poison"))
					}
					return m.Ack(ctx) // the handler settles the others itself
				})
			require.NoError(t, err)

			assert.Equal(t, []string{"0@1", "1@1", "2@1", "3@1"}, order, "one batch, one delivery each")
			dl := deadLetters(t, c, "filed")
			require.Len(t, dl, 1, "the dead-lettered message was filed")
			assert.Equal(t, "p-1", dl[0].TransactionID)
			assert.Equal(t, "poison", dl[0].ErrorMessage)
			assert.Empty(t, drain(t, c, "filed"))
		})
	}
}

// Retry redelivers at once without spending the retry budget; DeadLetter files the message at
// once, whatever the budget, with the error's text.
func TestRetryAndDeadLetterReachTheBroker(t *testing.T) {
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
// the failed ends the lease, so the rest of the batch comes back with it, unhandled.
func TestAFailureAcksUpToTheFailedMessage(t *testing.T) {
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

// A failed that spends the last retry files the message and leaves the lease on the messages
// above it; the loop releases them with retry, so they come back at once instead of after the
// lease. The broker's clock never moves here: only a release frees them.
func TestAFailureThatFilesTheMessageReleasesTheRestOfTheBatch(t *testing.T) {
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
func TestABatchFailureThatFilesTheMessageReleasesTheRest(t *testing.T) {
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

// With AutoAck(false) a handler acks itself; what it left unsettled when it fails is acked
// failed; what it settled is not acked twice.
func TestWithoutAutoAckTheHandlerSettles(t *testing.T) {
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
