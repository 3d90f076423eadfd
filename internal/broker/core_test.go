package broker

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Push creates queues and partitions, numbers offsets, dedups.
func TestPushCreatesAndNumbers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	res := f.e.Push([]PushItem{
		{Queue: "q", TransactionID: "a"},
		{Queue: "q", TransactionID: "b"},
		{Queue: "q", TransactionID: "a"},                  // duplicate within one push
		{Queue: "q", Partition: "p2", TransactionID: "a"}, // another partition
		{Queue: "q"}, // generated transactionId
	})
	require.Len(t, res, 5)
	for i, r := range res {
		assert.Equal(t, i, r.Index)
		assert.Equal(t, "q", r.QueueName)
	}
	assert.Equal(t, []string{"queued", "queued", "duplicate", "queued", "queued"},
		[]string{res[0].Status, res[1].Status, res[2].Status, res[3].Status, res[4].Status})
	assert.Equal(t, int64(0), res[0].Offset)
	assert.Equal(t, int64(1), res[1].Offset)
	assert.Equal(t, res[0].MessageID, res[2].MessageID)
	assert.Equal(t, res[0].PartitionID, res[2].PartitionID)
	assert.Equal(t, int64(0), res[2].Offset)
	assert.NotEqual(t, res[0].PartitionID, res[3].PartitionID)
	assert.Equal(t, int64(0), res[3].Offset)
	assert.Equal(t, int64(2), res[4].Offset, "a duplicate consumes no offset")
	assert.NotEmpty(t, res[4].TransactionID)

	again := f.push("q", "", "b")
	assert.Equal(t, "duplicate", again[0].Status)
	assert.Equal(t, int64(1), again[0].Offset)
	assert.Empty(t, f.e.Push(nil))
}

// An absent payload is stored as {}; data comes back unchanged.
func TestPayloadStoredUnchanged(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.e.Push([]PushItem{{Queue: "q", TransactionID: "none"}, {Queue: "q", TransactionID: "arr", Payload: []byte(`[1, 2]`)}})
	res := f.pop(PopRequest{Queue: "q", Batch: 10})
	require.Len(t, res.Messages, 2)
	assert.JSONEq(t, `{}`, string(res.Messages[0].Data))
	assert.Equal(t, `[1, 2]`, string(res.Messages[1].Data))
}

// A queue-mode pop leases a contiguous run in order.
func TestPopLeasesInOffsetOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	pushed := f.push("q", "", "a", "b", "c")
	res := f.pop(PopRequest{Queue: "q", Batch: 2})
	require.Len(t, res.Messages, 2)
	assert.Equal(t, []string{"a", "b"}, txIDs(res.Messages))
	assert.Equal(t, []int64{0, 1}, offsets(res.Messages))
	assert.Equal(t, []int{1, 1}, attempts(res.Messages))
	assert.NotEmpty(t, res.LeaseID)
	assert.Equal(t, QueueMode, res.ConsumerGroup)
	assert.Equal(t, "q", res.Queue)
	assert.Equal(t, "Default", res.Partition)
	assert.Equal(t, pushed[0].PartitionID, res.PartitionID)
	assert.Equal(t, 1, res.PartitionsClaimed)
	m := res.Messages[0]
	assert.Equal(t, pushed[0].MessageID, m.ID)
	assert.Equal(t, res.LeaseID, m.LeaseID)
	assert.Equal(t, QueueMode, m.ConsumerGroup)
	assert.Equal(t, epoch, m.CreatedAt)

	// The partition is leased, so the group gets nothing more.
	assert.Empty(t, f.pop(PopRequest{Queue: "q"}).Messages)
	// Naming __QUEUE_MODE__ is the same group.
	assert.Empty(t, f.pop(PopRequest{Queue: "q", Group: QueueMode}).Messages)
}

// Unknown queues and partitions answer empty and create nothing.
func TestPopUnknownQueueCreatesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	assert.Empty(t, f.pop(PopRequest{Queue: "nope"}).Messages)
	f.push("q", "", "a")
	assert.Empty(t, f.pop(PopRequest{Queue: "q", Partition: "nope"}).Messages)
	assert.ErrorIs(t, f.e.DeleteQueue("nope"), ErrQueueNotFound)
	f.e.mu.Lock()
	defer f.e.mu.Unlock()
	assert.Len(t, f.e.queues, 1)
	assert.Len(t, f.e.queues["q"].parts, 1)
}

// A completed ack on the last message ends the lease at once.
func TestCompletedOnLastEndsLease(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("q", "", "a", "b", "c")
	res := f.pop(PopRequest{Queue: "q", Batch: 2})
	out := f.ack(ackOf(res.Messages[1], "completed"))
	require.True(t, out[0].Success, out[0].Error)
	assert.True(t, out[0].LeaseReleased)
	assert.Equal(t, "q", out[0].QueueName)
	assert.Equal(t, "Default", out[0].PartitionName)
	next := f.pop(PopRequest{Queue: "q", Batch: 5})
	assert.Equal(t, []string{"c"}, txIDs(next.Messages))
}

