package broker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each refusal of an ack item, in check order, with its exact text; a refused item changes
// nothing.
func TestAckCheckOrder(t *testing.T) {
	t.Parallel()
	type setup struct {
		f      *fixture
		held   PopResult // leased: a, b of q/Default (group g)
		pid    string
		otherQ PopResult // an unrelated live lease on queue r
	}
	prepare := func(t *testing.T) setup {
		f := newFixture(t)
		pushed := f.push("q", "", "a", "b", "c", "d")
		f.push("r", "", "x")
		held := f.pop(PopRequest{Queue: "q", Group: "g", Batch: 2, SubscriptionMode: "all"})
		other := f.pop(PopRequest{Queue: "r", Group: "g", SubscriptionMode: "all"})
		return setup{f: f, held: held, pid: pushed[0].PartitionID, otherQ: other}
	}
	tests := []struct {
		name    string
		item    func(s setup) AckItem
		want    string // "" for success
		applied bool
	}{
		{"missing transactionId", func(s setup) AckItem {
			return AckItem{PartitionID: s.pid, Status: "bogus", Group: "g"}
		}, "transactionId is required", false},
		{"missing partitionId", func(s setup) AckItem {
			return AckItem{TransactionID: "a", Status: "bogus", Group: "g"}
		}, "partitionId is required", false},
		{"invalid status before lookup", func(s setup) AckItem {
			return AckItem{TransactionID: "zz", PartitionID: "nope", Status: "done", Group: "g"}
		}, "Invalid status", false},
		{"unknown partition", func(s setup) AckItem {
			return AckItem{TransactionID: "a", PartitionID: "nope", Group: "g"}
		}, "Message not found", false},
		{"unknown transactionId", func(s setup) AckItem {
			return AckItem{TransactionID: "zz", PartitionID: s.pid, LeaseID: "bogus", Group: "g"}
		}, "Message not found", false},
		{"foreign lease before cursor check", func(s setup) AckItem {
			return AckItem{TransactionID: "a", PartitionID: s.pid, LeaseID: s.otherQ.LeaseID, Group: "g"}
		}, "Invalid or expired lease", false},
		{"another group's lease", func(s setup) AckItem {
			return AckItem{TransactionID: "a", PartitionID: s.pid, LeaseID: s.held.LeaseID, Group: "h"}
		}, "Invalid or expired lease", false},
		{"outside the leased batch", func(s setup) AckItem {
			return AckItem{TransactionID: "c", PartitionID: s.pid, LeaseID: s.held.LeaseID, Group: "g"}
		}, "message not in leased batch", false},
		{"unfenced, outside the live batch", func(s setup) AckItem {
			return AckItem{TransactionID: "d", PartitionID: s.pid, Group: "g"}
		}, "message not in leased batch", false},
		{"never delivered to the group", func(s setup) AckItem {
			return AckItem{TransactionID: "a", PartitionID: s.pid, Group: "never"}
		}, "message not delivered to this group", false},
		{"fenced completed", func(s setup) AckItem {
			return AckItem{TransactionID: "a", PartitionID: s.pid, LeaseID: s.held.LeaseID, Group: "g"}
		}, "", true},
		{"unfenced within the live batch", func(s setup) AckItem {
			return AckItem{TransactionID: "a", PartitionID: s.pid, Group: "g", Status: "success"}
		}, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := prepare(t)
			out := s.f.ack(tc.item(s))
			require.Len(t, out, 1)
			assert.Equal(t, 0, out[0].Index)
			if tc.want == "" {
				assert.True(t, out[0].Success, out[0].Error)
				assert.Empty(t, out[0].Error)
			} else {
				assert.False(t, out[0].Success)
				assert.Equal(t, tc.want, out[0].Error)
			}
			gc := s.f.e.partitions[s.pid].groups["g"]
			if tc.applied {
				assert.Equal(t, int64(0), gc.cursor)
			} else {
				assert.Equal(t, int64(-1), gc.cursor, "a refused item changes nothing")
				assert.NotNil(t, gc.lease)
			}
		})
	}
}

