package queen_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// A lost lease cancels the handler's ctx with cause ErrLeaseLost, and no ack is sent for it.
func TestAcceptanceLostLease(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		srv, tap, c := tapped(t, m, queentest.WithManualClock())
		push(t, c, "q", "", 0)
		cause := make(chan error, 1)
		started := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			done <- c.Queue("q").RenewLease(true, 20*time.Millisecond).Limit(1).Each().
				Consume(testutil.Context(t), func(hctx context.Context, _ *queen.Message) error {
					close(started)
					<-hctx.Done()
					cause <- context.Cause(hctx)
					return hctx.Err()
				})
		}()
		testutil.Recv(t, started, "the handler")
		srv.Advance(time.Hour) // the lease expires: the next renewal is refused
		assert.ErrorIs(t, testutil.Recv(t, cause, "the handler's ctx to end"), queen.ErrLeaseLost)
		require.NoError(t, testutil.Recv(t, done, "Consume to return"))
		assert.Empty(t, statuses(tap), "no ack for a lost lease")
	})
}

// Transient pop failures are reported to OnError and retried; they never end the loop.
func TestAcceptanceTransientErrorsAreRetried(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		srv, _, c := tapped(t, m)
		push(t, c, "q", "", 0)
		srv.Fail(queentest.Fault{Route: "pop", Status: 503, Times: 6})
		var mu sync.Mutex
		var reported []error
		err := c.Queue("q").Limit(1).OnError(func(msg *queen.Message, err error) {
			mu.Lock()
			reported = append(reported, err)
			mu.Unlock()
		}).Each().Consume(testutil.Context(t), func(context.Context, *queen.Message) error { return nil })
		require.NoError(t, err)
		mu.Lock()
		defer mu.Unlock()
		assert.NotEmpty(t, reported, "the outage reached OnError")
	})
}

// A discovery pop against a broker without that route ends Consume with an error.
func TestAcceptanceDiscoveryOn015IsFatal(t *testing.T) {
	t.Parallel()
	_, _, c := tapped(t, testmode.Modes[1])
	err := c.Queue("").Namespace("ns").Task("t").Each().
		Consume(testutil.Context(t), func(context.Context, *queen.Message) error { return nil })
	require.Error(t, err)
	assert.NotErrorIs(t, err, queen.ErrInvalidOption)
}

// No error string contains the token.
func TestAcceptanceTokenNeverInErrors(t *testing.T) {
	t.Parallel()
	const tok = "s3cr3t-token-value"
	srv := testmode.Modes[0].Server(t, queentest.WithToken("other"))
	c, err := queen.New(srv.URL(), queen.WithToken(tok), queen.WithRetry(0, time.Millisecond, time.Millisecond))
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Queue("q").Pop(testutil.Context(t))
	require.Error(t, err)
	assert.NotContains(t, err.Error(), tok)
	_, err = c.Queue("q").Push(testutil.Context(t), queen.PushItem{Data: 1})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), tok)
	err = c.Queue("q").Each().Consume(testutil.Context(t), func(context.Context, *queen.Message) error { return nil })
	require.Error(t, err)
	assert.NotContains(t, err.Error(), tok)
}

// Message.Renew and Client.Renew extend a live lease; a lost one is refused.
func TestAcceptanceRenew(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		srv, _, c := tapped(t, m, queentest.WithManualClock())
		push(t, c, "q", "", 0)
		msgs, err := c.Queue("q").Pop(testutil.Context(t))
		require.NoError(t, err)
		require.Len(t, msgs, 1)
		exp, err := msgs[0].Renew(testutil.Context(t), 2*time.Minute)
		require.NoError(t, err)
		assert.False(t, exp.IsZero())
		_, err = c.Renew(testutil.Context(t), msgs[0].LeaseID, time.Minute)
		require.NoError(t, err)
		srv.Advance(time.Hour)
		_, err = msgs[0].Renew(testutil.Context(t), time.Minute)
		require.Error(t, err)
		assert.True(t, errors.Is(err, queen.ErrLeaseExpired) || errors.Is(err, queen.ErrLeaseLost), "%v", err)
	})
}