// An expired lease frees the partition and redelivers with deliveryAttempt+1.
func TestLeaseExpiryRedelivers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("q", "", "a", "b")
	res := f.pop(PopRequest{Queue: "q", Batch: 2, LeaseSeconds: 10})
	assert.Empty(t, f.pop(PopRequest{Queue: "q"}).Messages)
	f.clock.Advance(9 * time.Second)
	assert.Empty(t, f.pop(PopRequest{Queue: "q"}).Messages)
	f.clock.Advance(time.Second)
	again := f.pop(PopRequest{Queue: "q", Batch: 2})
	assert.Equal(t, []string{"a", "b"}, txIDs(again.Messages))
	assert.Equal(t, []int{2, 2}, attempts(again.Messages))
	assert.NotEqual(t, res.LeaseID, again.LeaseID)
	// The old lease is refused now.
	out := f.ack(ackOf(res.Messages[0], "completed"))
	assert.Equal(t, "Invalid or expired lease", out[0].Error)
	// And cannot be extended.
	ext := f.e.Extend(res.LeaseID, 30)
	assert.False(t, ext.Success)
	assert.Equal(t, "Lease already expired", ext.Error)
}

// Without batch or autopilot a pop takes one message.
func TestBatchDefaultsToOne(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("q", "", "a", "b")
	assert.Equal(t, []string{"a"}, txIDs(f.pop(PopRequest{Queue: "q"}).Messages))
}

// CreatedAt never decreases with offset, even if the clock steps back.
func TestCreatedAtNeverDecreases(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("q", "", "a")
	f.clock.Advance(-time.Hour)
	f.push("q", "", "b")
	f.push("q", "other", "c")
	res := f.pop(PopRequest{Queue: "q", Partitions: 2, Batch: 3})
	require.Len(t, res.Messages, 3)
	assert.Equal(t, []string{"c", "a", "b"}, txIDs(res.Messages), "the other partition's message is older")
	assert.Equal(t, epoch.Add(-time.Hour), res.Messages[0].CreatedAt)
	assert.Equal(t, epoch, res.Messages[1].CreatedAt)
	assert.Equal(t, epoch, res.Messages[2].CreatedAt, "b keeps a's createdAt")
}

// Expiries never spend the budget, so a message that kills its worker every time
// is redelivered forever and never reaches the DLQ.
func TestExpiryNeverSpendsBudget(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	pushed := f.push("q", "", "a")
	for i := 1; i <= 10; i++ {
		res := f.pop(PopRequest{Queue: "q", LeaseSeconds: 1})
		require.Equal(t, []int{i}, attempts(res.Messages))
		f.clock.Advance(time.Second)
	}
	assert.Zero(t, f.e.partitions[pushed[0].PartitionID].groups[QueueMode].retries)
	_, total := f.e.DeadLetters(DLQQuery{})
	assert.Zero(t, total)
}

// On the real clock, a lease's own timer ends it and wakes a waiting pop.
func TestRealClockLeaseTimerWakesWaiter(t *testing.T) {
	t.Parallel()
	e := New(RealClock{})
	defer e.Close()
	parked := make(chan struct{}, 1)
	e.parked = func() { parked <- struct{}{} }
	e.Push([]PushItem{{Queue: "q", TransactionID: "a"}})
	held, err := e.Pop(context.Background(), PopRequest{Queue: "q", LeaseSeconds: 1})
	require.NoError(t, err)
	require.Len(t, held.Messages, 1)
	out := make(chan PopResult, 1)
	go func() {
		res, _ := e.Pop(context.Background(), PopRequest{Queue: "q", Wait: true, Timeout: 30 * time.Second})
		out <- res
	}()
	<-parked
	res := <-out
	assert.Equal(t, []int{2}, attempts(res.Messages))
}

// A push keeps its own copy of each payload, so the caller may reuse its buffer, and gives
// each message and each item without a transactionId an id of its own, message ids in the
// order the messages were stored.
func TestPushOwnsItsPayloadsAndIDs(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	buf := []byte(`{"n":1}{"n":2}`)
	res := f.e.Push([]PushItem{
		{Queue: "q", Payload: buf[:7]},
		{Queue: "q", Payload: buf[7:], TransactionID: "mine"},
		{Queue: "q"},
		{Queue: "q", TransactionID: "mine"}, // a duplicate within the push
	})
	copy(buf, `{"n":9}{"n":9}`)
	got := f.pop(PopRequest{Queue: "q", Batch: 10})
	require.Len(t, got.Messages, 3)
	assert.Equal(t, []string{`{"n":1}`, `{"n":2}`, `{}`},
		[]string{string(got.Messages[0].Data), string(got.Messages[1].Data), string(got.Messages[2].Data)})
	ids := map[string]bool{}
	for _, r := range res[:3] {
		assert.True(t, uuidText(r.MessageID), r.MessageID)
		assert.False(t, ids[r.MessageID], "message ids are unique")
		ids[r.MessageID] = true
	}
	assert.Less(t, res[0].MessageID, res[1].MessageID, "message ids sort as stored")
	assert.Less(t, res[1].MessageID, res[2].MessageID, "message ids sort as stored")
	assert.True(t, uuidText(res[0].TransactionID) && uuidText(res[2].TransactionID) && res[0].TransactionID != res[2].TransactionID)
	assert.Equal(t, "mine", res[1].TransactionID)
	assert.Equal(t, "duplicate", res[3].Status)
	assert.Equal(t, res[1].MessageID, res[3].MessageID)
}

func uuidText(s string) bool {
	_, err := uuid.Parse(s)
	return err == nil && len(s) == 36
}
