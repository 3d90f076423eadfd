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

// IdleTimeout ends Consume with the default long-poll length too: the poll does not outlast it.
func TestAcceptanceIdleTimeoutWithDefaultPoll(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		_, _, c := tapped(t, m, queentest.WithManualClock())
		ctx, cancel := context.WithTimeout(testutil.Context(t), 10*time.Second)
		defer cancel()
		err := c.Queue("q").IdleTimeout(30*time.Millisecond).Each().
			Consume(ctx, func(context.Context, *queen.Message) error { return nil })
		require.NoError(t, err)
		assert.NoError(t, ctx.Err(), "IdleTimeout, not the test's deadline, ended Consume")
	})
}
