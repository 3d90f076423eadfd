package admin_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
	"github.com/queenmq/queen-go/internal/testmode"
)

// O25: "It reports delete as unsupported." Callers who know only the standard library can
// tell, with errors.Is(err, errors.ErrUnsupported), as with an unsupported discovery pop (O10).
func TestDeleteDeadLetter015_O25_IsErrorsErrUnsupported(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterNoResponder(httpmock.NewStringResponder(404, captured404))

	err := a.DeleteDeadLetter(context.Background(), firstDeadLetter)
	require.ErrorIs(t, err, errors.ErrUnsupported)
	require.ErrorIs(t, err, admin.ErrUnsupported)
	assert.ErrorIs(t, a.DeleteQueue(context.Background(), "q"), errors.ErrUnsupported)
}

// API.md QueueOptions: a zero LeaseTime, a nil RetryLimit and a nil DeadLetterQueue leave the
// option to the broker (it is not sent); new(0) and new(false) are sent as such.
func TestConfigureQueue_APIQueueOptionsBody_R5(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		o    admin.QueueOptions
		want string
	}{
		{"defaults", admin.QueueOptions{}, `{"queue":"orders","options":{}}`},
		{"zero values that mean something", admin.QueueOptions{RetryLimit: new(0), DeadLetterQueue: new(false)},
			`{"queue":"orders","options":{"retryLimit":0,"deadLetterQueue":false}}`},
		{"every option", admin.QueueOptions{LeaseTime: 90 * time.Second, RetryLimit: new(5), DeadLetterQueue: new(true),
			Namespace: "shop", Task: "bill"},
			`{"queue":"orders","namespace":"shop","task":"bill","options":{"leaseTime":90,"retryLimit":5,"deadLetterQueue":true}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, mt := mockAdmin(t)
			var mu sync.Mutex
			var bodies []string
			mt.RegisterResponder("POST", broker+"/api/v1/configure", func(req *http.Request) (*http.Response, error) {
				b, _ := io.ReadAll(req.Body)
				mu.Lock()
				bodies = append(bodies, string(b))
				mu.Unlock()
				return httpmock.NewStringResponse(200, `{"configured":true,"queue":"orders","queueId":"qid","partitionId":"pid","namespace":"","task":"","options":{"leaseTime":60,"retryLimit":3,"deadLetterQueue":true}}`), nil
			})
			require.NoError(t, a.ConfigureQueue(context.Background(), "orders", tc.o))
			mu.Lock()
			defer mu.Unlock()
			require.Len(t, bodies, 1)
			assert.JSONEq(t, tc.want, bodies[0])
		})
	}
}

// The dead-letter round trip a worker service lives by, against the reference broker: a handler
// that always fails spends the retry budget (R91), the message is filed with the handler's
// error text (R94), listed (R98), replayed as dlq:<id> (R99) and consumed again.
func TestDeadLetterRoundTripThroughConsume_R91_R94_R98_R99(t *testing.T) {
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

// Every admin signature of API.md, as a caller compiles against it.
func TestAPIAdminSignatures(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var _ func(*queen.Client) *admin.Admin = admin.New
	a := f.admin
	var (
		_ func(context.Context, string, string, admin.SeekTarget) error = a.SeekConsumerGroup
		_ func(time.Time) admin.SeekTarget                              = admin.SeekToTime
		_ func() admin.SeekTarget                                       = admin.SeekToEnd
		_ func(context.Context, admin.DLQQuery) (admin.DLQPage, error)  = a.DeadLetters
		_ func(context.Context, string) (admin.Replayed, error)         = a.ReplayDeadLetter
		_ func(context.Context, string) error                           = a.DeleteDeadLetter
		_ func(context.Context, string, admin.QueueOptions) error       = a.ConfigureQueue
		_ func(context.Context, string) error                           = a.DeleteQueue
		_ func(context.Context, string) error                           = a.DeleteConsumerGroup
	)
	_ = admin.DLQQuery{Queue: "q", ConsumerGroup: "g", Limit: 1, Offset: 0}
	_ = admin.QueueOptions{LeaseTime: time.Second, RetryLimit: new(0), DeadLetterQueue: new(false), Namespace: "n", Task: "t"}
	page := admin.DLQPage{DeadLetters: []admin.DeadLetter{{ID: "i", MessageID: "m", TransactionID: "t", Queue: "q",
		Partition: "p", PartitionID: "pid", ConsumerGroup: "g", Error: "e", RetryCount: 1, Data: nil,
		CreatedAt: time.Time{}, FailedAt: time.Time{}}}, Total: -1, Limit: 1, Offset: 0}
	r := admin.Replayed{ID: "i", TransactionID: "dlq:i", PartitionID: "p", Offset: 1, Emulated: true}
	assert.Equal(t, -1, page.Total)
	assert.True(t, r.Emulated)
}
