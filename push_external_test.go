package queen_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// A push whose answer was lost is resent under the same transactionId and stored once.
func TestAPushWhoseAnswerWasLostIsStoredOnce(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		srv, _, c := tapped(t, m, queentest.WithManualClock())
		srv.Fail(queentest.Fault{Route: "push", After: true})
		res, err := c.Queue("q").Push(testutil.Context(t), queen.PushItem{Data: 1})
		require.NoError(t, err)
		require.Len(t, res, 1)
		assert.NotEmpty(t, res[0].TransactionID)
		msgs, err := c.Queue("q").Batch(10).Pop(testutil.Context(t))
		require.NoError(t, err)
		require.Len(t, msgs, 1)
		assert.Equal(t, res[0].TransactionID, msgs[0].TransactionID)
	})
}

// A transactionId already in the partition stores nothing: the result is duplicate, with the
// stored message's id and offset; within one push, the first of a repeat is queued.
func TestARepeatedTransactionIdIsADuplicate(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		_, c := modeClient(t, mode)
		q := c.Queue("dedup")
		first, err := q.Push(t.Context(), queen.PushItem{Data: "a", TransactionID: "order-1"})
		require.NoError(t, err)
		again, err := q.Push(t.Context(),
			queen.PushItem{Data: "b", TransactionID: "order-1"},
			queen.PushItem{Data: "c", TransactionID: "order-2"},
			queen.PushItem{Data: "d", TransactionID: "order-2"})
		require.NoError(t, err)
		assert.Equal(t, "queued", first[0].Status)
		assert.Equal(t, []string{"duplicate", "queued", "duplicate"},
			[]string{again[0].Status, again[1].Status, again[2].Status})
		assert.Equal(t, first[0].MessageID, again[0].MessageID)
		assert.Equal(t, first[0].Offset, again[0].Offset)

		msgs, err := q.Batch(10).Pop(t.Context())
		require.NoError(t, err)
		require.Len(t, msgs, 2)
		assert.JSONEq(t, `"a"`, string(msgs[0].Data))
	})
}

// 0.15 push results decode by position, with no offset (-1).
func TestA015PushAnswerDecodes(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var rec testutil.Spy
	// A captured 0.15 push.
	mt.RegisterNoResponder(rec.Respond(200, `[{"index":0,"message_id":"01a22945-db81-7000-89ce-1fc92ee081bb","partition_id":"039cf519-3102-46c2-86d2-8a85fee50b58","queueName":"smoke-basic","status":"queued","trace_id":null,"transaction_id":"5e09b8de-aa5f-4e24-a12f-e2bdb0d6501c"},{"index":1,"message_id":"01a22945-db81-7001-9d7d-fce4f486f19a","partition_id":"039cf519-3102-46c2-86d2-8a85fee50b58","queueName":"smoke-basic","status":"queued","trace_id":"0b6a3c1e-8c4e-4a8f-9a57-0f1f6a6c0d01","transaction_id":"0ac1a02e-1b79-4234-aed2-8cedc13f74b6"},{"index":2,"message_id":"01a22945-db81-7002-97e6-b5f483cf0bfb","partition_id":"039cf519-3102-46c2-86d2-8a85fee50b58","queueName":"smoke-basic","status":"queued","trace_id":null,"transaction_id":"tx-basic-3"}]`))

	results, err := c.Queue("smoke-basic").Partition("p1").Push(t.Context(),
		queen.PushItem{Data: map[string]int{"n": 1}},
		queen.PushItem{Data: map[string]int{"n": 2}, TraceID: "0b6a3c1e-8c4e-4a8f-9a57-0f1f6a6c0d01"},
		queen.PushItem{Data: json.RawMessage(`{"n":3,"s":"three"}`), TransactionID: "tx-basic-3"},
	)
	require.NoError(t, err)
	require.Len(t, results, 3)
	assert.Equal(t, queen.PushResult{TransactionID: "tx-basic-3", MessageID: "01a22945-db81-7002-97e6-b5f483cf0bfb",
		PartitionID: "039cf519-3102-46c2-86d2-8a85fee50b58", Status: "queued", Offset: -1}, results[2])
	assert.Equal(t, "5e09b8de-aa5f-4e24-a12f-e2bdb0d6501c", results[0].TransactionID)

	var body struct {
		Items []map[string]json.RawMessage `json:"items"`
	}
	require.NoError(t, json.Unmarshal(rec.Only(t).Body, &body))
	require.Len(t, body.Items, 3)
	for i, it := range body.Items {
		assert.JSONEq(t, `"smoke-basic"`, string(it["queue"]), "item %d", i)
		assert.JSONEq(t, `"p1"`, string(it["partition"]), "item %d", i)
	}
	assert.JSONEq(t, `{"n":1}`, string(body.Items[0]["payload"]))
	assert.JSONEq(t, `"0b6a3c1e-8c4e-4a8f-9a57-0f1f6a6c0d01"`, string(body.Items[1]["traceId"]))
	assert.NotContains(t, body.Items[0], "traceId")
	assert.JSONEq(t, `{"n":3,"s":"three"}`, string(body.Items[2]["payload"]))
	assert.JSONEq(t, `"tx-basic-3"`, string(body.Items[2]["transactionId"]))
	// Items without a transactionId get a client-made UUIDv7, so a retried push is deduplicated.
	for _, i := range []int{0, 1} {
		var id string
		require.NoError(t, json.Unmarshal(body.Items[i]["transactionId"], &id))
		u, err := uuid.Parse(id)
		require.NoError(t, err)
		assert.Equal(t, uuid.Version(7), u.Version())
	}
}

