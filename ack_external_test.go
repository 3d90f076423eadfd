package queen_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// AckBatch reports refusals per item; the request itself succeeded.
func TestAcceptanceAckBatchPerItem(t *testing.T) {
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

// wire-0.15.md A5: one completed ack, answered as an array.
const ack015A5 = `[{"dlq":false,"error":null,"index":0,"leaseReleased":false,"partitionName":"p1","queueName":"smoke-basic","success":true,"transactionId":"5e09b8de-aa5f-4e24-a12f-e2bdb0d6501c"}]`

// wire-0.15.md A7b: the same ack again, refused because the lease is gone (R79).
const ack015A7b = `[{"dlq":false,"error":"Invalid or expired lease","index":0,"leaseReleased":false,"partitionName":"p1","queueName":"smoke-basic","success":false,"transactionId":"5e09b8de-aa5f-4e24-a12f-e2bdb0d6501c"}]`

func TestAckSendsLeaseAndGroup_R66(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	m := popOne(t, c, mt, pop015A4, "g1")
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, ack015A5))

	res, err := c.Ack(t.Context(), m, queen.StatusCompleted)
	require.NoError(t, err)
	assert.Equal(t, queen.AckResult{TransactionID: "5e09b8de-aa5f-4e24-a12f-e2bdb0d6501c", Success: true}, res)

	req := rec.Only(t)
	assert.Equal(t, "/api/v1/ack", req.Path)
	assert.Equal(t, http.MethodPost, req.Method)
	assert.Equal(t, "application/json", req.Header.Get("Content-Type"))
	// Byte-for-byte the fields of wire-0.15.md A5's request.
	jsonEq(t, `{"transactionId":"5e09b8de-aa5f-4e24-a12f-e2bdb0d6501c","partitionId":"039cf519-3102-46c2-86d2-8a85fee50b58","leaseId":"01a22945-dbbd-7000-ae31-34cbc1c0d5de","status":"completed","consumerGroup":"g1"}`, req.Body)
}

func TestAckQueueModeOmitsGroupAndSendsError_O13(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	m := popOne(t, c, mt, pop015A11c, "")
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, `[{"dlq":true,"error":null,"index":0,"leaseReleased":false,"partitionName":"Default","queueName":"smoke-qdlq","success":true,"transactionId":"tx-basic-3"}]`))

	res, err := c.Ack(t.Context(), m, queen.StatusFailed, queen.WithError("qfail"))
	require.NoError(t, err)
	assert.True(t, res.DLQ)
	jsonEq(t, `{"transactionId":"tx-basic-3","partitionId":"039cf519-3102-46c2-86d2-8a85fee50b58","leaseId":"01a22946-05c7-7000-bbda-b2a55e0aa081","status":"failed","error":"qfail"}`, rec.Only(t).Body)
}

func TestAckRefusedLeaseIsErrLeaseExpired_R117(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	m := popOne(t, c, mt, pop015A4, "g1")
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, ack015A7b))

	res, err := c.Ack(t.Context(), m, queen.StatusCompleted)
	require.ErrorIs(t, err, queen.ErrLeaseExpired)
	assert.False(t, res.Success, "a refused item is never a success")
	assert.Equal(t, "Invalid or expired lease", res.Error)
	assert.ErrorIs(t, m.Ack(t.Context()), queen.ErrAlreadySettled, "the broker answered: the message is settled")
	rec.Only(t)
}

