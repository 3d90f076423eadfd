package admin_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
	"github.com/queenmq/queen-go/internal/testmode"
)

// Messages peeks at a partition's messages with their payloads, newest first, and Message reads
// one: they lease nothing, so a fresh group still gets every message as a first delivery. A 0.15
// broker does not number messages (offsets are -1, and listing oldest first is ErrUnsupported)
// and lists nothing for a queue it does not know.
func TestMessagesPeekWithoutLeasing(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		f := lagState(t, mode)
		ctx := context.Background()
		msgs, err := f.admin.Messages(ctx, admin.MessageQuery{Queue: "orders", Partition: "p1"})
		require.NoError(t, err)
		require.Len(t, msgs, 3)
		assert.Equal(t, mode.Offset(2), msgs[0].Offset)
		assert.JSONEq(t, `{"n":2}`, string(msgs[0].Data), "newest first, with its payload")
		assert.Equal(t, "p1", msgs[0].Partition)
		assert.Equal(t, "orders", msgs[0].Queue)
		assert.Equal(t, "pending", msgs[0].Status)

		oldest, err := f.admin.Messages(ctx, admin.MessageQuery{Queue: "orders", Limit: 2, Offset: 1, Oldest: true})
		if mode.V015 {
			assert.ErrorIs(t, err, admin.ErrUnsupported)
		} else {
			require.NoError(t, err)
			require.Len(t, oldest, 2)
			assert.Equal(t, []int64{1, 2}, []int64{oldest[0].Offset, oldest[1].Offset})
		}

		one, err := f.admin.Message(ctx, msgs[0].PartitionID, msgs[0].TransactionID)
		require.NoError(t, err)
		assert.Equal(t, msgs[0].ID, one.ID)
		assert.JSONEq(t, `{"n":2}`, string(one.Data))
		_, err = f.admin.Message(ctx, msgs[0].PartitionID, "nope")
		assert.ErrorIs(t, err, admin.ErrNotFound)

		for _, unknown := range []admin.MessageQuery{{Queue: "nope"}, {Queue: "orders", Partition: "p9"}} {
			listed, err := f.admin.Messages(ctx, unknown)
			if mode.V015 { // 0.15 lists nothing for a queue or partition it does not know
				require.NoError(t, err)
				assert.Empty(t, listed)
				continue
			}
			assert.ErrorIs(t, err, admin.ErrNotFound, "%+v", unknown)
		}

		got, err := f.client.Queue("orders").Partition("p1").Group("fresh").SubscriptionMode(queen.SubscribeAll).Batch(10).Pop(ctx)
		require.NoError(t, err)
		require.Len(t, got, 3)
		assert.Equal(t, mode.Attempt(1), got[0].DeliveryAttempt)
	})
}

// FromOffset pages one partition without missing or repeating messages pushed meanwhile.
func TestMessagesFromOffsetPageWithoutGapsOrRepeats(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.push(t, "q", "p", 0, 1, 2, 3)
	from := int64(1)
	page, err := f.admin.Messages(ctx, admin.MessageQuery{Queue: "q", Partition: "p", FromOffset: &from, Oldest: true, Limit: 2})
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2}, []int64{page[0].Offset, page[1].Offset})
	f.push(t, "q", "p", 4)
	next := page[1].Offset + 1
	page, err = f.admin.Messages(ctx, admin.MessageQuery{Queue: "q", Partition: "p", FromOffset: &next, Oldest: true, Limit: 2})
	require.NoError(t, err)
	assert.Equal(t, []int64{3, 4}, []int64{page[0].Offset, page[1].Offset})
	down, err := f.admin.Messages(ctx, admin.MessageQuery{Queue: "q", Partition: "p", FromOffset: &from})
	require.NoError(t, err)
	assert.Len(t, down, 2, "newest first from offset 1: 1 and 0")
}

// A 0.15 message list has no payloads or offsets: each payload is read from the message's
// detail (a message gone by then keeps none), and listing oldest first or from an offset is
// ErrUnsupported. The list asks from the epoch, as 0.15 lists only the last hour unless told.
func TestMessagesFrom015FetchEachPayloadAndCannotListOldestFirst(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("GET", broker+"/api/v1/messages", func(r *http.Request) (*http.Response, error) {
		assert.Equal(t, "1970-01-01T00:00:00Z", r.URL.Query().Get("from"))
		assert.Equal(t, "spec-insp-115691", r.URL.Query().Get("queue"))
		return httpmock.NewStringResponse(200, capture015(t, "messages-by-partition.json")), nil
	})
	mt.RegisterRegexpResponder("GET", mustRegexp(`/api/v1/messages/`+p0ID+`/p0-1$`), httpmock.NewStringResponder(200, capture015(t, "message-leased-in-queue-mode.json")))
	mt.RegisterRegexpResponder("GET", mustRegexp(`/api/v1/messages/`+p0ID+`/p0-0$`), httpmock.NewStringResponder(200, capture015(t, "message-dead-lettered-in-queue-mode.json")))
	mt.RegisterRegexpResponder("GET", mustRegexp(`/api/v1/messages/`+p0ID+`/p0-[234]$`), httpmock.NewStringResponder(200, capture015(t, "message-unknown.json")))
	msgs, err := a.Messages(context.Background(), admin.MessageQuery{Queue: "spec-insp-115691", Partition: "p0"})
	require.NoError(t, err)
	require.Len(t, msgs, 5)
	assert.Equal(t, int64(-1), msgs[0].Offset)
	assert.Nil(t, msgs[0].Data, "gone when fetched: no payload invented")
	assert.JSONEq(t, `{"i":1,"p":"p0"}`, string(msgs[3].Data))
	assert.Equal(t, "processing", msgs[3].Status)
	assert.JSONEq(t, `{"i":0,"p":"p0"}`, string(msgs[4].Data))

	_, err = a.Messages(context.Background(), admin.MessageQuery{Queue: "spec-insp-115691", Oldest: true})
	assert.ErrorIs(t, err, admin.ErrUnsupported)
	from := int64(0)
	_, err = a.Messages(context.Background(), admin.MessageQuery{Queue: "spec-insp-115691", Partition: "p0", FromOffset: &from})
	assert.ErrorIs(t, err, admin.ErrUnsupported)
}