// A 0.15 duplicate lacks partition_id, trace_id and offset.
func TestA015DuplicateDecodes(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, `[{"index":0,"message_id":"01a22945-db81-7002-97e6-b5f483cf0bfb","queueName":"smoke-basic","status":"duplicate","transaction_id":"tx-basic-3"}]`))
	results, err := c.Queue("smoke-basic").Partition("p1").Push(t.Context(),
		queen.PushItem{Data: map[string]int{"n": 33}, TransactionID: "tx-basic-3"})
	require.NoError(t, err)
	assert.Equal(t, []queen.PushResult{{TransactionID: "tx-basic-3", MessageID: "01a22945-db81-7002-97e6-b5f483cf0bfb",
		Status: "duplicate", Offset: -1}}, results)
}

// A 2.0 push answers 201 with one result per item, in order, each with its offset.
func TestA20PushAnswerDecodes(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(201, `[{"index":0,"transaction_id":"t1","status":"queued","message_id":"m1","partition_id":"p1","trace_id":null,"queueName":"orders","offset":0},{"index":1,"transaction_id":"t1","status":"duplicate","message_id":"m1","partition_id":"p1","trace_id":null,"queueName":"orders","offset":0}]`))
	results, err := c.Queue("orders").Push(t.Context(),
		queen.PushItem{Data: "a", TransactionID: "t1"}, queen.PushItem{Data: "a", TransactionID: "t1"})
	require.NoError(t, err)
	assert.Equal(t, []queen.PushResult{
		{TransactionID: "t1", MessageID: "m1", PartitionID: "p1", Status: "queued", Offset: 0},
		{TransactionID: "t1", MessageID: "m1", PartitionID: "p1", Status: "duplicate", Offset: 0},
	}, results)
	assert.NotContains(t, rec.Only(t).Body, `"partition"`, "no partition: the broker's Default")
}

// Payloads of every JSON type reach the broker unchanged.
func TestEveryPayloadTypeReachesTheBrokerUnchanged(t *testing.T) {
	t.Parallel()
	cases := []struct {
		data any
		want string
	}{
		{nil, `null`},
		{"text", `"text"`},
		{42, `42`},
		{true, `true`},
		{[]int{1, 2}, `[1,2]`},
		{json.RawMessage(`{"raw": [1, {"x": null}]}`), `{"raw":[1,{"x":null}]}`},
		{struct {
			A string `json:"a"`
		}{"b"}, `{"a":"b"}`},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			t.Parallel()
			c, mt := mockClient(t)
			var rec testutil.Spy
			mt.RegisterNoResponder(rec.Respond(201, `[{"index":0,"transaction_id":"t","status":"queued","message_id":"m","partition_id":"p","offset":3}]`))
			_, err := c.Queue("q").Push(t.Context(), queen.PushItem{Data: tc.data, TransactionID: "t"})
			require.NoError(t, err)
			var body struct {
				Items []struct {
					Payload json.RawMessage `json:"payload"`
				} `json:"items"`
			}
			require.NoError(t, json.Unmarshal(rec.Only(t).Body, &body))
			assert.JSONEq(t, tc.want, string(body.Items[0].Payload))
		})
	}
}

