package queen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/names"
	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/wire"
	"github.com/queenmq/queen-go/queentest"
)

// Large items split a push before its body nears the broker's 32 MiB limit; an item larger
// than the split size still goes, alone; and no request carries more than 10,000 items.
func TestAPushIsSplitBeforeItsBodyNearsTheLimit(t *testing.T) {
	t.Parallel()
	sizes := []int{9 << 20, 9 << 20, 1, 17 << 20, 1, 1}
	var lens []int
	for first := 0; first < len(sizes); {
		n := requestLen(len(sizes)-first, maxPushItems, func(i int) int { return sizes[first+i] })
		lens = append(lens, n)
		first += n
	}
	assert.Equal(t, []int{1, 2, 1, 2}, lens)
	assert.Equal(t, maxPushItems, requestLen(maxPushItems+5, maxPushItems, func(int) int { return 1 }))
}

// A push encodes each item as the broker receives it, and counts its size as encoded, JSON
// escapes included; each request cut from a push is a body of its own items.
func TestAPushCountsItemsAsEncoded(t *testing.T) {
	t.Parallel()
	body := getPushBody()
	defer putPushBody(body)
	ctl := strings.Repeat("\x01", 100)
	items := []PushItem{
		{Data: 1, TransactionID: "plain"},
		{Data: "x", TransactionID: ctl, Partition: `quo"te`},
		{Data: json.RawMessage(`{ "a" : [1, 2] }`), TraceID: "0b6a3c1e-8c4e-4a8f-9a57-0f1f6a6c0d01"},
	}
	for i := range items {
		require.NoError(t, body.add("items", i, "q", "", &items[i]))
	}
	want := []wire.PushItem{
		{Queue: "q", Payload: wire.Value(`1`), TransactionID: "plain"},
		{Queue: "q", Partition: `quo"te`, Payload: wire.Value(`"x"`), TransactionID: ctl},
		{Queue: "q", Payload: wire.Value(`{"a":[1,2]}`), TransactionID: body.transactionID(items, 2),
			TraceID: "0b6a3c1e-8c4e-4a8f-9a57-0f1f6a6c0d01"},
	}
	for i, w := range want {
		encoded, err := wire.Marshal(&w)
		require.NoError(t, err)
		assert.Equal(t, string(encoded), string(body.buf[body.start(i):body.ends[i]]), "item %d", i)
	}
	assert.Contains(t, string(body.buf), strings.Repeat(`\u0001`, 100), "control characters are sent, and counted, escaped")
	assert.True(t, names.IsUUID(want[2].TransactionID), "an item without a transactionId gets a UUID")

	for _, cut := range [][2]int{{0, 3}, {1, 2}, {0, 1}, {2, 1}} {
		var req wire.PushRequest
		require.NoError(t, wire.Unmarshal(body.request(cut[0], cut[1]), &req), "request %v", cut)
		assert.Equal(t, want[cut[0]:cut[0]+cut[1]], req.Items, "request %v", cut)
	}
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
// result per item, each with a transactionId (the broker's, else the item's), and says what the
// SDK's generic decoder reads in it; one it refuses is an *APIError.
func FuzzPushResults(f *testing.F) {
	seedAnswers(f, "push",
		`[{"index":0,"transaction_id":"t1","status":"queued","message_id":"<id>","partition_id":"<pid>","trace_id":null,"queueName":"orders","offset":0}]`,
		`[{"index":0,"transaction_id":"t1","status":"buffered"},{"index":1,"status":"failed","error":"x"}]`,
		`[{"transaction_id":"t\u00e9","status":"du\u0070licate","offset":-12,"partition_id":null},{"offset":9007199254740993,"message_id":"m"}]`)
	f.Fuzz(func(t *testing.T, body []byte) {
		var generic []wire.PushResult
		genericErr := wire.Unmarshal(bytesTrimSpace(body), &generic)
		for _, n := range []int{1, 2} {
			ids := func(i int) string { return fmt.Sprintf("t%d", i) }
			results, err := readPushResults(bytes.NewBuffer(bytes.Clone(body)), answerRequest(route.Push), n, nil, ids)
			if err != nil {
				requireAPIError(t, err)
				continue
			}
			require.Len(t, results, n)
			require.NoError(t, genericErr, "the generic decoder accepts what this one does")
			for i, r := range results {
				g := generic[i]
				assert.Equal(t, firstNonEmpty(g.TransactionID, ids(i)), r.TransactionID)
				assert.Equal(t, g.MessageID, r.MessageID)
				assert.Equal(t, deref(g.PartitionID), r.PartitionID)
				assert.Equal(t, g.Status, r.Status)
				if g.Offset == nil {
					assert.Equal(t, int64(-1), r.Offset)
				} else {
					assert.Equal(t, *g.Offset, r.Offset)
				}
			}
		}
	})
}

// A transactionId made for an item is a UUIDv7 of the moment, and ids made together differ.
func TestAMadeTransactionIDIsAUUIDv7(t *testing.T) {
	t.Parallel()
	before := time.Now().UnixMilli()
	seen := map[string]bool{}
	for range 10000 {
		s := string(appendNewID(nil))
		id, err := uuid.Parse(s)
		require.NoError(t, err)
		require.Equal(t, s, id.String(), "canonical form")
		require.Equal(t, uuid.Version(7), id.Version())
		require.Equal(t, uuid.RFC4122, id.Variant())
		sec, nsec := id.Time().UnixTime()
		made := time.Unix(sec, nsec).UnixMilli()
		require.True(t, made >= before && made <= time.Now().UnixMilli(), "made at %d, not now", made)
		require.False(t, seen[s], "made twice: %s", s)
		seen[s] = true
	}
}
