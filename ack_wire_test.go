package queen_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testutil"
)

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

// settleMethods are a message's four settles, with the status and error text each sends.
var settleMethods = []struct {
	name, status, err string
	settle            func(ctx context.Context, m *queen.Message) error
}{
	{"Ack", "completed", "", func(ctx context.Context, m *queen.Message) error { return m.Ack(ctx) }},
	{"Nack", "failed", "boom", func(ctx context.Context, m *queen.Message) error { return m.Nack(ctx, errors.New("boom")) }},
	{"Retry", "retry", "", func(ctx context.Context, m *queen.Message) error { return m.Retry(ctx) }},
	{"DeadLetter", "dlq", "poison", func(ctx context.Context, m *queen.Message) error {
		return m.DeadLetter(ctx, errors.New("poison"))
	}},
}

func TestMessageSettleMethodsSendTheirStatus(t *testing.T) {
	t.Parallel()
	for _, tc := range settleMethods {
		t.Run(tc.status, func(t *testing.T) {
			t.Parallel()
			c, mt := mockClient(t)
			m := popOne(t, c, mt, pop015A4, "g1")
			var rec testutil.Spy
			mt.RegisterNoResponder(rec.Respond(200, ack015A5))
			require.NoError(t, tc.settle(t.Context(), m))
			errField := ""
			if tc.err != "" {
				errField = `,"error":"` + tc.err + `"`
			}
			jsonEq(t, `{"transactionId":"5e09b8de-aa5f-4e24-a12f-e2bdb0d6501c","partitionId":"039cf519-3102-46c2-86d2-8a85fee50b58","leaseId":"01a22945-dbbd-7000-ae31-34cbc1c0d5de","status":"`+tc.status+`","consumerGroup":"g1"`+errField+`}`, rec.Only(t).Body)
		})
	}
}

// A second settle of the same message, by any of its methods or by Client.Ack, returns
// ErrAlreadySettled and sends nothing, whichever settle came first.
func TestSecondSettleSendsNothing(t *testing.T) {
	t.Parallel()
	for _, first := range settleMethods {
		t.Run(first.name, func(t *testing.T) {
			t.Parallel()
			c, mt := mockClient(t)
			m := popOne(t, c, mt, pop20, "billing")
			var rec testutil.Spy
			mt.RegisterRegexpResponder(http.MethodPost, mustRegexp(`/api/v1/ack`),
				rec.Respond(200, `[{"index":0,"transactionId":"order-9137","success":true,"error":null}]`))
			require.NoError(t, first.settle(t.Context(), m))
			for _, second := range settleMethods {
				assert.ErrorIs(t, second.settle(t.Context(), m), queen.ErrAlreadySettled, second.name)
			}
			_, err := c.Ack(t.Context(), m, queen.StatusCompleted)
			assert.ErrorIs(t, err, queen.ErrAlreadySettled, "Client.Ack")
			rec.Only(t)
		})
	}
}

// A settle whose request never got an answer leaves the message unsettled, so it can be retried.
func TestMessageSettleTransportFailureUnsettles(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t, queen.WithRetry(0, 1, 1))
	m := popOne(t, c, mt, pop015A4, "g1")
	mt.RegisterNoResponder(func(*http.Request) (*http.Response, error) {
		return nil, errors.New("connection reset by peer")
	})
	require.Error(t, m.Ack(t.Context()))

	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, ack015A5))
	require.NoError(t, m.Ack(t.Context()))
	rec.Only(t)
}

func TestMessageWithoutClientIsRefused(t *testing.T) {
	t.Parallel()
	m := &queen.Message{TransactionID: "t", PartitionID: "p"}
	require.ErrorIs(t, m.Ack(t.Context()), queen.ErrInvalidOption)
}

func TestOutcomeWrappersKeepTheCause(t *testing.T) {
	t.Parallel()
	cause := errors.New("db down")
	r := queen.Retry(cause)
	d := queen.DeadLetter(cause)
	assert.ErrorIs(t, r, cause)
	assert.ErrorIs(t, d, cause)
	assert.Equal(t, "db down", r.Error())
	assert.Equal(t, "db down", d.Error())
}
