package queen_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
)

// IdleTimeout, ctx and Close are graceful stops: Consume returns nil.
func TestEveryGracefulStopReturnsNil(t *testing.T) {
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

// Consume with an already-ended ctx returns nil and sends nothing.
func TestConsumeWithAnEndedCtxReturnsNilAndSendsNothing(t *testing.T) {
	t.Parallel()
	_, tap, c := tapped(t, testmode.Modes[0])
	ctx, cancel := context.WithCancel(testutil.Context(t))
	cancel()
	err := c.Queue("q").Each().Consume(ctx, func(context.Context, *queen.Message) error { return nil })
	assert.NoError(t, err)
	assert.Empty(t, tap.All())
}
