package queen_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// AckBatch reports refusals per item, the request itself succeeding; an empty list is answered
// without a request.
func TestAckBatchAnswersPerItem(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		_, _, c := tapped(t, m, queentest.WithManualClock())
		push(t, c, "q", "", 0, 1)
		msgs, err := c.Queue("q").Batch(2).Pop(testutil.Context(t))
		require.NoError(t, err)
		require.Len(t, msgs, 2)
		res, err := c.AckBatch(testutil.Context(t), []queen.AckItem{
			{Message: msgs[0], Status: queen.StatusCompleted},
			{Message: msgs[1], Status: queen.StatusFailed, Error: "nope"},
		})
		require.NoError(t, err)
		require.Len(t, res, 2)
		for _, r := range res {
			assert.True(t, r.Success, "%+v", r)
		}
		assert.Equal(t, msgs[0].TransactionID, res[0].TransactionID)
		assert.ErrorIs(t, msgs[0].Ack(testutil.Context(t)), queen.ErrAlreadySettled)
		res, err = c.AckBatch(testutil.Context(t), nil)
		require.NoError(t, err, "an empty batch is answered locally")
		assert.Empty(t, res)
	})
}

// ack015Completed is a captured 0.15 answer to one completed ack: an array.
const ack015Completed = `[{"dlq":false,"error":null,"index":0,"leaseReleased":false,"partitionName":"p1","queueName":"smoke-basic","success":true,"transactionId":"5e09b8de-aa5f-4e24-a12f-e2bdb0d6501c"}]`

// ack015LeaseGone is the captured answer to the same ack sent again, refused because the lease
// is gone.
const ack015LeaseGone = `[{"dlq":false,"error":"Invalid or expired lease","index":0,"leaseReleased":false,"partitionName":"p1","queueName":"smoke-basic","success":false,"transactionId":"5e09b8de-aa5f-4e24-a12f-e2bdb0d6501c"}]`

// An ack sends the message's transactionId, partitionId and leaseId as delivered, its status and
// the group that popped it.
func TestAnAckSendsTheMessagesLeaseAndGroup(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	m := popOne(t, c, mt, pop015Group, "g1")
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, ack015Completed))

	res, err := c.Ack(t.Context(), m, queen.StatusCompleted)
	require.NoError(t, err)
	assert.Equal(t, queen.AckResult{TransactionID: "5e09b8de-aa5f-4e24-a12f-e2bdb0d6501c", Success: true}, res)

	req := rec.Only(t)
	assert.Equal(t, "/api/v1/ack", req.Path)
	assert.Equal(t, http.MethodPost, req.Method)
	assert.Equal(t, "application/json", req.Header.Get("Content-Type"))
	// Byte for byte the fields of the captured request.
	jsonEq(t, `{"transactionId":"5e09b8de-aa5f-4e24-a12f-e2bdb0d6501c","partitionId":"039cf519-3102-46c2-86d2-8a85fee50b58","leaseId":"01a22945-dbbd-7000-ae31-34cbc1c0d5de","status":"completed","consumerGroup":"g1"}`, req.Body)
}

// In queue mode an ack names no group (a 0.15 broker would read an empty one as the group ""),
// and it sends WithError's text.
func TestAQueueModeAckNamesNoGroupAndSendsItsError(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	m := popOne(t, c, mt, pop015QueueMode, "")
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, `[{"dlq":true,"error":null,"index":0,"leaseReleased":false,"partitionName":"Default","queueName":"smoke-qdlq","success":true,"transactionId":"tx-basic-3"}]`))

	res, err := c.Ack(t.Context(), m, queen.StatusFailed, queen.WithError("qfail"))
	require.NoError(t, err)
	assert.True(t, res.DLQ)
	jsonEq(t, `{"transactionId":"tx-basic-3","partitionId":"039cf519-3102-46c2-86d2-8a85fee50b58","leaseId":"01a22946-05c7-7000-bbda-b2a55e0aa081","status":"failed","error":"qfail"}`, rec.Only(t).Body)
}

// An ack refused because the lease is no longer the live one is ErrLeaseExpired, and the
// message stays settled: the broker answered.
func TestAnAckRefusedForItsLeaseIsErrLeaseExpired(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	m := popOne(t, c, mt, pop015Group, "g1")
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, ack015LeaseGone))

	res, err := c.Ack(t.Context(), m, queen.StatusCompleted)
	require.ErrorIs(t, err, queen.ErrLeaseExpired)
	assert.False(t, res.Success, "a refused item is never a success")
	assert.Equal(t, "Invalid or expired lease", res.Error)
	assert.ErrorIs(t, m.Ack(t.Context()), queen.ErrAlreadySettled, "the broker answered: the message is settled")
	rec.Only(t)
}

