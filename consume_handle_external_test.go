package queen_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// A BatchHandler gets the leased messages of a partition in one call; nil completes them all.
func TestABatchHandlerGetsThePartitionsBatchAndCompletesItWithNil(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		_, tap, c := tapped(t, m, queentest.WithManualClock())
		push(t, c, "q", "p1", 1, 2, 3)
		var got [][]*queen.Message
		err := c.Queue("q").Batch(10).Limit(3).Consume(testutil.Context(t), func(_ context.Context, msgs []*queen.Message) error {
			got = append(got, msgs)
			return nil
		})
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Len(t, got[0], 3)
		acks := sentAcks(tap)
		require.Len(t, acks, 3)
		for _, a := range acks {
			assert.Equal(t, "completed", a["status"])
		}
	})
}

// Limit(n) returns nil after n handler returns; leased messages never started come back at
// once (released with retry), not after their lease.
func TestLimitReleasesWhatItDidNotHandOut(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		_, tap, c := tapped(t, m, queentest.WithManualClock())
		push(t, c, "q", "", 0, 1, 2, 3, 4)
		var calls atomic.Int32
		err := c.Queue("q").Group("g").SubscriptionMode(queen.SubscribeAll).Batch(5).Limit(3).Each().
			Consume(testutil.Context(t), func(context.Context, *queen.Message) error {
				calls.Add(1)
				return nil
			})
		require.NoError(t, err)
		assert.EqualValues(t, 3, calls.Load())
		statuses := map[string]int{}
		for _, a := range sentAcks(tap) {
			statuses[a["status"].(string)]++
		}
		// The release may be one retry on the lowest unstarted message: in a batch ack the
		// broker then hands back everything above it too.
		assert.Equal(t, 3, statuses["completed"])
		assert.Positive(t, statuses["retry"])
		assert.Len(t, statuses, 2)
		rest, err := c.Queue("q").Group("g").Batch(10).Pop(testutil.Context(t))
		require.NoError(t, err)
		require.Len(t, rest, 2, "the unstarted messages are available at once")
		var first int
		require.NoError(t, rest[0].Decode(&first))
		assert.Equal(t, 3, first)
	})
}
