package queen

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
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
	"github.com/queenmq/queen-go/internal/wire"
	"github.com/queenmq/queen-go/queentest"
)

// Shutdown(ctx) returns ctx's error while a handler ignores its cancelled ctx, and the loop
// logs the message it holds every 10s; Close still waits for the handler.
func TestAStuckHandlerIsLoggedEveryTenSecondsAndShutdownReturnsAtItsCtxEnd(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	var logs testutil.LogBuffer
	c := newTestClient(t, srv.URL(), WithLogger(jsonLogger(&logs)))
	clock, _ := useManualClock(c)
	clock.armed = make(chan time.Duration, 16)
	pushN(t, c, "stuck", "p", 1)

	started, release := make(chan struct{}), make(chan struct{})
	done := testutil.Go(func() error {
		return c.Queue("stuck").ShutdownTimeout(0).Each().Consume(context.Background(),
			func(context.Context, *Message) error {
				close(started)
				<-release // ignores its ctx
				return nil
			})
	})
	testutil.Recv(t, started, "the handler")
	ctx, cancel := context.WithCancel(context.Background())
	shut := testutil.Go(func() error { return c.Shutdown(ctx) })
	assert.Equal(t, stuckLogEvery, testutil.Recv(t, clock.armed, "the stuck watch"))
	for range 2 {
		clock.Advance(stuckLogEvery)
		testutil.Recv(t, clock.armed, "the next stuck watch") // made once the line was logged
	}
	lines := strings.Count(logs.String(), `"msg":"queen: consume handler still running after its ctx was cancelled"`)
	assert.Equal(t, 2, lines, logs.String())
	assert.Contains(t, logs.String(), `"level":"ERROR"`)
	assert.Contains(t, logs.String(), `"transactionId":"p-0"`)
	assert.Contains(t, logs.String(), `"queue":"stuck","partition":"p"`)

	cancel()
	assert.ErrorIs(t, testutil.Recv(t, shut, "Shutdown"), context.Canceled)
	close(release)
	require.NoError(t, testutil.Recv(t, done, "Consume"))
	require.NoError(t, c.Close(), "Close waits for the Close that Shutdown began")
	assert.ErrorIs(t, c.Queue("stuck").Each().Consume(t.Context(), func(context.Context, *Message) error { return nil }), ErrClosed)
}

// Each partition is handled one message at a time in push order, while several partitions run
// at once.
func TestPartitionsAreHandledInOrderAndSideBySide(t *testing.T) {
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

// A panic is recovered, logged with its stack, reported and acked failed; the message comes
// back one attempt higher until the budget is spent and it is dead-lettered, while the other
// partitions complete.
func TestAPanicIsAckedFailedUntilTheMessageIsDeadLettered(t *testing.T) {
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
		assert.Contains(t, out, "consume_handle_test.go", "the stack shows the handler")
		assert.NotContains(t, out, "(*consumer).", "the stack is trimmed to the handler")
	})
}

// Limit is exact across goroutines; the messages leased beyond it are released at once.
func TestLimitIsExactAcrossHandlerGoroutines(t *testing.T) {
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

// A message whose lease ran out (by the client's clock) while an earlier one was handled is
// never handed to the handler: it is released and handled on its redelivery. (With renewal
// off: on, the lease would have been extended.)
func TestAMessageWhoseLeaseRanOutIsNotHandedOut(t *testing.T) {
	t.Parallel()
	_, c := brokerAndClient(t, queentest.WithManualClock())
	clock, _ := useManualClock(c)
	pushN(t, c, "expiry", "p", 3)

	var handled []string
	err := c.Queue("expiry").Batch(3).LeaseTime(10*time.Second).RenewLease(false, 0).Limit(3).Each().
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

func TestAPanicsStackKeepsTheHandlersFramesOnly(t *testing.T) {
	t.Parallel()
	var p *PanicError
	func() {
		defer func() { p = newPanicError(recover()) }()
		panicky()
	}()
	assert.Equal(t, "panic: trimmed", p.Error())
	assert.True(t, strings.HasPrefix(p.Stack, "github.com/queenmq/queen-go.panicky("), p.Stack)
	assert.Contains(t, p.Stack, "TestAPanicsStackKeepsTheHandlersFramesOnly")
	assert.NotContains(t, p.Stack, "runtime/debug.Stack")
	assert.True(t, slices.ContainsFunc(strings.Split(p.Stack, "\n"), func(s string) bool {
		return strings.Contains(s, "consume_handle_test.go")
	}))
}

func panicky() { panic("trimmed") }

// HandlerTimeout ends each handler call's ctx after d with cause ErrHandlerTimeout, on the
// client's clock; what the handler returns then is acked as usual, so an error spends a
// retry (with retryLimit 0 the message is dead-lettered) and nil completes.
func TestHandlerTimeoutEndsTheCallAndItsReturnIsAcked(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		srv := mode.Server(t, queentest.WithManualClock())
		spy, url := testutil.NewSpy(t, srv.Handler())
		c := newTestClient(t, url)
		clock, _ := useManualClock(c)
		configureQueue(t, c, "slow", map[string]any{"retryLimit": 0})
		pushN(t, c, "slow", "p", 2)
		started := make(chan struct{}, 2)
		var causes []error
		err := c.Queue("slow").Batch(2).HandlerTimeout(time.Minute).RenewLease(false, 0).RetryBackoff(0, 0).Limit(2).Each().
			Consume(testutil.Context(t), func(ctx context.Context, m *Message) error {
				started <- struct{}{}
				clock.Advance(time.Minute)
				<-ctx.Done()
				causes = append(causes, context.Cause(ctx))
				if decode(t, m).I == 0 {
					return ctx.Err()
				}
				return nil
			})
		require.NoError(t, err)
		require.Len(t, causes, 2)
		for _, cause := range causes {
			assert.ErrorIs(t, cause, ErrHandlerTimeout)
		}
		// The timed-out failure spends the retry and files p-0; p-1, above it, is released and
		// comes back, and its nil completes it.
		assert.Equal(t, []string{"failed", "retry", "completed"}, ackStatuses(t, spy))
		dl := deadLetters(t, c, "slow")
		require.Len(t, dl, 1, "retry limit 0: the failure filed it")
		assert.Equal(t, "p-0", dl[0].TransactionID)
		srv.Advance(time.Hour)
		assert.Empty(t, drain(t, c, "slow"), "the second message, which returned nil, was completed")
	})
}

