package broker

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Acks and pushes apply together; results in request order.
func TestTransactionCommits(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("in", "", "a", "b")
	f.push("out", "", "dup")
	res := f.pop(PopRequest{Queue: "in", Batch: 2})
	tx := f.e.Transaction([]TxOp{
		{Type: "ack", Ack: ackOf(res.Messages[0], "completed")},
		{Type: "push", Push: []PushItem{{Queue: "out", TransactionID: "n1"}, {Queue: "out", TransactionID: "dup"}}},
		{Type: "ack", Ack: ackOf(res.Messages[1], "completed")},
	})
	require.True(t, tx.Success, tx.Error)
	assert.NotEmpty(t, tx.TransactionID)
	require.Len(t, tx.Results, 4)
	for i, r := range tx.Results {
		assert.Equal(t, i, r.Index)
		assert.True(t, r.Success)
	}
	assert.Equal(t, "ack", tx.Results[0].Type)
	assert.Equal(t, res.PartitionID, tx.Results[0].PartitionID)
	assert.Equal(t, "push", tx.Results[1].Type)
	assert.Equal(t, "queued", tx.Results[1].Status)
	assert.Equal(t, int64(1), tx.Results[1].Offset)
	assert.Equal(t, "out", tx.Results[1].QueueName)
	assert.NotEmpty(t, tx.Results[1].MessageID)
	assert.Equal(t, "duplicate", tx.Results[2].Status, "a duplicate push does not fail the transaction")
	assert.True(t, tx.Results[3].LeaseReleased)
	assert.Empty(t, f.pop(PopRequest{Queue: "in"}).Messages)
}

// A refused ack or an unknown type rolls everything back.
func TestTransactionRollsBack(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ops  func(res PopResult) []TxOp
		want string
	}{
		{"refused ack", func(res PopResult) []TxOp {
			return []TxOp{
				{Type: "push", Push: []PushItem{{Queue: "new-queue"}}},
				{Type: "ack", Ack: ackOf(res.Messages[0], "completed")},
				{Type: "ack", Ack: AckItem{TransactionID: "zz", PartitionID: res.PartitionID}},
			}
		}, "operation 2: Message not found"},
		{"stale lease", func(res PopResult) []TxOp {
			a := ackOf(res.Messages[0], "completed")
			a.LeaseID = "stale"
			return []TxOp{{Type: "ack", Ack: ackOf(res.Messages[1], "failed")}, {Type: "ack", Ack: a}}
		}, "operation 1: Invalid or expired lease"},
		{"unknown type", func(res PopResult) []TxOp {
			return []TxOp{{Type: "ack", Ack: ackOf(res.Messages[0], "completed")}, {Type: "delete"}}
		}, `operation 1: unknown operation type "delete"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			f.push("in", "", "a", "b")
			res := f.pop(PopRequest{Queue: "in", Batch: 2})
			tx := f.e.Transaction(tc.ops(res))
			assert.False(t, tx.Success)
			assert.Equal(t, tc.want, tx.Error)
			assert.Empty(t, tx.Results)
			assert.NotNil(t, tx.Results)
			f.e.mu.Lock()
			_, created := f.e.queues["new-queue"]
			gc := f.e.partitions[res.PartitionID].groups[QueueMode]
			assert.False(t, created, "no queue created")
			assert.Equal(t, int64(-1), gc.cursor)
			assert.Equal(t, 0, gc.retries)
			assert.NotNil(t, gc.lease)
			f.e.mu.Unlock()
		})
	}
}

// Transaction acks behave like one batch ack: failed spends the budget once, retry works,
// each op names its own group.
func TestTransactionAcksAreABatch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("q", "", "a", "b")
	g := f.pop(PopRequest{Queue: "q", Group: "g", SubscriptionMode: "all", Batch: 2})
	h := f.pop(PopRequest{Queue: "q", Group: "h", SubscriptionMode: "all", Batch: 2})
	tx := f.e.Transaction([]TxOp{
		{Type: "ack", Ack: ackOf(g.Messages[1], "failed")},
		{Type: "ack", Ack: ackOf(g.Messages[0], "failed")},
		{Type: "ack", Ack: ackOf(h.Messages[0], "retry")},
	})
	require.True(t, tx.Success, tx.Error)
	p := f.e.partitions[g.PartitionID]
	assert.Equal(t, 1, p.groups["g"].retries)
	assert.Equal(t, int64(0), p.groups["g"].retryOff)
	assert.Equal(t, 0, p.groups["h"].retries)
	assert.True(t, tx.Results[1].LeaseReleased)
	assert.False(t, tx.Results[0].LeaseReleased)
	assert.Equal(t, []int{2, 2}, attempts(f.pop(PopRequest{Queue: "q", Group: "h", Batch: 2}).Messages))
}
