package queen_test

import (
	"errors"
	"testing"
	"time"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Transactions: all or nothing; a rollback wraps ErrTransactionFailed, a lost answer
// ErrOutcomeUnknown and never ErrTransactionFailed.
func TestAcceptanceTransactions(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		t.Run("commit", func(t *testing.T) {
			t.Parallel()
			_, _, c := tapped(t, m, queentest.WithManualClock())
			push(t, c, "in", "", 1)
			msgs, err := c.Queue("in").Pop(testutil.Context(t))
			require.NoError(t, err)
			require.Len(t, msgs, 1)
			_, err = c.Transaction().Ack(msgs[0], queen.StatusCompleted).
				Push("out", queen.PushItem{Data: 2}).PushTo("out", "p2", queen.PushItem{Data: 3}).Commit(testutil.Context(t))
			require.NoError(t, err)
			out, err := c.Queue("out").Batch(10).Pop(testutil.Context(t))
			require.NoError(t, err)
			assert.Len(t, out, 1)
			out, err = c.Queue("out").Partition("p2").Pop(testutil.Context(t))
			require.NoError(t, err)
			assert.Len(t, out, 1)
			assert.ErrorIs(t, msgs[0].Ack(testutil.Context(t)), queen.ErrAlreadySettled, "the transaction settled it")
		})
		t.Run("rollback", func(t *testing.T) {
			t.Parallel()
			srv, _, c := tapped(t, m, queentest.WithManualClock())
			push(t, c, "in", "", 1)
			msgs, err := c.Queue("in").LeaseTime(time.Second).Pop(testutil.Context(t))
			require.NoError(t, err)
			require.Len(t, msgs, 1)
			tx := c.Transaction()
			if m.V015 { // 0.15 fails a transaction holding a retry
				tx.Ack(msgs[0], queen.StatusRetry)
			} else { // 2.0 fails one whose lease has ended
				srv.Advance(time.Hour)
				tx.Ack(msgs[0], queen.StatusCompleted)
			}
			_, err = tx.Push("out", queen.PushItem{Data: 2}).Commit(testutil.Context(t))
			require.ErrorIs(t, err, queen.ErrTransactionFailed)
			assert.NotErrorIs(t, err, queen.ErrOutcomeUnknown)
			out, err := c.Queue("out").Pop(testutil.Context(t))
			require.NoError(t, err)
			assert.Empty(t, out, "nothing of a rolled back transaction is applied")
		})
		t.Run("lost answer", func(t *testing.T) {
			t.Parallel()
			srv, _, c := tapped(t, m, queentest.WithManualClock())
			push(t, c, "in", "", 1)
			msgs, err := c.Queue("in").Pop(testutil.Context(t))
			require.NoError(t, err)
			require.Len(t, msgs, 1)
			srv.Fail(queentest.Fault{Route: "transaction", After: true})
			_, err = c.Transaction().Ack(msgs[0], queen.StatusCompleted).Push("out", queen.PushItem{Data: 2}).Commit(testutil.Context(t))
			require.ErrorIs(t, err, queen.ErrOutcomeUnknown)
			assert.NotErrorIs(t, err, queen.ErrTransactionFailed)
			out, err := c.Queue("out").Pop(testutil.Context(t))
			require.NoError(t, err)
			assert.Len(t, out, 1, "the broker applied it")
		})
		t.Run("lost answer 503", func(t *testing.T) {
			t.Parallel()
			srv, _, c := tapped(t, m, queentest.WithManualClock())
			push(t, c, "in", "", 1)
			msgs, err := c.Queue("in").Pop(testutil.Context(t))
			require.NoError(t, err)
			require.Len(t, msgs, 1)
			srv.Fail(queentest.Fault{Route: "transaction", After: true, Status: 503})
			_, err = c.Transaction().Ack(msgs[0], queen.StatusCompleted).Push("out", queen.PushItem{Data: 2}).Commit(testutil.Context(t))
			assert.NotErrorIs(t, err, queen.ErrTransactionFailed, "a transaction that may have been applied is not reported rolled back")
			if err == nil {
				return // a retry found it applied and said so: fine
			}
			assert.ErrorIs(t, err, queen.ErrOutcomeUnknown)
		})
	})
}

func TestIntegrationTransactionCommitAndRollback_R126_R127(t *testing.T) {
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

// H1: a 0.15 transaction answer (no status on push entries, no offset).
func TestWire015TransactionCapture_H1(t *testing.T) {
	t.Parallel()
	cp := loadCaptures(t, "tx")[0]
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
