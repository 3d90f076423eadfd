package admin_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
)

// The dead-letter round trip a worker service lives by: a handler that always fails spends the
// queue's retry budget, the message is filed with the handler's error text, listed, replayed
// under dlq:<id> and consumed again as a first delivery.
func TestAMessageThatAlwaysFailsIsFiledListedAndReplayed(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		f := newFixtureIn(t, mode)
		ctx := context.Background()
		require.NoError(t, f.admin.ConfigureQueue(ctx, "jobs", admin.QueueOptions{RetryLimit: new(1)}))
		f.push(t, "jobs", "", 7)

		var attempts []int
		err := f.client.Queue("jobs").Group("workers").SubscriptionMode(queen.SubscribeAll).Limit(2).Timeout(time.Second).
			Each().Consume(ctx, func(_ context.Context, m *queen.Message) error {
			attempts = append(attempts, m.DeliveryAttempt)
			return errors.New("always broken")
		})
		require.NoError(t, err, "Limit is a graceful stop")
		assert.Equal(t, []int{mode.Attempt(1), mode.Attempt(2)}, attempts, "retryLimit 1: two deliveries, then the dead letter")

		page, err := f.admin.DeadLetters(ctx, admin.DLQQuery{Queue: "jobs", ConsumerGroup: "workers"})
		require.NoError(t, err)
		require.Equal(t, unknownOn015(mode, 1), page.Total)
		require.Len(t, page.DeadLetters, 1)
		dl := page.DeadLetters[0]
		assert.Equal(t, "always broken", dl.Error)
		assert.Equal(t, 1, dl.RetryCount)
		assert.Equal(t, "workers", dl.ConsumerGroup)
		assert.JSONEq(t, `{"n":7}`, string(dl.Data))

		replayed, err := f.admin.ReplayDeadLetter(ctx, dl.ID)
		require.NoError(t, err)
		assert.Equal(t, mode.V015, replayed.Emulated, "0.15 has no replay route")
		assert.Equal(t, "dlq:"+dl.ID, replayed.TransactionID)

		var got []*queen.Message
		err = f.client.Queue("jobs").Group("workers").Limit(1).Timeout(time.Second).
			Each().Consume(ctx, func(_ context.Context, m *queen.Message) error {
			got = append(got, m)
			return nil
		})
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Equal(t, "dlq:"+dl.ID, got[0].TransactionID)
		assert.Equal(t, mode.Attempt(1), got[0].DeliveryAttempt)
		assert.Equal(t, replayed.Offset, got[0].Offset)

		page, err = f.admin.DeadLetters(ctx, admin.DLQQuery{Queue: "jobs"})
		require.NoError(t, err)
		if mode.V015 { // an emulated replay cannot remove the dead letter
			assert.Len(t, page.DeadLetters, 1)
			return
		}
		assert.Equal(t, 0, page.Total, "a replayed dead letter leaves the list")
	})
}