// An ack at or below the cursor succeeds and changes nothing; the same ack repeated
// with its ended lease is refused.
func TestAckAtOrBelowCursor(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("q", "", "a", "b", "c")
	res := f.pop(PopRequest{Queue: "q", Batch: 3})
	out := f.ack(ackOf(res.Messages[1], "completed"))
	require.True(t, out[0].Success)
	assert.False(t, out[0].LeaseReleased)

	// Unfenced ack of a done message: success, nothing moves.
	a := ackOf(res.Messages[0], "failed")
	a.LeaseID = ""
	out = f.ack(a)
	assert.True(t, out[0].Success)
	assert.False(t, out[0].LeaseReleased)

	out = f.ack(ackOf(res.Messages[2], "completed"))
	require.True(t, out[0].Success)
	assert.True(t, out[0].LeaseReleased)
	out = f.ack(ackOf(res.Messages[2], "completed"))
	assert.False(t, out[0].Success)
	assert.Equal(t, "Invalid or expired lease", out[0].Error)
	assert.Empty(t, f.pop(PopRequest{Queue: "q"}).Messages, "repeated acks never redeliver")
}

// Batch items apply per (partition, group) from the lowest offset up; the lowest
// failed-with-retries-left or retry stops the rest, which succeed unapplied.
func TestBatchAckStopsAtLowestFailed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		statuses    map[string]string // by transactionId; items sent in reverse order
		wantNext    []string          // what the next pop gets
		wantRetries int
		wantRelease string // which item reports leaseReleased
	}{
		{"all completed", map[string]string{"a": "completed", "b": "completed", "c": "completed", "d": "completed"},
			[]string{"e"}, 0, "d"},
		{"failed in the middle", map[string]string{"a": "completed", "b": "failed", "c": "completed", "d": "completed"},
			[]string{"b", "c", "d", "e"}, 1, "b"},
		{"retry in the middle spends nothing", map[string]string{"a": "completed", "b": "retry", "c": "failed", "d": "completed"},
			[]string{"b", "c", "d", "e"}, 0, "b"},
		{"two failures spend one retry", map[string]string{"a": "failed", "b": "failed", "c": "completed", "d": "completed"},
			[]string{"a", "b", "c", "d", "e"}, 1, "a"},
		{"dlq then completed runs through", map[string]string{"a": "completed", "b": "dlq", "c": "completed", "d": "completed"},
			[]string{"e"}, 0, "d"},
		{"only the last acked ends it", map[string]string{"d": "completed"},
			[]string{"e"}, 0, "d"},
		{"partial leaves the lease", map[string]string{"a": "completed", "b": "completed"},
			nil, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			f.push("q", "", "a", "b", "c", "d", "e")
			res := f.pop(PopRequest{Queue: "q", Batch: 4})
			var items []AckItem
			for i := len(res.Messages) - 1; i >= 0; i-- {
				m := res.Messages[i]
				if st, ok := tc.statuses[m.TransactionID]; ok {
					items = append(items, ackOf(m, st))
				}
			}
			out := f.ack(items...)
			require.Len(t, out, len(items))
			released := ""
			for i, r := range out {
				assert.Equal(t, i, r.Index)
				assert.Equal(t, items[i].TransactionID, r.TransactionID, "results in array order")
				assert.True(t, r.Success, "%s: %s", r.TransactionID, r.Error)
				if r.LeaseReleased {
					assert.Empty(t, released, "one item reports the release")
					released = r.TransactionID
				}
			}
			assert.Equal(t, tc.wantRelease, released)
			next := f.pop(PopRequest{Queue: "q", Batch: 10})
			assert.Equal(t, tc.wantNext, nilIfEmpty(txIDs(next.Messages)))
			gc := f.e.partitions[res.PartitionID].groups[QueueMode]
			assert.Equal(t, tc.wantRetries, gc.retries)
		})
	}
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// A refused item does not stop the others.
func TestBatchAckRefusalIsLocal(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("q", "", "a", "b")
	res := f.pop(PopRequest{Queue: "q", Batch: 2})
	out := f.ack(
		AckItem{TransactionID: "a", PartitionID: "unknown"},
		ackOf(res.Messages[0], "completed"),
		AckItem{PartitionID: res.PartitionID},
		ackOf(res.Messages[1], "completed"),
	)
	assert.Equal(t, "Message not found", out[0].Error)
	assert.Empty(t, out[0].QueueName, "no partition, no names")
	assert.True(t, out[1].Success)
	assert.Equal(t, "transactionId is required", out[2].Error)
	assert.True(t, out[3].Success)
	assert.True(t, out[3].LeaseReleased)
	assert.Empty(t, f.e.Ack(nil), "an empty batch answers []")
}