// A bad item (a trace id that is not a canonical UUID, which a 0.15 broker fails other clients'
// pushes on; data that is not JSON) or an empty queue is refused before anything is sent.
func TestAPushRefusesBadInputBeforeSending(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		items []queen.PushItem
		field string
	}{
		{"trace id not a UUID", []queen.PushItem{{Data: 1}, {Data: 2, TraceID: "trace-1"}}, "items[1].traceId=trace-1"},
		{"trace id without dashes", []queen.PushItem{{TraceID: "0b6a3c1e8c4e4a8f9a570f1f6a6c0d01"}}, "items[0].traceId"},
		{"raw message not JSON", []queen.PushItem{{Data: json.RawMessage(`{`)}}, "items[0].data"},
		{"unencodable data", []queen.PushItem{{Data: make(chan int)}}, "items[0].data"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, mt := mockClient(t)
			var rec testutil.Spy
			mt.RegisterNoResponder(rec.Respond(201, `[]`))
			_, err := c.Queue("q").Push(t.Context(), tc.items...)
			require.ErrorIs(t, err, queen.ErrInvalidOption)
			assert.Contains(t, err.Error(), tc.field)
			assert.Empty(t, rec.All())
		})
	}
	t.Run("empty queue", func(t *testing.T) {
		t.Parallel()
		c, mt := mockClient(t)
		var rec testutil.Spy
		mt.RegisterNoResponder(rec.Respond(201, `[]`))
		_, err := c.Queue("").Push(t.Context(), queen.PushItem{Data: 1})
		require.ErrorIs(t, err, queen.ErrInvalidOption)
		assert.Contains(t, err.Error(), "queue")
		assert.Empty(t, rec.All())
	})
}

// splitRecorder answers each push with one queued result per item and records the requests.
func splitRecorder(t *testing.T) (*queen.Client, *testutil.Spy) {
	c, mt := mockClient(t)
	rec := &testutil.Spy{}
	mt.RegisterNoResponder(rec.Answer(func(req *http.Request) (*http.Response, error) {
		all := rec.All()
		var body struct {
			Items []struct {
				TransactionID string `json:"transactionId"`
			} `json:"items"`
		}
		if err := json.Unmarshal(all[len(all)-1].Body, &body); err != nil {
			return nil, err
		}
		parts := make([]string, len(body.Items))
		for i, it := range body.Items {
			parts[i] = fmt.Sprintf(`{"index":%d,"transaction_id":%q,"status":"queued","message_id":"m","partition_id":"p"}`, i, it.TransactionID)
		}
		return httpmock.NewStringResponse(200, "["+strings.Join(parts, ",")+"]"), nil
	}))
	return c, rec
}

func requestSizes(rec *testutil.Spy) []int {
	sizes := []int{}
	for _, r := range rec.All() {
		sizes = append(sizes, strings.Count(string(r.Body), `"transactionId"`))
	}
	return sizes
}

// Long pushes are split into requests of at most 10,000 items, the broker's limit; results keep
// the item order.
func TestALongPushIsSplitAtTheItemLimit(t *testing.T) {
	t.Parallel()
	c, rec := splitRecorder(t)
	items := make([]queen.PushItem, 10001)
	for i := range items {
		items[i] = queen.PushItem{Data: i, TransactionID: fmt.Sprintf("t%d", i)}
	}
	results, err := c.Queue("q").Push(t.Context(), items...)
	require.NoError(t, err)
	require.Len(t, results, 10001)
	for i, r := range results {
		require.Equal(t, fmt.Sprintf("t%d", i), r.TransactionID)
	}
	assert.Equal(t, []int{10000, 1}, requestSizes(rec))
}

