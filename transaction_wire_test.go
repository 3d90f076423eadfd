package queen_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testutil"
)

// wire-0.15.md H1: a push-only transaction; 0.15 sends no status or offset.
func TestTransactionPushOnly015(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, `{"results":[{"index":0,"messageId":"01a22946-4d75-7000-8042-7c43b18c20a8","partitionId":"a668d092-60f3-407b-9550-b5a6e2fa45b5","queueName":"smoke-tx","success":true,"transactionId":"ba0d472a-cd54-493c-a577-43d5d7174b6d","type":"push"}],"success":true,"transactionId":"8d2beb09-165f-46c8-9a61-61999ee3efbc"}`))

	res, err := c.Transaction().PushTo("smoke-tx", "p1", queen.PushItem{Data: map[string]int{"t": 1}, TransactionID: "ba0d472a-cd54-493c-a577-43d5d7174b6d"}).Commit(t.Context())
	require.NoError(t, err)
	assert.Equal(t, queen.TransactionResult{TransactionID: "8d2beb09-165f-46c8-9a61-61999ee3efbc", Results: []queen.TransactionEntry{{
		Type: "push", Success: true, TransactionID: "ba0d472a-cd54-493c-a577-43d5d7174b6d",
		PartitionID: "a668d092-60f3-407b-9550-b5a6e2fa45b5", MessageID: "01a22946-4d75-7000-8042-7c43b18c20a8",
		Status: "queued", Offset: -1,
	}}}, res)
	jsonEq(t, `{"operations":[{"type":"push","items":[{"queue":"smoke-tx","partition":"p1","payload":{"t":1},"transactionId":"ba0d472a-cd54-493c-a577-43d5d7174b6d"}]}]}`, rec.Only(t).Body)
}

// Ack operations carry the message's leaseId and group (O23, R128); results follow §2.3.
func TestTransactionAckAndPush_R126(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	m := popOne(t, c, mt, pop015A4, "g1")
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, `{"transactionId":"tx-9","success":true,"results":[
		{"index":0,"type":"ack","success":true,"transactionId":"5e09b8de-aa5f-4e24-a12f-e2bdb0d6501c","partitionId":"039cf519-3102-46c2-86d2-8a85fee50b58","error":null,"dlq":false,"leaseReleased":false},
		{"index":1,"type":"push","success":true,"status":"duplicate","transactionId":"out-1","messageId":"m-out","partitionId":"p-out","queueName":"invoices","offset":4}]}`))

	res, err := c.Transaction().
		Ack(m, queen.StatusCompleted).
		Push("invoices", queen.PushItem{Data: "inv", TransactionID: "out-1"}).
		Commit(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "tx-9", res.TransactionID)
	require.Len(t, res.Results, 2)
	assert.Equal(t, queen.TransactionEntry{Type: "ack", Success: true, TransactionID: "5e09b8de-aa5f-4e24-a12f-e2bdb0d6501c",
		PartitionID: "039cf519-3102-46c2-86d2-8a85fee50b58", Offset: -1}, res.Results[0])
	assert.Equal(t, queen.TransactionEntry{Type: "push", Success: true, TransactionID: "out-1", MessageID: "m-out",
		PartitionID: "p-out", Status: "duplicate", Offset: 4}, res.Results[1])

	jsonEq(t, `{"operations":[
		{"type":"ack","transactionId":"5e09b8de-aa5f-4e24-a12f-e2bdb0d6501c","partitionId":"039cf519-3102-46c2-86d2-8a85fee50b58","leaseId":"01a22945-dbbd-7000-ae31-34cbc1c0d5de","status":"completed","consumerGroup":"g1"},
		{"type":"push","items":[{"queue":"invoices","payload":"inv","transactionId":"out-1"}]}]}`, rec.Only(t).Body)
	assert.ErrorIs(t, m.Ack(t.Context()), queen.ErrAlreadySettled, "a committed ack settles the message")
}