// Failed with retries left and retry end the lease at once and redeliver from the
// cursor with deliveryAttempt one higher.
func TestFailedAndRetryRedeliver(t *testing.T) {
	t.Parallel()
	for _, status := range []string{"failed", "retry"} {
		t.Run(status, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			f.push("q", "", "a", "b", "c")
			res := f.pop(PopRequest{Queue: "q", Batch: 2})
			out := f.ack(ackOf(res.Messages[1], status))
			require.True(t, out[0].Success)
			assert.True(t, out[0].LeaseReleased)
			again := f.pop(PopRequest{Queue: "q", Batch: 3})
			assert.Equal(t, []string{"a", "b", "c"}, txIDs(again.Messages))
			assert.Equal(t, []int{2, 2, 1}, attempts(again.Messages))
		})
	}
}

// An unfenced ack from a worker whose lease expired completes the batch of the lease live
// now, whose own fenced acks are then refused.
func TestUnfencedAckCompletesLiveBatch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("q", "", "a", "b")
	first := f.pop(PopRequest{Queue: "q", Batch: 2, LeaseSeconds: 5})
	f.clock.Advance(5 * time.Second)
	second := f.pop(PopRequest{Queue: "q", Batch: 2})
	require.Equal(t, []int{2, 2}, attempts(second.Messages))
	late := ackOf(first.Messages[1], "completed")
	late.LeaseID = ""
	out := f.ack(late)
	require.True(t, out[0].Success)
	assert.True(t, out[0].LeaseReleased)
	out = f.ack(ackOf(second.Messages[0], "completed"))
	assert.Equal(t, "Invalid or expired lease", out[0].Error)
}

// Groups have their own cursors and counts; one group's lease does not block another.
func TestGroupsAreIndependent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("q", "", "a", "b")
	g1 := f.pop(PopRequest{Queue: "q", Group: "g1", SubscriptionMode: "all", Batch: 2})
	g2 := f.pop(PopRequest{Queue: "q", Group: "g2", SubscriptionMode: "all", Batch: 1})
	assert.Equal(t, []string{"a", "b"}, txIDs(g1.Messages))
	assert.Equal(t, []string{"a"}, txIDs(g2.Messages))
	assert.Equal(t, []int{1}, attempts(g2.Messages))
	f.ack(ackOf(g1.Messages[1], "completed"))
	f.ack(ackOf(g2.Messages[0], "retry"))
	again := f.pop(PopRequest{Queue: "q", Group: "g2", Batch: 2})
	assert.Equal(t, []string{"a", "b"}, txIDs(again.Messages))
	assert.Equal(t, []int{2, 1}, attempts(again.Messages))
}

// An unfenced ack after expiry applies to a delivered message; one for a
// message never delivered to the group is refused; no group means queue mode.
func TestUnfencedAckWithoutLiveLease(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("q", "", "a", "b", "c")
	res := f.pop(PopRequest{Queue: "q", Batch: 2, LeaseSeconds: 5})
	f.clock.Advance(5 * time.Second)
	out := f.ack(AckItem{TransactionID: "c", PartitionID: res.PartitionID})
	assert.Equal(t, "message not delivered to this group", out[0].Error)
	out = f.ack(AckItem{TransactionID: "b", PartitionID: res.PartitionID, Status: "completed"})
	require.True(t, out[0].Success, out[0].Error)
	assert.False(t, out[0].LeaseReleased, "no lease to release")
	assert.Equal(t, []string{"c"}, txIDs(f.pop(PopRequest{Queue: "q", Batch: 5}).Messages))
}
