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
	"github.com/queenmq/queen-go/internal/testutil"
)

// After a seek to a time, the group's next pops return exactly the messages pushed at or after
// it, whatever it had read; a 0.15 broker excludes a message stored exactly at the target.
func TestSeekToTimeReplaysExactlyTheMessagesPushedAtOrAfterIt(t *testing.T) {
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

// After a seek to the end, the group receives only messages stored later; a 0.15 broker moves
// only the cursors a group already has.
func TestSeekToEndSkipsTheBacklog(t *testing.T) {
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

// A seek releases the group's live leases on the queue: acks under them are refused, and the
// messages come back at once.
func TestSeekReleasesTheGroupsLiveLease(t *testing.T) {
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

// A seek on a queue the broker does not know is ErrNotFound with the broker's 404; a 0.15
// broker answers a success that moved nothing.
func TestSeekOnAnUnknownQueueIsNotFound(t *testing.T) {
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

// A seek sends its target (a time in RFC 3339, or toEnd) and decodes a 0.15 broker's account.
func TestSeekSendsItsTargetAndDecodesA015Answer(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	spy := &testutil.Spy{}
	const path = broker + "/api/v1/consumer-groups/g1/queues/smoke-basic/seek"
	mt.RegisterResponder("POST", path, spy.Respond(200, capturedSeekTime))

	res, err := a.Seek(context.Background(), "g1", "smoke-basic", admin.SeekToTime(time.Unix(0, 0)))
	require.NoError(t, err)
	assert.Equal(t, `{"timestamp":"1970-01-01T00:00:00Z"}`, string(spy.Only(t).Body))
	assert.Equal(t, admin.SeekResult{ConsumerGroup: "g1", Queue: "smoke-basic", Target: time.Unix(0, 0).UTC(), PartitionsUpdated: 1}, res)

	spy.Reset()
	mt.RegisterResponder("POST", path, spy.Respond(200, capturedSeekEnd))
	res, err = a.Seek(context.Background(), "g1", "smoke-basic", admin.SeekToEnd())
	require.NoError(t, err)
	assert.Equal(t, `{"toEnd":true}`, string(spy.Only(t).Body))
	assert.Equal(t, admin.SeekResult{ConsumerGroup: "g1", Queue: "smoke-basic", ToEnd: true, PartitionsUpdated: 1}, res)
}