// A rollback wraps ErrTransactionFailed with the broker's reason, and unsettles the acked
// messages so they can still be nacked (R127).
func TestTransactionRollback_R127(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	m := popOne(t, c, mt, pop015A4, "g1")
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, `{"transactionId":"tx-1","success":false,"error":"operation 0: Invalid or expired lease","results":[]}`))

	res, err := c.Transaction().Ack(m, queen.StatusCompleted).Push("out", queen.PushItem{Data: 1}).Commit(t.Context())
	require.ErrorIs(t, err, queen.ErrTransactionFailed)
	assert.Contains(t, err.Error(), "operation 0: Invalid or expired lease")
	assert.Equal(t, "tx-1", res.TransactionID)
	rec.Only(t)

	var ack testutil.Spy
	mt.RegisterNoResponder(ack.Respond(200, ack015A5))
	require.NoError(t, m.Nack(t.Context(), nil), "the rolled-back ack left the message unsettled")
}

func TestTransactionRefusesInvalidPiecesBeforeSending(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		build func(tx *queen.Transaction) *queen.Transaction
		field string
	}{
		{"nil message", func(tx *queen.Transaction) *queen.Transaction { return tx.Ack(nil, queen.StatusCompleted) }, "operations[0]"},
		{"bad status", func(tx *queen.Transaction) *queen.Transaction {
			return tx.Push("q", queen.PushItem{}).Ack(&queen.Message{TransactionID: "t", PartitionID: "p"}, "nope")
		}, "operations[1].status"},
		{"bad trace id", func(tx *queen.Transaction) *queen.Transaction {
			return tx.Push("q", queen.PushItem{TraceID: "x"})
		}, "operations[0].items[0].traceId"},
		{"empty queue", func(tx *queen.Transaction) *queen.Transaction { return tx.Push("", queen.PushItem{}) }, "operations[0].queue"},
		{"nothing to do", func(tx *queen.Transaction) *queen.Transaction { return tx }, "transaction"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, mt := mockClient(t)
			var rec testutil.Spy
			mt.RegisterNoResponder(rec.Respond(200, `{}`))
			_, err := tc.build(c.Transaction()).Commit(t.Context())
			require.ErrorIs(t, err, queen.ErrInvalidOption)
			assert.Contains(t, err.Error(), tc.field)
			assert.Empty(t, rec.All())
		})
	}
}

func TestTransactionRefusesSettledMessage(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	m := popOne(t, c, mt, pop015A4, "g1")
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, ack015A5))
	require.NoError(t, m.Ack(t.Context()))
	_, err := c.Transaction().Ack(m, queen.StatusCompleted).Commit(t.Context())
	require.ErrorIs(t, err, queen.ErrAlreadySettled)
	rec.Only(t)
}

func TestDoDecodesAndReportsErrors(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var rec testutil.Spy
	mt.RegisterResponder("GET", mockBase+"/api/v1/dlq", rec.Respond(200, `{"messages":[],"pagination":{"limit":100,"offset":0}}`))
	mt.RegisterResponder("DELETE", mockBase+"/api/v1/dlq/x", rec.Respond(404, `{"error":"dead letter not found"}`))
	mt.RegisterResponder("POST", mockBase+"/api/v1/dlq/y/replay", rec.Respond(404, `<html><body><h1>File Not Found</h1><hr><i>uWebSockets/20 Server</i></body></html>`))
	mt.RegisterResponder("POST", mockBase+"/api/v1/configure", rec.Respond(200, `{"configured":true}`))

	var raw json.RawMessage
	require.NoError(t, c.Do(t.Context(), "GET", "/api/v1/dlq", map[string][]string{"queue": {"a b"}}, nil, &raw))
	assert.JSONEq(t, `{"messages":[],"pagination":{"limit":100,"offset":0}}`, string(raw))
	assert.Equal(t, "queue=a+b", rec.All()[0].RawQuery)

	err := c.Do(t.Context(), "DELETE", "/api/v1/dlq/x", nil, nil, nil)
	var apiErr *queen.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, queen.APIError{StatusCode: 404, Message: "dead letter not found", Method: "DELETE", Path: "/api/v1/dlq/x"}, *apiErr)

	err = c.Do(t.Context(), "POST", "/api/v1/dlq/y/replay", nil, nil, nil)
	require.ErrorAs(t, err, &apiErr)
	assert.True(t, apiErr.NotJSON)
	assert.Equal(t, 404, apiErr.StatusCode)

	var out struct{ Configured bool }
	require.NoError(t, c.Do(t.Context(), "POST", "/api/v1/configure", nil, map[string]string{"queue": "q"}, &out))
	assert.True(t, out.Configured)
	jsonEq(t, `{"queue":"q"}`, rec.All()[3].Body)
}