// Any other refusal is an error with the broker's reason, or "refused" when a 0.15 broker gives
// none (an unknown status).
func TestAnAckRefusalIsAnErrorWithItsReason(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		// An unknown transactionId.
		"Message not found": `[{"dlq":false,"error":"Message not found","index":0,"leaseReleased":false,"partitionName":"p1","queueName":"smoke-lease","success":false,"transactionId":"does-not-exist"}]`,
		// Refused with a null error.
		"refused": `[{"dlq":false,"error":null,"index":0,"leaseReleased":false,"partitionName":"p1","queueName":"smoke-lease","success":false,"transactionId":"6021a6ad-29b8-45b6-971b-0c4cd9bd841c"}]`,
	}
	for reason, body := range cases {
		t.Run(reason, func(t *testing.T) {
			t.Parallel()
			c, mt := mockClient(t)
			m := popOne(t, c, mt, pop015Group, "g1")
			var rec testutil.Spy
			mt.RegisterNoResponder(rec.Respond(200, body))
			res, err := c.Ack(t.Context(), m, queen.StatusCompleted)
			require.Error(t, err)
			assert.NotErrorIs(t, err, queen.ErrLeaseExpired)
			assert.Contains(t, err.Error(), reason)
			assert.False(t, res.Success)
			assert.Equal(t, reason, res.Error)
		})
	}
}

// A 0.15 database error answered as a 200 object, not an array, is an *APIError, and the message
// may be settled again.
func TestAnAckAnsweredWithADatabaseErrorIsAnAPIError(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	m := popOne(t, c, mt, pop015Group, "g1")
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, `{"error":"ERROR:  invalid input syntax for type uuid: \"p1\"\nCONTEXT:  PL/pgSQL function ack_messages_v2(jsonb) line 14 at FOR over SELECT rows\n","success":false}`))

	err := m.Ack(t.Context())
	var apiErr *queen.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 200, apiErr.StatusCode)
	assert.Contains(t, apiErr.Message, "invalid input syntax")
	// The ack did not get through, so the message can be settled again.
	mt.RegisterNoResponder(rec.Respond(200, ack015Completed))
	require.NoError(t, m.Ack(t.Context()))
}

// A batch ack's results are matched to its items by position, a refusal in the middle included.
func TestAckBatchMatchesResultsToItemsByPosition(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var pop testutil.Spy
	mt.RegisterRegexpResponder(http.MethodGet, mustRegexp(`/api/v1/pop/`), pop.Respond(200, pop015Group))
	msgs, err := c.Queue("smoke-basic").Partition("p1").Group("g1").Batch(10).Pop(t.Context())
	require.NoError(t, err)
	require.Len(t, msgs, 3)

	var rec testutil.Spy
	// A captured batch ack, with a refusal in the middle.
	mt.RegisterNoResponder(rec.Respond(200, `[{"dlq":false,"error":null,"index":0,"leaseReleased":false,"partitionName":"p1","queueName":"smoke-basic","success":true,"transactionId":"5e09b8de-aa5f-4e24-a12f-e2bdb0d6501c"},{"dlq":false,"error":"Invalid or expired lease","index":0,"leaseReleased":false,"partitionName":"p1","queueName":"smoke-lease","success":false,"transactionId":"0ac1a02e-1b79-4234-aed2-8cedc13f74b6"},{"dlq":false,"error":null,"index":1,"leaseReleased":true,"partitionName":"p1","queueName":"smoke-basic","success":true,"transactionId":"tx-basic-3"}]`))

	results, err := c.AckBatch(t.Context(), []queen.AckItem{
		{Message: msgs[0], Status: queen.StatusCompleted},
		{Message: msgs[1], Status: queen.StatusCompleted},
		{Message: msgs[2], Status: queen.StatusCompleted},
	})
	require.NoError(t, err, "refusals are per item")
	require.Len(t, results, 3)
	assert.True(t, results[0].Success)
	assert.False(t, results[1].Success)
	assert.Equal(t, "Invalid or expired lease", results[1].Error)
	assert.True(t, results[2].Success)
	assert.True(t, results[2].LeaseReleased)
	assert.Equal(t, "tx-basic-3", results[2].TransactionID)

	req := rec.Only(t)
	assert.Equal(t, "/api/v1/ack/batch", req.Path)
	jsonEq(t, `{"consumerGroup":"g1","acknowledgments":[
		{"transactionId":"5e09b8de-aa5f-4e24-a12f-e2bdb0d6501c","partitionId":"039cf519-3102-46c2-86d2-8a85fee50b58","leaseId":"01a22945-dbbd-7000-ae31-34cbc1c0d5de","status":"completed"},
		{"transactionId":"0ac1a02e-1b79-4234-aed2-8cedc13f74b6","partitionId":"039cf519-3102-46c2-86d2-8a85fee50b58","leaseId":"01a22945-dbbd-7000-ae31-34cbc1c0d5de","status":"completed"},
		{"transactionId":"tx-basic-3","partitionId":"039cf519-3102-46c2-86d2-8a85fee50b58","leaseId":"01a22945-dbbd-7000-ae31-34cbc1c0d5de","status":"completed"}]}`, req.Body)
}

