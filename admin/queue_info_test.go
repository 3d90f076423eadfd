package admin_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
	"github.com/queenmq/queen-go/internal/testmode"
)

// Queues lists every queue newest first with its counts, and QueueInfo describes one with its
// configuration and partitions. A 0.15 broker's counts are background statistics: marked
// approximate, with the counts it does not send unknown (-1).
func TestQueuesAndQueueInfoReportCounts(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		f := lagState(t, mode)
		ctx := context.Background()
		f.push(t, "other", "", 1)
		qs, err := f.admin.Queues(ctx)
		require.NoError(t, err)
		require.Len(t, qs, 2)
		assert.Equal(t, "other", qs[0].Name, "newest first")
		o := qs[1]
		assert.Equal(t, "orders", o.Name)
		assert.Equal(t, "shop", o.Namespace)
		assert.Equal(t, int64(3), o.PartitionCount, "Default, p0, p1")
		assert.Nil(t, o.Partitions)
		assert.Equal(t, int64(7), o.Messages)
		// p0: queue mode is slowest (3 behind after its dead letter, slow 2); p1: queue mode 3.
		assert.Equal(t, int64(6), o.Pending)
		assert.Equal(t, mode.V015, o.Approximate)
		assert.Equal(t, int64(unknownOn015(mode, 1)), o.DeadLetters)
		assert.Equal(t, int64(unknownOn015(mode, 1)), o.Completed)

		only, err := f.admin.QueuesIn(ctx, "shop", "")
		require.NoError(t, err)
		assert.Len(t, only, 1)

		info, err := f.admin.QueueInfo(ctx, "orders")
		require.NoError(t, err)
		assert.Equal(t, mode.V015, info.Approximate)
		assert.Equal(t, 600*time.Second, info.Config.LeaseTime)
		assert.Equal(t, 0, info.Config.RetryLimit)
		// 0.15 reads the dead-letter switch back as off whatever was configured (it files dead
		// letters all the same); 2.0 reads back what was set.
		assert.Equal(t, !mode.V015, info.Config.DeadLetterQueue)
		require.Len(t, info.Partitions, 3)
		assert.Equal(t, "Default", info.Partitions[0].Name)
		assert.Equal(t, info.Partitions[0].ID, info.Config.PartitionID)
		p0 := info.Partitions[1]
		assert.Equal(t, int64(4), p0.Messages)
		assert.Equal(t, mode.Offset(3), p0.LastOffset)
		assert.Equal(t, int64(1), p0.DeadLetters)
		assert.WithinDuration(t, f.srv.Now().Add(-30*time.Second), p0.Newest, time.Millisecond, "0.15 says times in milliseconds")
		assert.True(t, info.Partitions[0].Newest.IsZero())

		_, err = f.admin.QueueInfo(ctx, "nope")
		assert.ErrorIs(t, err, admin.ErrNotFound)
	})
}

// A 0.15 queue list has no total and no completed or dead-letter counts: they are unknown (-1)
// and the queue is marked approximate. The list is read in pages of 1,000.
func TestQueuesFrom015AreApproximateWithUnknownCounts(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("GET", broker+"/api/v1/status/queues", func(r *http.Request) (*http.Response, error) {
		assert.Equal(t, "1000", r.URL.Query().Get("limit"))
		return httpmock.NewStringResponse(200, capture015(t, "queues-by-namespace-after-stats.json")), nil
	})
	qs, err := a.Queues(context.Background())
	require.NoError(t, err)
	require.Len(t, qs, 2)
	q := qs[1]
	assert.Equal(t, "spec-insp-115691", q.Name)
	assert.Equal(t, int64(4), q.PartitionCount)
	assert.Equal(t, int64(11), q.Messages)
	assert.Equal(t, int64(9), q.Pending)
	assert.Equal(t, int64(-1), q.DeadLetters)
	assert.Equal(t, int64(-1), q.Completed)
	assert.True(t, q.Approximate)
}

// A 0.15 queue detail decodes, marked approximate, with no partition offsets; its answer
// "Queue not found" (a 200) is ErrNotFound.
func TestQueueInfoFrom015IsApproximateAndNotFoundIsErrNotFound(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("GET", broker+"/api/v1/status/queues/spec-insp-115691", httpmock.NewStringResponder(200, capture015(t, "queue-detail-after-stats.json")))
	mt.RegisterResponder("GET", broker+"/api/v1/status/queues/spec-insp-nope", httpmock.NewStringResponder(200, capture015(t, "queue-detail-unknown.json")))
	info, err := a.QueueInfo(context.Background(), "spec-insp-115691")
	require.NoError(t, err)
	assert.True(t, info.Approximate)
	assert.Equal(t, 600*time.Second, info.Config.LeaseTime)
	assert.Equal(t, 1, info.Config.RetryLimit)
	assert.Equal(t, "67d5272a-d772-49b8-86cf-10a5ea31d5f8", info.Config.PartitionID)
	require.Len(t, info.Partitions, 4)
	assert.Equal(t, admin.PartitionInfo{
		Name: "p0", ID: p0ID, Messages: 5, Newest: ms015("2026-12-01T09:01:34.510Z"),
		Pending: 4, Processing: 2, Completed: 5, DeadLetters: 1, LastOffset: -1,
		Oldest: ms015("2026-12-01T09:01:34.510Z"), LastActivity: ms015("2026-12-01T09:01:34.553Z"),
	}, info.Partitions[1])
	assert.Equal(t, int64(11), info.Messages)
	assert.Equal(t, int64(2), info.DeadLetters)

	_, err = a.QueueInfo(context.Background(), "spec-insp-nope")
	assert.ErrorIs(t, err, admin.ErrNotFound)
	var apiErr *queen.APIError
	assert.ErrorAs(t, err, &apiErr, "the broker's answer is wrapped")
}