func TestAckRefusalsAreErrors_O20(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		// wire-0.15.md B3: unknown transactionId.
		"Message not found": `[{"dlq":false,"error":"Message not found","index":0,"leaseReleased":false,"partitionName":"p1","queueName":"smoke-lease","success":false,"transactionId":"does-not-exist"}]`,
		// wire-0.15.md B3c: refused with a null error.
		"refused": `[{"dlq":false,"error":null,"index":0,"leaseReleased":false,"partitionName":"p1","queueName":"smoke-lease","success":false,"transactionId":"6021a6ad-29b8-45b6-971b-0c4cd9bd841c"}]`,
	}
	for reason, body := range cases {
		t.Run(reason, func(t *testing.T) {
			t.Parallel()
			c, mt := mockClient(t)
			m := popOne(t, c, mt, pop015A4, "g1")
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

// wire-0.15.md B3b: a database error answered as a 200 object, not an array (O3).
func TestAckDatabaseErrorIsAPIError_O3(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	m := popOne(t, c, mt, pop015A4, "g1")
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, `{"error":"ERROR:  invalid input syntax for type uuid: \"p1\"\nCONTEXT:  PL/pgSQL function ack_messages_v2(jsonb) line 14 at FOR over SELECT rows\n","success":false}`))

	err := m.Ack(t.Context())
	var apiErr *queen.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 200, apiErr.StatusCode)
	assert.Contains(t, apiErr.Message, "invalid input syntax")
	// The ack did not get through, so the message can be settled again.
	mt.RegisterNoResponder(rec.Respond(200, ack015A5))
	require.NoError(t, m.Ack(t.Context()))
}

func TestAckBatchMatchesResultsByPosition_R85(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var pop testutil.Spy
	mt.RegisterRegexpResponder(http.MethodGet, mustRegexp(`/api/v1/pop/`), pop.Respond(200, pop015A4))
	msgs, err := c.Queue("smoke-basic").Partition("p1").Group("g1").Batch(10).Pop(t.Context())
	require.NoError(t, err)
	require.Len(t, msgs, 3)

	var rec testutil.Spy
	// wire-0.15.md A7, with a refusal (B2b) in the middle.
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

func TestAckBatchMissingResultIsNotSuccess(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	m := popOne(t, c, mt, pop015A4, "g1")
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, `[]`))
	results, err := c.AckBatch(t.Context(), []queen.AckItem{{Message: m, Status: queen.StatusRetry}})
	require.NoError(t, err)
	require.Len(t, results, 1)
	assert.False(t, results[0].Success)
	assert.NotEmpty(t, results[0].Error)
}

func TestAckBatchQueueModeHasNoGroup_O13(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	m := popOne(t, c, mt, pop015A11c, "")
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, ack015A5))
	_, err := c.AckBatch(t.Context(), []queen.AckItem{{Message: m, Status: queen.StatusDLQ, Error: "bad"}})
	require.NoError(t, err)
	jsonEq(t, `{"acknowledgments":[{"transactionId":"tx-basic-3","partitionId":"039cf519-3102-46c2-86d2-8a85fee50b58","leaseId":"01a22946-05c7-7000-bbda-b2a55e0aa081","status":"dlq","error":"bad"}]}`, rec.Only(t).Body)
}

// Items a broker would reject as a whole request are refused locally; an empty list sends
// nothing (O19).
func TestAckBatchValidatesBeforeSending_O19(t *testing.T) {
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

// Consume semantics: "The text of every error reaches the broker as the ack's error", whatever
// characters it holds; the identifiers go back exactly as they came (O6).
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

func TestIntegrationEveryAckStatus_R67_R69_R71_R72(t *testing.T) {
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

func TestIntegrationBatchAckReleasesLease_R53_R85(t *testing.T) {
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

		// A second batch with the ended lease is refused item by item (R79).
		results, err = c.AckBatch(t.Context(), items)
		require.NoError(t, err)
		for _, r := range results {
			assert.False(t, r.Success)
			assert.Equal(t, "Invalid or expired lease", r.Error)
		}
		assert.ErrorIs(t, msgs[0].Ack(t.Context()), queen.ErrAlreadySettled)
	})
}

// O1, O3, O19, O20: every 0.15 ack answer: arrays matched to the items by position, a 200
// object and a 400 as *APIError.
func TestWire015EveryAckCapture_O3_O20(t *testing.T) {
	t.Parallel()
	for _, cp := range loadCaptures(t, "ack") {
		t.Run(cp.Title, func(t *testing.T) {
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