// An item the answer has no result for is not a success.
func TestAnAckBatchItemWithoutAResultIsNotASuccess(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	m := popOne(t, c, mt, pop015Group, "g1")
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, `[]`))
	results, err := c.AckBatch(t.Context(), []queen.AckItem{{Message: m, Status: queen.StatusRetry}})
	require.NoError(t, err)
	require.Len(t, results, 1)
	assert.False(t, results[0].Success)
	assert.NotEmpty(t, results[0].Error)
}

// A queue-mode batch ack names no group.
func TestAQueueModeBatchAckNamesNoGroup(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	m := popOne(t, c, mt, pop015QueueMode, "")
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, ack015Completed))
	_, err := c.AckBatch(t.Context(), []queen.AckItem{{Message: m, Status: queen.StatusDLQ, Error: "bad"}})
	require.NoError(t, err)
	jsonEq(t, `{"acknowledgments":[{"transactionId":"tx-basic-3","partitionId":"039cf519-3102-46c2-86d2-8a85fee50b58","leaseId":"01a22946-05c7-7000-bbda-b2a55e0aa081","status":"dlq","error":"bad"}]}`, rec.Only(t).Body)
}

// Items a broker would reject as a whole request are refused locally; an empty list sends
// nothing (a 0.15 broker never answers one).
func TestAckBatchRefusesBadItemsBeforeSending(t *testing.T) {
	t.Parallel()
	good := &queen.Message{TransactionID: "t", PartitionID: "p"}
	cases := []struct {
		name  string
		items []queen.AckItem
		field string
	}{
		{"nil message", []queen.AckItem{{Message: good}, {}}, "items[1]"},
		{"no transactionId", []queen.AckItem{{Message: &queen.Message{PartitionID: "p"}}}, "items[0].transactionId"},
		{"no partitionId", []queen.AckItem{{Message: &queen.Message{TransactionID: "t"}}}, "items[0].partitionId"},
		{"unknown status", []queen.AckItem{{Message: good, Status: "weird"}}, "items[0].status=weird"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, mt := mockClient(t)
			var rec testutil.Spy
			mt.RegisterNoResponder(rec.Respond(200, `[]`))
			_, err := c.AckBatch(t.Context(), tc.items)
			require.ErrorIs(t, err, queen.ErrInvalidOption)
			assert.Contains(t, err.Error(), tc.field)
			assert.Empty(t, rec.All())
		})
	}
	t.Run("empty list", func(t *testing.T) {
		t.Parallel()
		c, mt := mockClient(t)
		var rec testutil.Spy
		mt.RegisterNoResponder(rec.Respond(200, `[]`))
		results, err := c.AckBatch(t.Context(), nil)
		require.NoError(t, err)
		assert.Empty(t, results)
		assert.Empty(t, rec.All())
	})
}

// The text of every error reaches the broker as the ack's error, whatever characters it holds;
// the identifiers go back exactly as they came.
func TestAckErrorTextReachesTheBrokerIntact(t *testing.T) {
	t.Parallel()
	const text = "he said \"no\" \\ <b>&</b>\n\t\u2028 ünï 😀 \x01 end"
	c, mt := mockClient(t)
	m := popOne(t, c, mt, `{"success":true,"queue":"q","leaseId":"l\"1","consumerGroup":"g<1>","messages":[
		{"id":"m","transactionId":"t/1 & \"2\"","partitionId":"p\u00e91","data":1,"offset":0,"deliveryAttempt":1}]}`, "g<1>")
	var rec testutil.Spy
	mt.RegisterRegexpResponder(http.MethodPost, mustRegexp(`/api/v1/ack`),
		rec.Respond(200, `[{"index":0,"success":true,"error":null}]`))
	require.NoError(t, m.DeadLetter(t.Context(), errors.New(text)))
	var body map[string]string
	require.NoError(t, json.Unmarshal(rec.Only(t).Body, &body))
	assert.Equal(t, map[string]string{"transactionId": "t/1 & \"2\"", "partitionId": "p\u00e91", "leaseId": "l\"1",
		"status": "dlq", "consumerGroup": "g<1>", "error": text}, body)
}

