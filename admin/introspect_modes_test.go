package admin_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/admin"
	"github.com/queenmq/queen-go/internal/testmode"
)

// The reads of lagState's state against the reference broker as 2.0 and as 0.15: the same
// answers where 0.15 reports them, unknown (-1) or approximate where it does not.
func TestIntrospection_BothModes(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		f := lagStateIn(t, mode)
		ctx := context.Background()

		qs, err := f.admin.Queues(ctx)
		require.NoError(t, err)
		require.Len(t, qs, 1)
		assert.Equal(t, int64(7), qs[0].Messages)
		assert.Equal(t, mode.V015, qs[0].Approximate)
		_, err = f.admin.QueueInfo(ctx, "nope")
		assert.ErrorIs(t, err, admin.ErrNotFound)

		groups, err := f.admin.ConsumerGroups(ctx)
		require.NoError(t, err)
		require.Len(t, groups, 2)
		s := groups[1].Queues[0]
		assert.Equal(t, "slow", groups[1].Name)
		assert.Equal(t, int64(2), s.Members)
		assert.Equal(t, "Stable", s.State)
		assert.Equal(t, 30*time.Second, s.TimeLag)
		if mode.V015 {
			assert.Equal(t, int64(-1), s.Lag, "0.15 sends totalLag null")
		} else {
			assert.Equal(t, int64(5), s.Lag)
		}

		g, err := f.admin.ConsumerGroup(ctx, "slow")
		require.NoError(t, err)
		parts := g.Queues[0].Partitions
		if mode.V015 { // only the partitions with a cursor row, no cursor reported
			require.Len(t, parts, 2)
			assert.Equal(t, int64(-1), parts[0].Cursor)
		} else {
			require.Len(t, parts, 3)
			parts = parts[1:]
		}
		assert.Equal(t, "p0", parts[0].Partition)
		assert.Equal(t, int64(2), parts[0].TotalConsumed)
		assert.False(t, parts[0].LastConsumedAt.IsZero())
		assert.True(t, parts[1].Leased)
		assert.NotEmpty(t, parts[1].LeaseID)
		_, err = f.admin.ConsumerGroup(ctx, "nobody")
		assert.ErrorIs(t, err, admin.ErrNotFound)

		lag, err := f.admin.Lagging(ctx, admin.LagQuery{Group: "slow"})
		require.NoError(t, err)
		require.Len(t, lag, 2)
		assert.Equal(t, "p0", lag[0].Partition)
		none, err := f.admin.Lagging(ctx, admin.LagQuery{MinLag: time.Minute})
		require.NoError(t, err)
		assert.Empty(t, none)

		peek, err := f.admin.Messages(ctx, admin.MessageQuery{Queue: "orders", Partition: "p0"})
		require.NoError(t, err)
		require.Len(t, peek, 4)
		assert.JSONEq(t, `{"n":3}`, string(peek[0].Data), "newest first, payload fetched")
		assert.Equal(t, mode.Offset(3), peek[0].Offset)
		one, err := f.admin.Message(ctx, peek[0].PartitionID, peek[0].TransactionID)
		require.NoError(t, err)
		assert.JSONEq(t, `{"n":3}`, string(one.Data))
		_, err = f.admin.Message(ctx, peek[0].PartitionID, "nope")
		assert.ErrorIs(t, err, admin.ErrNotFound)

		o, err := f.admin.Overview(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(7), o.Messages)
		h, err := f.admin.Health(ctx)
		require.NoError(t, err)
		assert.Equal(t, "healthy", h.Status)
	})
}
