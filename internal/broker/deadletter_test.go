package broker

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// failUntilFiled pops and fails the queue's first message until it is filed; it returns the
// deliveryAttempt of each delivery.
func failUntilFiled(t *testing.T, f *fixture, queue, group, errMsg string) []int {
	t.Helper()
	var seen []int
	for range 10 {
		res := f.pop(PopRequest{Queue: queue, Group: group, SubscriptionMode: "all"})
		require.Len(t, res.Messages, 1)
		seen = append(seen, res.Messages[0].DeliveryAttempt)
		a := ackOf(res.Messages[0], "failed")
		a.Error = errMsg
		out := f.ack(a)
		require.True(t, out[0].Success)
		if out[0].DLQ {
			return seen
		}
	}
	t.Fatal("never filed")
	return nil
}

// RetryLimit N delivers N+1 times, then files with retryCount N.
func TestRetryBudgetThenDeadLetter(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{0, 1, 3} {
		t.Run(fmt.Sprintf("retryLimit=%d", limit), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			f.e.Configure(ConfigureRequest{Queue: "q", RetryLimit: &limit})
			pushed := f.push("q", "", "a", "b")
			got := failUntilFiled(t, f, "q", "", "")
			want := make([]int, limit+1)
			for i := range want {
				want[i] = i + 1
			}
			assert.Equal(t, want, got)
			list, total := f.e.DeadLetters(DLQQuery{})
			require.Equal(t, 1, total)
			d := list[0]
			assert.NotEqual(t, pushed[0].MessageID, d.ID, "a dead letter has its own id")
			assert.Equal(t, pushed[0].MessageID, d.MessageID)
			assert.Equal(t, "a", d.TransactionID)
			assert.Equal(t, limit, d.RetryCount)
			assert.Equal(t, "Retries exhausted", d.ErrorMessage)
			assert.Equal(t, QueueMode, d.ConsumerGroup)
			assert.Equal(t, "q", d.Queue)
			assert.Equal(t, "Default", d.Partition)
			assert.JSONEq(t, `{"tx":"a"}`, string(d.Data))
			// The cursor moved to the filed message and the next starts with a full budget.
			next := f.pop(PopRequest{Queue: "q"})
			assert.Equal(t, []string{"b"}, txIDs(next.Messages))
			assert.Equal(t, 0, f.e.partitions[pushed[0].PartitionID].groups[QueueMode].retries)
		})
	}
}

// Dlq files at once with the counter value; deadLetterQueue false drops.
func TestDLQStatusAndDropping(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	off := false
	f.e.Configure(ConfigureRequest{Queue: "drop", DeadLetterQueue: &off})
	f.push("keep", "", "a")
	f.push("drop", "", "a", "b")
	res := f.pop(PopRequest{Queue: "keep"})
	a := ackOf(res.Messages[0], "dlq")
	a.Error = "bad payload"
	out := f.ack(a)
	assert.True(t, out[0].DLQ)
	assert.True(t, out[0].LeaseReleased)

	res = f.pop(PopRequest{Queue: "drop"})
	out = f.ack(ackOf(res.Messages[0], "dlq"))
	assert.True(t, out[0].Success)
	assert.False(t, out[0].DLQ)
	assert.Equal(t, []string{"b"}, txIDs(f.pop(PopRequest{Queue: "drop"}).Messages), "dropped: the cursor moved past")

	list, total := f.e.DeadLetters(DLQQuery{})
	require.Equal(t, 1, total)
	assert.Equal(t, "bad payload", list[0].ErrorMessage)
	assert.Equal(t, 0, list[0].RetryCount)
}

// The counter remembers the message that spent it and resets when the cursor passes it.
func TestRetryCounterResetsPastSpender(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	pushed := f.push("q", "", "a", "b")
	res := f.pop(PopRequest{Queue: "q", Batch: 2})
	f.ack(ackOf(res.Messages[1], "failed")) // b spends; a is still pending
	gc := f.e.partitions[pushed[0].PartitionID].groups[QueueMode]
	require.Equal(t, 1, gc.retries)
	res = f.pop(PopRequest{Queue: "q", Batch: 2})
	f.ack(ackOf(res.Messages[0], "completed")) // cursor reaches a, not b
	assert.Equal(t, 1, gc.retries)
	f.ack(ackOf(res.Messages[1], "completed"))
	assert.Equal(t, 0, gc.retries)
}

// One dead letter per (message, group), updated when filed again; other groups unaffected.
func TestDeadLetterPerMessageAndGroup(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	zero := 0
	f.e.Configure(ConfigureRequest{Queue: "q", RetryLimit: &zero})
	f.push("q", "", "a")
	failUntilFiled(t, f, "q", "g", "first")
	list, _ := f.e.DeadLetters(DLQQuery{})
	require.Len(t, list, 1)
	id := list[0].ID

	_, err := f.e.Seek("g", "q", false, epoch.Add(-time.Hour))
	require.NoError(t, err)
	f.clock.Advance(time.Minute)
	failUntilFiled(t, f, "q", "g", "second")
	list, total := f.e.DeadLetters(DLQQuery{})
	require.Equal(t, 1, total)
	assert.Equal(t, id, list[0].ID)
	assert.Equal(t, "second", list[0].ErrorMessage)
	assert.Equal(t, epoch.Add(time.Minute), list[0].FailedAt)

	other := f.pop(PopRequest{Queue: "q", Group: "h", SubscriptionMode: "all"})
	assert.Equal(t, []string{"a"}, txIDs(other.Messages))
	assert.Equal(t, []int{1}, attempts(other.Messages))
}