// Every ack status on either broker: completed and dlq leave the message done (dlq filed), failed
// and retry deliver it again one attempt higher.
func TestEveryAckStatusDoesWhatItSays(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status    queen.Status
		comesBack bool
		dlq       bool
	}{
		{queen.StatusCompleted, false, false},
		{queen.StatusFailed, true, false},
		{queen.StatusRetry, true, false},
		{queen.StatusDLQ, false, true},
	}
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		for _, tc := range cases {
			t.Run(string(tc.status), func(t *testing.T) {
				t.Parallel()
				_, c := modeClient(t, mode)
				q := c.Queue("jobs").Group("workers").SubscriptionMode(queen.SubscribeAll)
				pushN(t, q, 1)
				msgs, err := q.Pop(t.Context())
				require.NoError(t, err)
				require.Len(t, msgs, 1)

				res, err := c.Ack(t.Context(), msgs[0], tc.status, queen.WithError("why"))
				require.NoError(t, err)
				assert.True(t, res.Success)
				assert.Equal(t, tc.dlq, res.DLQ)

				again, err := q.Pop(t.Context())
				require.NoError(t, err)
				if !tc.comesBack {
					assert.Empty(t, again)
					return
				}
				require.Len(t, again, 1)
				assert.Equal(t, msgs[0].TransactionID, again[0].TransactionID)
				assert.Equal(t, mode.Attempt(2), again[0].DeliveryAttempt)
			})
		}
	})
}

// A batch ack completing a whole leased batch ends the lease at once; a second batch under the
// ended lease is refused item by item.
func TestABatchAckOfTheWholeBatchEndsItsLease(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		_, c := modeClient(t, mode)
		q := c.Queue("batchy")
		pushN(t, q, 3)
		msgs, err := q.Batch(3).Pop(t.Context())
		require.NoError(t, err)
		require.Len(t, msgs, 3)
		items := make([]queen.AckItem, len(msgs))
		for i, m := range msgs {
			items[i] = queen.AckItem{Message: m, Status: queen.StatusCompleted}
		}
		results, err := c.AckBatch(t.Context(), items)
		require.NoError(t, err)
		require.Len(t, results, 3)
		for i, r := range results {
			assert.True(t, r.Success, "item %d", i)
			assert.Equal(t, msgs[i].TransactionID, r.TransactionID)
		}
		assert.True(t, results[2].LeaseReleased)

		// A second batch with the ended lease is refused item by item.
		results, err = c.AckBatch(t.Context(), items)
		require.NoError(t, err)
		for _, r := range results {
			assert.False(t, r.Success)
			assert.Equal(t, "Invalid or expired lease", r.Error)
		}
		assert.ErrorIs(t, msgs[0].Ack(t.Context()), queen.ErrAlreadySettled)
	})
}

// Every captured 0.15 ack answer: arrays matched to the items by position, a 200
// object and a 400 as *APIError.
func TestEveryCaptured015AckAnswerIsRead(t *testing.T) {
	t.Parallel()
	for _, cp := range testutil.Captures(t, captures015, "ack") {
		t.Run(cp.Name(), func(t *testing.T) {
			t.Parallel()
			c, mt := mockClient(t)
			var rec testutil.Spy
			mt.RegisterNoResponder(rec.Respond(cp.Status, cp.Response))
			var want []struct {
				Success, DLQ, LeaseReleased bool
				Error                       *string
			}
			isArray := strings.HasPrefix(cp.Response, "[")
			n := 1
			if isArray {
				require.NoError(t, json.Unmarshal([]byte(cp.Response), &want))
				n = len(want)
			}
			items := make([]queen.AckItem, n)
			for i := range items {
				items[i] = queen.AckItem{Message: &queen.Message{TransactionID: "t", PartitionID: "p"}, Status: queen.StatusCompleted}
			}
			res, err := c.AckBatch(t.Context(), items)
			if !isArray {
				var apiErr *queen.APIError
				require.ErrorAs(t, err, &apiErr)
				assert.Equal(t, cp.Status, apiErr.StatusCode)
				var body struct{ Error string }
				require.NoError(t, json.Unmarshal([]byte(cp.Response), &body))
				assert.Equal(t, body.Error, apiErr.Message)
				return
			}
			require.NoError(t, err, "refusals are per item")
			require.Len(t, res, n)
			for i, w := range want {
				assert.Equal(t, w.Success, res[i].Success)
				assert.Equal(t, w.DLQ, res[i].DLQ)
				assert.Equal(t, w.LeaseReleased, res[i].LeaseReleased)
				if w.Error != nil {
					assert.Equal(t, *w.Error, res[i].Error)
				}
				if !w.Success {
					assert.NotEmpty(t, res[i].Error, "a refusal always says why")
				}
			}
		})
	}
}
