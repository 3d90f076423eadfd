package queen

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/wire"
	"github.com/queenmq/queen-go/queentest"
)

// Large payloads split a push before its body nears the broker's 32 MiB limit; an item larger
// than the split size still goes, alone.
func TestAPushIsSplitBeforeItsBodyNearsTheLimit(t *testing.T) {
	t.Parallel()
	payload := make([]byte, 17<<20)
	item := func(size int) wire.PushItem { return wire.PushItem{Queue: "q", Payload: payload[:size]} }
	var lens []int
	items := []wire.PushItem{item(9 << 20), item(9 << 20), item(1), item(17 << 20), item(1), item(1)}
	for len(items) > 0 {
		n := pushChunkLen(items)
		lens = append(lens, n)
		items = items[n:]
	}
	assert.Equal(t, []int{1, 2, 1, 2}, lens)

	small := make([]wire.PushItem, maxPushItems+5)
	assert.Equal(t, maxPushItems, pushChunkLen(small))
	assert.Equal(t, 5, pushChunkLen(small[maxPushItems:]))
}

// One push stores each item in its own partition, against the reference broker.
func TestOnePushStoresEachItemInItsOwnPartition(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	c := newTestClient(t, srv.URL())
	res, err := c.Queue("q").Partition("b").Push(t.Context(),
		PushItem{Data: 1, TransactionID: "x", Partition: "a"},
		PushItem{Data: 2, TransactionID: "y"},
		PushItem{Data: 3, TransactionID: "z", Partition: "a"})
	require.NoError(t, err)
	require.Len(t, res, 3)
	for part, want := range map[string][]string{"a": {"x", "z"}, "b": {"y"}} {
		msgs, err := c.Queue("q").Partition(part).Batch(10).Pop(t.Context())
		require.NoError(t, err)
		var got []string
		for _, m := range msgs {
			got = append(got, m.TransactionID)
			assert.Equal(t, part, m.Partition)
		}
		assert.Equal(t, want, got, "partition %s", part)
	}
}

// An item's own partition name is checked like the builder's, before anything is sent.
func TestAnItemsOwnPartitionNameIsChecked(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, "http://127.0.0.1:1") // nothing listens: a request would fail differently
	_, err := c.Queue("q").Push(t.Context(), PushItem{Data: 1}, PushItem{Data: 2, Partition: ".."})
	require.ErrorIs(t, err, ErrInvalidOption)
	assert.Contains(t, err.Error(), "items[1].partition")
}

// A push answer of any bytes never panics the decoder. An answer it accepts has exactly one
// result per item, each with a transactionId (the broker's, else the item's); one it refuses is
// an *APIError.
func FuzzPushResults(f *testing.F) {
	seedAnswers(f, "push",
		`[{"index":0,"transaction_id":"t1","status":"queued","message_id":"<id>","partition_id":"<pid>","trace_id":null,"queueName":"orders","offset":0}]`,
		`[{"index":0,"transaction_id":"t1","status":"buffered"},{"index":1,"status":"failed","error":"x"}]`)
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, n := range []int{1, 2} {
			items := make([]wire.PushItem, n)
			for i := range items {
				items[i] = wire.PushItem{Queue: "q", TransactionID: fmt.Sprintf("t%d", i)}
			}
			results, err := pushResults(body, answerRequest(route.Push), items)
			if err != nil {
				requireAPIError(t, err)
				continue
			}
			require.Len(t, results, n)
			for _, r := range results {
				assert.NotEmpty(t, r.TransactionID)
			}
		}
	})
}