// The replayed copy goes to the end of the original partition, where every group reading it
// receives it as a first delivery, not only the group that gave up; the dead letter leaves the
// list.
func TestAReplayedCopyReachesEveryGroup(t *testing.T) {
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

// Replaying the same dead letter twice stores one copy: the second replay is ErrNotFound.
func TestASecondReplayIsNotFoundAndStoresNoCopy(t *testing.T) {
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

// DeleteDeadLetter removes the one dead letter and pushes nothing; it cannot then be deleted
// or replayed again.
func TestDeleteDeadLetterRemovesItWithoutAReplay(t *testing.T) {
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

// replayWithoutRoute mocks a broker without the replay route (0.15): replays of id are
// answered with its 404 page, the dead-letter list with list, and pushes with pushed.
func replayWithoutRoute(t *testing.T, id, list, pushed string) (*admin.Admin, *httpmock.MockTransport, *testutil.Spy) {
	t.Helper()
	a, mt := mockAdmin(t)
	pushes := &testutil.Spy{}
	mt.RegisterResponder("POST", broker+"/api/v1/dlq/"+id+"/replay", httpmock.NewStringResponder(404, captured404))
	mt.RegisterResponder("GET", broker+"/api/v1/dlq", httpmock.NewStringResponder(200, list))
	mt.RegisterResponder("POST", broker+"/api/v1/push", pushes.Respond(200, pushed))
	return a, mt, pushes
}

// Without a replay route, a replay reads the dead letter from the list and pushes its data to
// the same queue and partition under dlq:<message id>.
func TestAReplayWithoutTheRouteIsEmulatedByAPush(t *testing.T) {
	t.Parallel()
	a, _, pushes := replayWithoutRoute(t, secondDeadLetter, capturedDLQ, capturedQueued)

	r, err := a.ReplayDeadLetter(context.Background(), secondDeadLetter)
	require.NoError(t, err)

	assert.Equal(t, `{"items":[{"queue":"smoke-dlq","partition":"p1","payload":{"will":"fail"},"transactionId":"dlq:`+secondDeadLetter+`"}]}`,
		string(pushes.Only(t).Body))
	assert.Equal(t, admin.Replayed{
		ID:            secondDeadLetter,
		TransactionID: "dlq:" + secondDeadLetter,
		PartitionID:   "f3e5c1ac-60c4-4885-9a5b-e911102ba69d",
		Offset:        -1,
		Emulated:      true,
	}, r)
}

// An emulated replay repeated is a duplicate push that stores nothing; the partition id, which
// a duplicate's answer lacks, is the dead letter's.
func TestARepeatedEmulatedReplayIsADuplicate(t *testing.T) {
	t.Parallel()
	a, _, _ := replayWithoutRoute(t, secondDeadLetter, capturedDLQ, capturedDuplicate)

	r, err := a.ReplayDeadLetter(context.Background(), secondDeadLetter)
	require.NoError(t, err)
	assert.True(t, r.Emulated)
	assert.True(t, r.Duplicate)
	assert.Equal(t, "dlq:"+secondDeadLetter, r.TransactionID)
	assert.Equal(t, "f3e5c1ac-60c4-4885-9a5b-e911102ba69d", r.PartitionID)
}

// An emulated replay of an id the list does not hold is ErrNotFound and pushes nothing.
func TestAnEmulatedReplayOfAnUnknownIDPushesNothing(t *testing.T) {
	t.Parallel()
	a, _, pushes := replayWithoutRoute(t, "nope", capturedEmptyDLQ, capturedQueued)

	_, err := a.ReplayDeadLetter(context.Background(), "nope")
	require.ErrorIs(t, err, admin.ErrNotFound)
	assert.Contains(t, err.Error(), `"nope"`)
	assert.Empty(t, pushes.All())
}

// An emulated replay whose push the broker refuses returns the refusal.
func TestAnEmulatedReplayReportsARefusedPush(t *testing.T) {
	t.Parallel()
	a, _, _ := replayWithoutRoute(t, firstDeadLetter, capturedDLQ, capturedDBFailure)

	_, err := a.ReplayDeadLetter(context.Background(), firstDeadLetter)
	var apiErr *queen.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 200, apiErr.StatusCode)
	assert.Contains(t, apiErr.Message, "invalid input syntax")
}

// A 404 with a JSON error means the dead letter does not exist: ErrNotFound, and a replay is
// never emulated on it.
func TestAJSON404IsNotFoundAndNeverEmulated(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("POST", broker+"/api/v1/dlq/gone/replay", httpmock.NewStringResponder(404, `{"error":"dead letter not found"}`))
	mt.RegisterResponder("DELETE", broker+"/api/v1/dlq/gone", httpmock.NewStringResponder(404, `{"error":"dead letter not found"}`))

	_, err := a.ReplayDeadLetter(context.Background(), "gone")
	require.ErrorIs(t, err, admin.ErrNotFound)
	var apiErr *queen.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "dead letter not found", apiErr.Message)
	assert.Equal(t, 1, mt.GetTotalCallCount(), "no emulation on a JSON 404")

	err = a.DeleteDeadLetter(context.Background(), "gone")
	require.ErrorIs(t, err, admin.ErrNotFound)
	assert.NotErrorIs(t, err, admin.ErrUnsupported)
}
