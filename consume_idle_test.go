package queen

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
