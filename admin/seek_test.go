package admin_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
	"github.com/queenmq/queen-go/internal/testmode"
)

func TestSeek_R110_ToTimeReplaysExactlyMessagesPushedAtOrAfterIt(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		f := newFixtureIn(t, mode)
		ctx := context.Background()

		f.push(t, "orders", "a", 1, 2)
		f.srv.Advance(10 * time.Second)
		at := f.srv.Now()
		f.push(t, "orders", "a", 3) // stored exactly at the target time: included
		f.push(t, "orders", "b", 4)
		f.srv.Advance(10 * time.Second)
		f.push(t, "orders", "a", 5)

		first := f.pop(t, "orders", "billing", 100)
		first = append(first, f.pop(t, "orders", "billing", 100)...)
		require.ElementsMatch(t, []int{1, 2, 3, 4, 5}, values(t, first))
		f.ackAll(t, first)

		res, err := f.admin.Seek(ctx, "billing", "orders", admin.SeekToTime(at))
		require.NoError(t, err)
		assert.Equal(t, 2, res.PartitionsUpdated)
		assert.WithinDuration(t, at, res.Target, time.Millisecond, "0.15 says the target in milliseconds")

		again := f.pop(t, "orders", "billing", 100)
		again = append(again, f.pop(t, "orders", "billing", 100)...)
		if mode.V015 { // 0.15 excludes the messages stored exactly at the target
			assert.ElementsMatch(t, []int{5}, values(t, again))
		} else {
			assert.ElementsMatch(t, []int{3, 4, 5}, values(t, again))
		}
		assert.Empty(t, f.pop(t, "orders", "billing", 100))
	})
}

func TestSeek_R110_ToEndSkipsTheBacklog(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		f := newFixtureIn(t, mode)
		f.push(t, "orders", "", 1, 2, 3)

		require.NoError(t, f.admin.SeekConsumerGroup(context.Background(), "billing", "orders", admin.SeekToEnd()))
		if mode.V015 { // 0.15 moves only the cursors a group has: this one has none yet
			backlog := f.pop(t, "orders", "billing", 100)
			assert.Equal(t, []int{1, 2, 3}, values(t, backlog))
			f.ackAll(t, backlog)
		} else {
			assert.Empty(t, f.pop(t, "orders", "billing", 100))
		}

		f.push(t, "orders", "", 4)
		assert.Equal(t, []int{4}, values(t, f.pop(t, "orders", "billing", 100)))
	})
}

func TestSeek_R111_ReleasesTheLiveLease(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		f := newFixtureIn(t, mode)
		ctx := context.Background()
		f.push(t, "orders", "", 1, 2)
		leased := f.pop(t, "orders", "billing", 2)
		require.Len(t, leased, 2)

		require.NoError(t, f.admin.SeekConsumerGroup(ctx, "billing", "orders", admin.SeekToTime(time.Unix(0, 0))))

		// The old lease is gone: its acks are refused, and the messages come back without waiting
		// for the lease to expire (the broker's clock stands still).
		results, err := f.client.AckBatch(ctx, []queen.AckItem{
			{Message: leased[0], Status: queen.StatusCompleted},
			{Message: leased[1], Status: queen.StatusCompleted},
		})
		require.NoError(t, err)
		for _, r := range results {
			assert.False(t, r.Success)
			assert.Equal(t, "Invalid or expired lease", r.Error)
		}
		again := f.pop(t, "orders", "billing", 2)
		assert.Equal(t, []int{1, 2}, values(t, again))
		assert.NotEqual(t, leased[0].LeaseID, again[0].LeaseID)
	})
}

func TestSeek_R113_UnknownQueueIsNotFound(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		f := newFixtureIn(t, mode)
		err := f.admin.SeekConsumerGroup(context.Background(), "billing", "nope", admin.SeekToEnd())
		if mode.V015 { // 0.15 answers a success that moved nothing
			require.NoError(t, err)
			return
		}
		require.ErrorIs(t, err, admin.ErrNotFound)
		var apiErr *queen.APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, 404, apiErr.StatusCode)
	})
}
