package queen_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// A transaction applies its acks and pushes all together, or, when one of them cannot be
// applied (an ack whose lease ran out), none: a rollback wraps ErrTransactionFailed with the
// broker's reason.
func TestATransactionAppliesAllOrNothing(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		srv, c := modeClient(t, mode, queentest.WithManualClock())
		in := c.Queue("tx-in")
		leaseOn015(t, mode, c, "tx-in", 5)
		pushN(t, in, 2)
		msgs, err := in.Batch(1).LeaseTime(10 * time.Second).Pop(t.Context())
		require.NoError(t, err)
		require.Len(t, msgs, 1)

		res, err := c.Transaction().
			Ack(msgs[0], queen.StatusCompleted).
			PushTo("tx-out", "p", queen.PushItem{Data: "made from 0"}).
			Commit(t.Context())
		require.NoError(t, err)
		require.Len(t, res.Results, 2)
		assert.Equal(t, "ack", res.Results[0].Type)
		assert.True(t, res.Results[0].Success)
		assert.Equal(t, "push", res.Results[1].Type)
		assert.Equal(t, "queued", res.Results[1].Status)
		assert.Equal(t, mode.Offset(0), res.Results[1].Offset)

		out, err := c.Queue("tx-out").Batch(10).Pop(t.Context())
		require.NoError(t, err)
		require.Len(t, out, 1)
		assert.JSONEq(t, `"made from 0"`, string(out[0].Data))

		// The next message's lease expires before the transaction: everything rolls back.
		next, err := in.Batch(1).LeaseTime(5 * time.Second).Pop(t.Context())
		require.NoError(t, err)
		require.Len(t, next, 1)
		srv.Advance(6 * time.Second)
		_, err = c.Transaction().Ack(next[0], queen.StatusCompleted).Push("tx-out2", queen.PushItem{Data: 1}).Commit(t.Context())
		require.ErrorIs(t, err, queen.ErrTransactionFailed)
		assert.Contains(t, err.Error(), "Invalid or expired lease")
		none, err := c.Queue("tx-out2").Pop(t.Context())
		require.NoError(t, err)
		assert.Empty(t, none, "a rolled-back push stores nothing")
	})
}

// A captured 0.15 push-only transaction: 0.15 sends no status or offset for its pushes.
func TestA015PushOnlyTransactionDecodes(t *testing.T) {
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

// Ack operations carry the message's leaseId and group, so they apply only under the lease
// the message was delivered with; the results come back one per ack and per pushed item.
func TestATransactionsAcksCarryTheirLeaseAndGroup(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	m := popOne(t, c, mt, pop015Group, "g1")
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
// messages so they can still be nacked.
func TestARollbackUnsettlesTheAckedMessages(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	m := popOne(t, c, mt, pop015Group, "g1")
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, `{"transactionId":"tx-1","success":false,"error":"operation 0: Invalid or expired lease","results":[]}`))

	res, err := c.Transaction().Ack(m, queen.StatusCompleted).Push("out", queen.PushItem{Data: 1}).Commit(t.Context())
	require.ErrorIs(t, err, queen.ErrTransactionFailed)
	assert.Contains(t, err.Error(), "operation 0: Invalid or expired lease")
	assert.Equal(t, "tx-1", res.TransactionID)
	rec.Only(t)

	var ack testutil.Spy
	mt.RegisterNoResponder(ack.Respond(200, ack015Completed))
	require.NoError(t, m.Nack(t.Context(), nil), "the rolled-back ack left the message unsettled")
}

func TestATransactionRefusesBadOperationsBeforeSending(t *testing.T) {
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

// A transaction acking a message settled before is refused before anything is sent.
func TestATransactionRefusesASettledMessage(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	m := popOne(t, c, mt, pop015Group, "g1")
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, ack015Completed))
	require.NoError(t, m.Ack(t.Context()))
	_, err := c.Transaction().Ack(m, queen.StatusCompleted).Commit(t.Context())
	require.ErrorIs(t, err, queen.ErrAlreadySettled)
	rec.Only(t)
}

// The captured 0.15 transaction answer decodes (no status on push entries, no offset).
func TestTheCaptured015TransactionAnswerDecodes(t *testing.T) {
	t.Parallel()
	cp := testutil.Captures(t, captures015, "tx")[0]
	c, mt := mockClient(t)
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(cp.Status, cp.Response))
	res, err := c.Transaction().PushTo("smoke-tx", "p1", queen.PushItem{Data: map[string]int{"t": 1}}).Commit(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "8d2beb09-165f-46c8-9a61-61999ee3efbc", res.TransactionID)
	require.Len(t, res.Results, 1)
	e := res.Results[0]
	assert.Equal(t, "push", e.Type)
	assert.True(t, e.Success)
	assert.Equal(t, "01a22946-4d75-7000-8042-7c43b18c20a8", e.MessageID)
	assert.Equal(t, "a668d092-60f3-407b-9550-b5a6e2fa45b5", e.PartitionID)
	assert.Equal(t, "ba0d472a-cd54-493c-a577-43d5d7174b6d", e.TransactionID)
	assert.Equal(t, int64(-1), e.Offset)
	assert.False(t, errors.Is(err, queen.ErrTransactionFailed))
}