// An item's own Partition wins over the builder's; one request carries several partitions.
func TestAnItemsOwnPartitionWins(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(201, `[{"index":0,"transaction_id":"a","status":"queued"},{"index":1,"transaction_id":"b","status":"queued"},{"index":2,"transaction_id":"c","status":"queued"}]`))
	_, err := c.Queue("q").Partition("builder").Push(t.Context(),
		queen.PushItem{Data: 1, TransactionID: "a", Partition: "p1"},
		queen.PushItem{Data: 2, TransactionID: "b"},
		queen.PushItem{Data: 3, TransactionID: "c", Partition: "p2"})
	require.NoError(t, err)
	req := rec.Only(t)
	assert.JSONEq(t, `{"items":[
		{"queue":"q","partition":"p1","payload":1,"transactionId":"a"},
		{"queue":"q","partition":"builder","payload":2,"transactionId":"b"},
		{"queue":"q","partition":"p2","payload":3,"transactionId":"c"}]}`, string(req.Body))
}

// A push answered with a result count that does not match is an error, not a guess.
func TestAResultCountThatDoesNotMatchIsAnError(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(201, `[]`))
	_, err := c.Queue("q").Push(t.Context(), queen.PushItem{Data: 1})
	var apiErr *queen.APIError
	require.ErrorAs(t, err, &apiErr)
}

// An item a 0.15 broker buffered (maintenance, failover) is reported as such.
func TestABufferedItemIsReportedAsSuch(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, `[{"index":0,"message_id":"m","queueName":"q","status":"buffered","transaction_id":"t"}]`))
	results, err := c.Queue("q").Push(t.Context(), queen.PushItem{Data: 1, TransactionID: "t"})
	require.NoError(t, err)
	assert.Equal(t, []queen.PushResult{{TransactionID: "t", MessageID: "m", Status: "buffered", Offset: -1}}, results)
}

// A 0.15 database failure answered as 200 is a server error.
func TestAPushAnsweredWithADatabaseErrorIsAnAPIError(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, `{"error":"ERROR:  duplicate key value violates unique constraint","success":false}`))
	_, err := c.Queue("q").Push(t.Context(), queen.PushItem{Data: 1})
	var apiErr *queen.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 200, apiErr.StatusCode)
	assert.Contains(t, apiErr.Message, "duplicate key")
}

// A 400 from the broker (it stores nothing of such a push) is returned with its text, and not
// retried.
func TestAPushTheBrokerRefusesIsAnAPIError(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(400, `{"error":"Queue must be a string"}`))
	_, err := c.Queue("q").Push(t.Context(), queen.PushItem{Data: 1})
	var apiErr *queen.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, queen.APIError{StatusCode: 400, Message: "Queue must be a string", Method: "POST", Path: "/api/v1/push"}, *apiErr)
	rec.Only(t)
}

// Every captured 0.15 push answer: results by position (no offset: -1), a 400 as *APIError.
func TestEveryCaptured015PushAnswerIsRead(t *testing.T) {
	t.Parallel()
	for _, cp := range testutil.Captures(t, captures015, "push") {
		var req struct{ Items []json.RawMessage }
		if json.Unmarshal([]byte(cp.Request), &req) != nil || len(req.Items) == 0 {
			continue // no items, or not JSON: a request the SDK never sends
		}
		t.Run(cp.Name(), func(t *testing.T) {
			t.Parallel()
			c, mt := mockClient(t)
			var rec testutil.Spy
			mt.RegisterNoResponder(rec.Respond(cp.Status, cp.Response))
			items := make([]queen.PushItem, len(req.Items))
			for i := range items {
				items[i] = queen.PushItem{Data: i}
			}
			res, err := c.Queue("q").Push(t.Context(), items...)
			if cp.Status >= 400 {
				var apiErr *queen.APIError
				require.ErrorAs(t, err, &apiErr)
				assert.Equal(t, cp.Status, apiErr.StatusCode)
				return
			}
			require.NoError(t, err)
			var want []struct {
				TransactionID string `json:"transaction_id"`
				MessageID     string `json:"message_id"`
				PartitionID   string `json:"partition_id"`
				Status        string
			}
			require.NoError(t, json.Unmarshal([]byte(cp.Response), &want))
			require.Len(t, res, len(want))
			for i, w := range want {
				assert.Equal(t, queen.PushResult{TransactionID: w.TransactionID, MessageID: w.MessageID,
					PartitionID: w.PartitionID, Status: w.Status, Offset: -1}, res[i])
			}
		})
	}
}