// AckBatch reports refusals per item; the request itself succeeded.
func TestAcceptanceAckBatchPerItem(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		_, _, c := tapped(t, m, queentest.WithManualClock())
		push(t, c, "q", "", 0, 1)
		msgs, err := c.Queue("q").Batch(2).Pop(testutil.Context(t))
		require.NoError(t, err)
		require.Len(t, msgs, 2)
		res, err := c.AckBatch(testutil.Context(t), []queen.AckItem{
			{Message: msgs[0], Status: queen.StatusCompleted},
			{Message: msgs[1], Status: queen.StatusFailed, Error: "nope"},
		})
		require.NoError(t, err)
		require.Len(t, res, 2)
		for _, r := range res {
			assert.True(t, r.Success, "%+v", r)
		}
		assert.Equal(t, msgs[0].TransactionID, res[0].TransactionID)
		assert.ErrorIs(t, msgs[0].Ack(testutil.Context(t)), queen.ErrAlreadySettled)
		res, err = c.AckBatch(testutil.Context(t), nil)
		require.NoError(t, err, "an empty batch is answered locally")
		assert.Empty(t, res)
	})
}

// Handled hooks see every outcome, a panic flagged.
func TestAcceptanceHandledHookSeesPanics(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		var mu sync.Mutex
		var events []queen.HandledEvent
		_, _, c := tappedWith(t, m, []queen.Option{queen.WithHooks(queen.Hooks{Handled: func(e queen.HandledEvent) {
			mu.Lock()
			events = append(events, e)
			mu.Unlock()
		}})}, queentest.WithManualClock())
		push(t, c, "q", "", 0)
		var onErr error
		err := c.Queue("q").Limit(1).OnError(func(_ *queen.Message, err error) { onErr = err }).Each().
			Consume(testutil.Context(t), func(context.Context, *queen.Message) error { panic(errors.New("bang")) })
		require.NoError(t, err)
		require.Error(t, onErr)
		assert.True(t, strings.Contains(onErr.Error(), "bang"), "%v", onErr)
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, events, 1)
		assert.True(t, events[0].Panicked)
		assert.Equal(t, queen.StatusFailed, events[0].Outcome)
	})
}

// Limit(n) across several handler goroutines hands out exactly n messages.
func TestAcceptanceLimitAcrossGoroutines(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		_, _, c := tapped(t, m, queentest.WithManualClock())
		for _, p := range []string{"a", "b", "c", "d"} {
			push(t, c, "q", p, 0, 1, 2, 3, 4)
		}
		var mu sync.Mutex
		calls := 0
		err := c.Queue("q").Group("g").SubscriptionMode(queen.SubscribeAll).Concurrency(4).Limit(7).Each().
			Consume(testutil.Context(t), func(context.Context, *queen.Message) error {
				mu.Lock()
				calls++
				mu.Unlock()
				return nil
			})
		require.NoError(t, err)
		assert.Equal(t, 7, calls)
		rest, err := c.Queue("q").Group("g").Batch(100).Partitions(4).Pop(testutil.Context(t))
		require.NoError(t, err)
		assert.Len(t, rest, 13, "everything not handled is available at once")
	})
}

// An answer larger than WithMaxResponseBytes fails, naming the limit.
func TestAcceptanceMaxResponseBytes(t *testing.T) {
	t.Parallel()
	srv := testmode.Modes[0].Server(t)
	c, err := queen.New(srv.URL(), queen.WithMaxResponseBytes(512))
	require.NoError(t, err)
	defer c.Close()
	big := strings.Repeat("x", 2048)
	_, err = c.Queue("q").Push(testutil.Context(t), queen.PushItem{Data: big})
	require.NoError(t, err)
	_, err = c.Queue("q").Pop(testutil.Context(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "512")
}