// A handler call that has run for 5 minutes is logged at warn, with its message, and again
// each 5 minutes more, so that a hung handler holding its partition is seen.
func TestAHandlerRunningFiveMinutesIsLoggedEveryFiveMinutes(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t, queentest.WithManualClock())
	lines := make(chan string, 16)
	c := newTestClient(t, srv.URL(), WithLogger(slog.New(&lineHandler{lines: lines})))
	clock, _ := useManualClock(c)
	pushN(t, c, "hung", "p", 1)
	started, release := make(chan struct{}), make(chan struct{})
	releaseOnce := sync.OnceFunc(func() { close(release) })
	t.Cleanup(releaseOnce) // before the client's Close, which waits for the handler
	done := testutil.Go(func() error {
		return c.Queue("hung").RenewLease(false, 0).Limit(1).Each().
			Consume(testutil.Context(t), func(context.Context, *Message) error {
				close(started)
				<-release
				return nil
			})
	})
	testutil.Recv(t, started, "the handler")
	clock.Advance(4 * time.Minute)
	clock.Advance(time.Minute)
	for _, want := range []string{"5m0s", "10m0s"} {
		line := testutil.Recv(t, lines, "the long-running warning")
		assert.Contains(t, line, "WARN queen: consume handler still running")
		assert.Contains(t, line, "queue=hung partition=p transactionId=p-0 running="+want)
		clock.Advance(5 * time.Minute)
	}
	releaseOnce()
	require.NoError(t, testutil.Recv(t, done, "Consume"))
}

// ackStatuses are the statuses of the ack items a spy saw, in order.
func ackStatuses(t *testing.T, spy *testutil.Spy) []string {
	t.Helper()
	var out []string
	for _, r := range spy.Of(route.FamilyAck) {
		var body wire.AckBatchRequest
		require.NoError(t, wire.Unmarshal(r.Body, &body))
		for _, a := range body.Acknowledgments {
			out = append(out, cmp.Or(a.Status, "completed"))
		}
	}
	return out
}

// lineHandler sends each record's level, message and attributes to lines, as one line.
type lineHandler struct{ lines chan<- string }

func (h *lineHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *lineHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *lineHandler) WithGroup(string) slog.Handler            { return h }
func (h *lineHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Level.String() + " " + r.Message)
	r.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.String())
		return true
	})
	if r.Level >= slog.LevelWarn {
		h.lines <- b.String()
	}
	return nil
}

// A handler still running after a lost lease cancelled its ctx is logged stuck from the
// second look of the loop's watch on, so that a call the renewal has only just lost is not
// reported at once; the first look logs nothing, and a batch between calls is never logged.
func TestAHandlerRunningAfterItsLeaseWasLostIsLoggedStuckFromTheWatchsSecondLook(t *testing.T) {
	t.Parallel()
	lines := make(chan string, 16)
	clock := newManualClock()
	l := &consumer{c: &Client{clock: clock}, handlerCtx: context.Background(),
		log: &consumeLog{logger: slog.New(&lineHandler{lines: lines})}}
	m := &Message{Queue: "q", Partition: "p", TransactionID: "t-1"}
	b := &leasedBatch{msgs: []*Message{m}}
	b.calling.Store(-1)
	l.running.add(b)
	b.lost.Store(true)
	l.checkRunning()
	b.calling.Store(0)
	b.callStart.Store(clock.Now().UnixNano())
	l.checkRunning()
	assert.Empty(t, lines, "the first look at a lost lease logs nothing")
	clock.Advance(batchWatchEvery)
	l.checkRunning()
	line := testutil.Recv(t, lines, "the stuck line")
	assert.Contains(t, line, "ERROR queen: consume handler still running after its ctx was cancelled")
	assert.Contains(t, line, "transactionId=t-1 running=10s cause=queen: lease lost")
	l.running.remove(b)
	l.checkRunning()
	assert.Empty(t, lines, "a batch that ended is not looked at")
}
