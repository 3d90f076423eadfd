package queen_test

import (
	"context"
	"testing"
	"time"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// IdleTimeout, ctx and Close are graceful stops: Consume returns nil.
func TestAcceptanceGracefulStopsReturnNil(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		t.Run("idle", func(t *testing.T) {
			t.Parallel()
			_, _, c := tapped(t, m)
			err := c.Queue("q").Timeout(5*time.Second).IdleTimeout(30*time.Millisecond).Each().
				Consume(testutil.Context(t), func(context.Context, *queen.Message) error { return nil })
			assert.NoError(t, err)
		})
		t.Run("ctx", func(t *testing.T) {
			t.Parallel()
			_, _, c := tapped(t, m)
			ctx, cancel := context.WithCancel(testutil.Context(t))
			done := make(chan error, 1)
			push(t, c, "q", "", 1)
			handled := make(chan struct{})
			go func() {
				done <- c.Queue("q").Each().Consume(ctx, func(context.Context, *queen.Message) error {
					close(handled)
					return nil
				})
			}()
			testutil.Recv(t, handled, "the handler")
			cancel()
			assert.NoError(t, testutil.Recv(t, done, "Consume to return"))
		})
		t.Run("close", func(t *testing.T) {
			t.Parallel()
			_, _, c := tapped(t, m)
			push(t, c, "q", "", 1)
			done := make(chan error, 1)
			handled := make(chan struct{})
			go func() {
				done <- c.Queue("q").Each().Consume(testutil.Context(t), func(context.Context, *queen.Message) error {
					close(handled)
					return nil
				})
			}()
			testutil.Recv(t, handled, "the handler")
			require.NoError(t, c.Close())
			assert.NoError(t, testutil.Recv(t, done, "Consume to return"))
			require.NoError(t, c.Close(), "Close is idempotent")
		})
	})
}

// Consume with an already-ended ctx returns nil; on a closed client it sends nothing.
func TestAcceptanceConsumeEndedCtx(t *testing.T) {
	t.Parallel()
	_, tap, c := tapped(t, testmode.Modes[0])
	ctx, cancel := context.WithCancel(testutil.Context(t))
	cancel()
	err := c.Queue("q").Each().Consume(ctx, func(context.Context, *queen.Message) error { return nil })
	assert.NoError(t, err)
	require.NoError(t, c.Close())
	_, err = c.Queue("q").Pop(testutil.Context(t))
	assert.ErrorIs(t, err, queen.ErrClosed)
	_, err = c.Queue("q").Push(testutil.Context(t), queen.PushItem{Data: 1})
	assert.ErrorIs(t, err, queen.ErrClosed)
	assert.Zero(t, tap.Containing("/pop")+tap.Containing("/push"))
}

// After ctx is done an in-flight handler finishes with its ctx still live, its ack is sent,
// and the leased messages it never started come back at once.
func TestAcceptanceStopGivesInFlightHandlersTheirGrace(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		_, tap, c := tapped(t, m, queentest.WithManualClock())
		push(t, c, "q", "", 0, 1, 2)
		ctx, cancel := context.WithCancel(testutil.Context(t))
		started, release := make(chan struct{}), make(chan struct{})
		handlerCtxErr := make(chan error, 1)
		done := make(chan error, 1)
		calls := 0
		go func() {
			done <- c.Queue("q").Group("g").SubscriptionMode(queen.SubscribeAll).Batch(3).
				ShutdownTimeout(10*time.Second).Each().Consume(ctx, func(hctx context.Context, _ *queen.Message) error {
				calls++
				close(started)
				<-release
				handlerCtxErr <- hctx.Err()
				return nil
			})
		}()
		testutil.Recv(t, started, "the first handler")
		cancel()
		close(release)
		require.NoError(t, testutil.Recv(t, done, "Consume to return"))
		assert.NoError(t, <-handlerCtxErr, "the handler's ctx stays live within ShutdownTimeout")
		assert.Equal(t, 1, calls, "no new handler starts after the stop")
		got := statuses(tap)
		require.NotEmpty(t, got)
		assert.Equal(t, "completed", got[0], "the in-flight handler's ack is still sent")
		rest, err := c.Queue("q").Group("g").Batch(10).Pop(testutil.Context(t))
		require.NoError(t, err)
		assert.Len(t, rest, 2, "the unstarted messages are released, not held until the lease ends")
	})
}
