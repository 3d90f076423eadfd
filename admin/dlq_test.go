package admin_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/admin"
	"github.com/queenmq/queen-go/internal/testmode"
)

// The dead-letter list pages newest failure first with the total of matches; a 0.15 broker
// sends no total, lists under the message's id and does not page, so one request lists all.
func TestDeadLettersPageNewestFailureFirst(t *testing.T) {
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

// A dead letter a 0.15 broker lists has no id of its own: ID and MessageID are both the
// message id, and the total is unknown (-1).
func TestDeadLettersFrom015UseTheMessageIDAndHaveNoTotal(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("GET", broker+"/api/v1/dlq", func(r *http.Request) (*http.Response, error) {
		assert.Equal(t, "smoke-dlq", r.URL.Query().Get("queue"))
		return httpmock.NewStringResponse(200, capturedDLQ), nil
	})

	page, err := a.DeadLetters(context.Background(), admin.DLQQuery{Queue: "smoke-dlq"})
	require.NoError(t, err)

	assert.Equal(t, -1, page.Total)
	assert.Equal(t, 100, page.Limit)
	assert.Equal(t, 0, page.Offset)
	require.Len(t, page.DeadLetters, 2)
	assert.Equal(t, admin.DeadLetter{
		ID:            secondDeadLetter,
		MessageID:     secondDeadLetter,
		TransactionID: "5d802a94-74a3-47aa-81a3-ba7b2d473c8f",
		Queue:         "smoke-dlq",
		Partition:     "p1",
		PartitionID:   "f3e5c1ac-60c4-4885-9a5b-e911102ba69d",
		ConsumerGroup: "g1",
		Error:         "boom 2",
		RetryCount:    1,
		Data:          page.DeadLetters[1].Data,
		CreatedAt:     time.Date(2026, 11, 29, 21, 46, 36, 677e6, time.UTC),
		FailedAt:      time.Date(2026, 11, 29, 21, 46, 36, 950e6, time.UTC),
	}, page.DeadLetters[1])
	assert.JSONEq(t, `{"will":"fail"}`, string(page.DeadLetters[1].Data))
}

// A broker that ignores the limit (0.15) lists everything; the page is cut to the limit asked.
func TestDeadLettersFrom015AreCutToTheLimit(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("GET", broker+"/api/v1/dlq", func(r *http.Request) (*http.Response, error) {
		assert.Equal(t, "1", r.URL.Query().Get("limit"))
		return httpmock.NewStringResponse(200, capturedDLQ), nil
	})

	page, err := a.DeadLetters(context.Background(), admin.DLQQuery{Queue: "smoke-dlq", Limit: 1})
	require.NoError(t, err)
	require.Len(t, page.DeadLetters, 1)
	assert.Equal(t, firstDeadLetter, page.DeadLetters[0].ID)
	assert.Equal(t, -1, page.Total)
}

// AllDeadLetters asks a broker that reports no total (and so does not page) only once.
func TestAllDeadLettersAsksABrokerThatDoesNotPageOnce(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("GET", broker+"/api/v1/dlq", httpmock.NewStringResponder(200, capturedDLQ))

	all, err := a.AllDeadLetters(context.Background(), admin.DLQQuery{Queue: "smoke-dlq"})
	require.NoError(t, err)
	assert.Len(t, all, 2)
	assert.Equal(t, 1, mt.GetTotalCallCount())
}
