package queen

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// IdleTimeout ends the loop once it has had nothing to do for that long, after handling what
// there was.
func TestIdleTimeoutEndsTheLoopAfterTheWork(t *testing.T) {
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

// IdleTimeout ends Consume with the default long-poll length too: the poll does not outlast it.
func TestIdleTimeoutIsNotOutlastedByTheLongPoll(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		_, c := modeBrokerAndClient(t, mode, queentest.WithManualClock())
		ctx, cancel := context.WithTimeout(testutil.Context(t), 10*time.Second)
		defer cancel()
		err := c.Queue("q").IdleTimeout(30*time.Millisecond).Each().
			Consume(ctx, func(context.Context, *Message) error { return nil })
		require.NoError(t, err)
		assert.NoError(t, ctx.Err(), "IdleTimeout, not the test's deadline, ended Consume")
	})
}