// Filters, order by failedAt descending then id, total before paging.
func TestDeadLetterList(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("q", "p1", "a", "b")
	f.push("q", "p2", "c")
	f.push("r", "", "d")
	file := func(queue, partition, group string) {
		res := f.pop(PopRequest{Queue: queue, Partition: partition, Group: group, SubscriptionMode: "all"})
		require.NotEmpty(t, res.Messages)
		require.True(t, f.ack(ackOf(res.Messages[0], "dlq"))[0].DLQ)
		f.clock.Advance(time.Second)
	}
	file("q", "p1", "g") // a at +0s
	file("q", "p1", "g") // b at +1s
	file("q", "p2", "h") // c at +2s
	file("r", "", "g")   // d at +3s
	tx := func(list []DeadLetter) []string {
		out := make([]string, len(list))
		for i, d := range list {
			out[i] = d.TransactionID
		}
		return out
	}
	from, to := epoch.Add(time.Second), epoch.Add(2*time.Second)
	tests := []struct {
		name  string
		q     DLQQuery
		want  []string
		total int
	}{
		{"all, newest first", DLQQuery{}, []string{"d", "c", "b", "a"}, 4},
		{"queue", DLQQuery{Queue: "q"}, []string{"c", "b", "a"}, 3},
		{"group", DLQQuery{Group: "g"}, []string{"d", "b", "a"}, 3},
		{"partition", DLQQuery{Partition: "p1"}, []string{"b", "a"}, 2},
		{"from/to inclusive", DLQQuery{From: &from, To: &to}, []string{"c", "b"}, 2},
		{"limit and offset", DLQQuery{Limit: 2, Offset: 1}, []string{"c", "b"}, 4},
		{"offset past the end", DLQQuery{Offset: 9}, []string{}, 4},
		{"unknown queue", DLQQuery{Queue: "nope"}, []string{}, 0},
	}
	for _, tc := range tests {
		list, total := f.e.DeadLetters(tc.q)
		assert.Equal(t, tc.want, tx(list), tc.name)
		assert.Equal(t, tc.total, total, tc.name)
	}
}

// Replay pushes dlq:<id> to the end of the partition for every group, once.
func TestReplayAndDelete(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	trace := "0d9b2c3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e"
	f.e.Push([]PushItem{{Queue: "q", TransactionID: "a", TraceID: trace, Payload: []byte(`{"n":1}`)}, {Queue: "q", TransactionID: "b"}})
	res := f.pop(PopRequest{Queue: "q", Group: "g", SubscriptionMode: "all"})
	f.ack(ackOf(res.Messages[0], "dlq"))
	other := f.pop(PopRequest{Queue: "q", Group: "h", SubscriptionMode: "all", Batch: 2})
	f.ack(ackOf(other.Messages[1], "completed"))
	list, _ := f.e.DeadLetters(DLQQuery{})
	require.Len(t, list, 1)
	id := list[0].ID

	rep, err := f.e.Replay(id)
	require.NoError(t, err)
	assert.Equal(t, "dlq:"+id, rep.TransactionID)
	assert.Equal(t, int64(2), rep.Offset)
	assert.Equal(t, res.PartitionID, rep.PartitionID)
	_, total := f.e.DeadLetters(DLQQuery{})
	assert.Equal(t, 0, total)
	_, err = f.e.Replay(id)
	assert.ErrorIs(t, err, ErrDeadLetterNotFound)

	for _, g := range []string{"g", "h"} {
		got := f.pop(PopRequest{Queue: "q", Group: g, Batch: 5})
		last := got.Messages[len(got.Messages)-1]
		assert.Equal(t, "dlq:"+id, last.TransactionID, g)
		assert.Equal(t, 1, last.DeliveryAttempt, g)
		assert.Equal(t, `{"n":1}`, string(last.Data))
		assert.Equal(t, trace, last.TraceID)
	}

	assert.ErrorIs(t, f.e.DeleteDeadLetter("nope"), ErrDeadLetterNotFound)
	f.push("q", "", "c")
	res = f.pop(PopRequest{Queue: "q", Group: "x", SubscriptionMode: "all"})
	f.ack(ackOf(res.Messages[0], "dlq"))
	list, _ = f.e.DeadLetters(DLQQuery{Group: "x"})
	require.Len(t, list, 1)
	require.NoError(t, f.e.DeleteDeadLetter(list[0].ID))
	assert.ErrorIs(t, f.e.DeleteDeadLetter(list[0].ID), ErrDeadLetterNotFound)
	_, err = f.e.Replay(list[0].ID)
	assert.ErrorIs(t, err, ErrDeadLetterNotFound)
}

// A replay whose copy already exists stores nothing new but still removes the dead letter.
func TestReplayOfExistingCopy(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("q", "", "a")
	res := f.pop(PopRequest{Queue: "q"})
	f.ack(ackOf(res.Messages[0], "dlq"))
	list, _ := f.e.DeadLetters(DLQQuery{})
	id := list[0].ID
	pre := f.push("q", "", "dlq:"+id)
	rep, err := f.e.Replay(id)
	require.NoError(t, err)
	assert.Equal(t, pre[0].Offset, rep.Offset)
	_, total := f.e.DeadLetters(DLQQuery{})
	assert.Equal(t, 0, total)
	assert.Len(t, f.e.partitions[res.PartitionID].msgs, 2)
}

// A huge limit with an offset pages without overflowing.
func TestDeadLettersHugeLimitWithOffset(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	zero := 0
	f.e.Configure(ConfigureRequest{Queue: "q", RetryLimit: &zero})
	f.push("q", "", "a", "b")
	failUntilFiled(t, f, "q", "g", "bad")
	failUntilFiled(t, f, "q", "g", "bad")
	list, total := f.e.DeadLetters(DLQQuery{Queue: "q", Limit: math.MaxInt, Offset: 1})
	require.Equal(t, 2, total)
	require.Len(t, list, 1)
}
