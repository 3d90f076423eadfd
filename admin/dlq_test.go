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

func TestDeadLetters_R98_PagesWithTotal(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		f := newFixtureIn(t, mode)
		ctx := context.Background()
		for v := 1; v <= 5; v++ {
			f.fileDeadLetters(t, "orders", "billing", v)
			f.srv.Advance(time.Second) // distinct failedAt: a stable newest-first order
		}
		f.fileDeadLetters(t, "other", "billing", 9)

		page, err := f.admin.DeadLetters(ctx, admin.DLQQuery{Queue: "orders", Limit: 2})
		require.NoError(t, err)
		assert.Equal(t, unknownOn015(mode, 5), page.Total)
		assert.Equal(t, 2, page.Limit)
		assert.Equal(t, 0, page.Offset)
		require.Len(t, page.DeadLetters, 2)
		assert.JSONEq(t, `{"n":5}`, string(page.DeadLetters[0].Data), "newest failure first")
		dl := page.DeadLetters[0]
		assert.Equal(t, "orders", dl.Queue)
		assert.Equal(t, "Default", dl.Partition)
		assert.Equal(t, "billing", dl.ConsumerGroup)
		assert.Equal(t, `poison {"n":5}`, dl.Error)
		assert.NotEmpty(t, dl.ID)
		assert.False(t, dl.FailedAt.IsZero())
		if mode.V015 { // the listed id is the message's; the list does not page
			assert.Equal(t, dl.ID, dl.MessageID)
			all, err := f.admin.AllDeadLetters(ctx, admin.DLQQuery{Queue: "orders", Limit: 2})
			require.NoError(t, err)
			assert.Len(t, all, 5, "one request lists them all")
			return
		}
		assert.NotEqual(t, dl.ID, dl.MessageID, "2.0 dead letters have their own id")

		last, err := f.admin.DeadLetters(ctx, admin.DLQQuery{Queue: "orders", Limit: 2, Offset: 4})
		require.NoError(t, err)
		require.Len(t, last.DeadLetters, 1)
		assert.JSONEq(t, `{"n":1}`, string(last.DeadLetters[0].Data))
		assert.Equal(t, 5, last.Total)

		all, err := f.admin.AllDeadLetters(ctx, admin.DLQQuery{Queue: "orders", Limit: 2})
		require.NoError(t, err)
		require.Len(t, all, 5)
		seen := map[string]bool{}
		for _, dl := range all {
			seen[dl.ID] = true
		}
		assert.Len(t, seen, 5, "paging neither repeats nor skips")

		none, err := f.admin.DeadLetters(ctx, admin.DLQQuery{Queue: "orders", ConsumerGroup: "shipping"})
		require.NoError(t, err)
		assert.Equal(t, 0, none.Total)
		assert.Empty(t, none.DeadLetters)
	})
}

func TestReplayDeadLetter_R99_CopySeenByEveryGroup(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.push(t, "orders", "", 7)
	billing := f.pop(t, "orders", "billing", 1)
	shipping := f.pop(t, "orders", "shipping", 1)
	require.NoError(t, billing[0].DeadLetter(ctx, nil))
	f.ackAll(t, shipping)

	page, err := f.admin.DeadLetters(ctx, admin.DLQQuery{Queue: "orders"})
	require.NoError(t, err)
	require.Len(t, page.DeadLetters, 1)
	id := page.DeadLetters[0].ID

	r, err := f.admin.ReplayDeadLetter(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, admin.Replayed{ID: id, TransactionID: "dlq:" + id, PartitionID: billing[0].PartitionID, Offset: 1}, r)

	for _, group := range []string{"billing", "shipping"} {
		got := f.pop(t, "orders", group, 10)
		require.Len(t, got, 1, group)
		assert.Equal(t, "dlq:"+id, got[0].TransactionID, group)
		assert.Equal(t, []int{7}, values(t, got), group)
		assert.Equal(t, 1, got[0].DeliveryAttempt, group)
	}

	after, err := f.admin.DeadLetters(ctx, admin.DLQQuery{Queue: "orders"})
	require.NoError(t, err)
	assert.Equal(t, 0, after.Total, "a replayed dead letter leaves the list")
}

func TestReplayDeadLetter_R100_SecondReplayIsNotFound(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.fileDeadLetters(t, "orders", "billing", 1)
	all, err := f.admin.AllDeadLetters(ctx, admin.DLQQuery{Queue: "orders"})
	require.NoError(t, err)
	require.Len(t, all, 1)

	_, err = f.admin.ReplayDeadLetter(ctx, all[0].ID)
	require.NoError(t, err)
	_, err = f.admin.ReplayDeadLetter(ctx, all[0].ID)
	require.ErrorIs(t, err, admin.ErrNotFound)
	assert.Contains(t, err.Error(), all[0].ID)

	got := f.pop(t, "orders", "billing", 10)
	assert.Len(t, got, 1, "no second copy")
}

func TestDeleteDeadLetter_R101_RemovesIt(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.fileDeadLetters(t, "orders", "billing", 1, 2)
	all, err := f.admin.AllDeadLetters(ctx, admin.DLQQuery{Queue: "orders"})
	require.NoError(t, err)
	require.Len(t, all, 2)

	require.NoError(t, f.admin.DeleteDeadLetter(ctx, all[0].ID))

	left, err := f.admin.DeadLetters(ctx, admin.DLQQuery{Queue: "orders"})
	require.NoError(t, err)
	assert.Equal(t, 1, left.Total)
	require.Len(t, left.DeadLetters, 1)
	assert.Equal(t, all[1].ID, left.DeadLetters[0].ID)

	require.ErrorIs(t, f.admin.DeleteDeadLetter(ctx, all[0].ID), admin.ErrNotFound)
	_, err = f.admin.ReplayDeadLetter(ctx, all[0].ID)
	require.ErrorIs(t, err, admin.ErrNotFound)
	assert.Empty(t, f.pop(t, "orders", "billing", 10), "delete pushes nothing")
}
