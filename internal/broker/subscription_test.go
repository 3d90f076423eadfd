package broker

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// R102–R109: a group's first pop decides its start; later pops change nothing.
func TestSubscriptionStarts_R102_R103_R104_R105_R107_R108_R109(t *testing.T) {
	t.Parallel()
	at := func(d time.Duration) *time.Time { v := epoch.Add(d); return &v }
	tests := []struct {
		name  string
		first PopRequest
		want  []string // after "late" is pushed
	}{
		{"default is new (R103, R109)", PopRequest{}, []string{"late"}},
		{"new", PopRequest{SubscriptionMode: "new"}, []string{"late"}},
		{"all (R104)", PopRequest{SubscriptionMode: "all"}, []string{"a", "b", "c", "late"}},
		{"from a time (R105)", PopRequest{SubscriptionFrom: at(time.Minute)}, []string{"b", "c", "late"}},
		{"from beats mode (R105)", PopRequest{SubscriptionMode: "all", SubscriptionFrom: at(2 * time.Minute)}, []string{"c", "late"}},
		{"from=now means new (R105)", PopRequest{SubscriptionMode: "all", FromNow: true}, []string{"late"}},
		{"queue mode reads everything (R107)", PopRequest{Group: QueueMode, SubscriptionMode: "new"}, []string{"a", "b", "c", "late"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			f.push("q", "", "a")
			f.clock.Advance(time.Minute)
			f.push("q", "", "b")
			f.clock.Advance(time.Minute)
			f.push("q", "", "c")
			r := tc.first
			r.Queue, r.Batch = "q", 10
			if r.Group == "" {
				r.Group = "g"
			}
			first := f.pop(r)
			got := txIDs(first.Messages)
			if len(got) > 0 {
				f.ack(ackOf(first.Messages[0], "retry")) // give them back
			}
			// R102: a later pop with another mode changes nothing.
			f.push("q", "", "late")
			f.push("q", "other", "late") // R108: the start applies to later partitions too
			next := f.pop(PopRequest{Queue: "q", Group: r.Group, SubscriptionMode: "all", Partition: "Default", Batch: 10})
			assert.Equal(t, tc.want, txIDs(next.Messages))
			later := f.pop(PopRequest{Queue: "q", Group: r.Group, Partition: "other"})
			assert.Equal(t, []string{"late"}, txIDs(later.Messages))
		})
	}
}

// R45, R102, R103: a first pop on a queue not created yet decides the group's start, which the
// queue adopts once a push creates it; a new start counts from that pop's arrival.
func TestStartDecidedOnlyOnceQueueExists_R45_R102(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// g's first pop, before q exists, decides "all"; the later "new" pop changes nothing.
	assert.Empty(t, f.pop(PopRequest{Queue: "q", Group: "g", SubscriptionMode: "all"}).Messages)
	// h's first pop decides "new" as of its arrival, which is before the push below (R103).
	assert.Empty(t, f.pop(PopRequest{Queue: "q", Group: "h"}).Messages)
	// c's first pop makes it conflating there, so autoAck is refused before q exists (R37).
	assert.True(t, f.pop(PopRequest{Queue: "q", Group: "c", Conflation: true}).ConflatingEmpty)
	_, err := f.e.Pop(context.Background(), PopRequest{Queue: "q", Group: "c", AutoAck: true})
	var bad *BadRequest
	require.ErrorAs(t, err, &bad)
	require.ErrorIs(t, f.e.DeleteQueue("q"), ErrQueueNotFound, "a pop creates no queue (R45)")

	f.push("q", "", "a")
	assert.Equal(t, []string{"a"}, txIDs(f.pop(PopRequest{Queue: "q", Group: "g", SubscriptionMode: "new"}).Messages))
	assert.Equal(t, []string{"a"}, txIDs(f.pop(PopRequest{Queue: "q", Group: "h"}).Messages))
	f.push("q", "", "b")
	assert.Equal(t, []string{"b"}, txIDs(f.pop(PopRequest{Queue: "q", Group: "c", Batch: 5}).Messages))
	// A group first seen after the push starts new as of its own first pop.
	assert.Empty(t, f.pop(PopRequest{Queue: "q", Group: "late"}).Messages)
}

// R36: a conflating group gets only the newest message per partition, stored on its first pop.
func TestConflation_R36_R102(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("q", "p1", "a1", "a2", "a3")
	f.push("q", "p2", "b1", "b2")
	res := f.pop(PopRequest{Queue: "q", Group: "g", SubscriptionMode: "all", Conflation: true, Partitions: 2, Batch: 10})
	assert.Equal(t, []string{"a3", "b2"}, txIDs(res.Messages))
	assert.Equal(t, 2, res.PartitionsClaimed)
	// retry redelivers the newest available then.
	f.push("q", "p1", "a4")
	for _, m := range res.Messages {
		f.ack(ackOf(m, "retry"))
	}
	res = f.pop(PopRequest{Queue: "q", Group: "g", Partitions: 2, Batch: 1})
	assert.Equal(t, []string{"a4"}, txIDs(res.Messages), "batch still caps the total")
	f.ack(ackOf(res.Messages[0], "completed"))
	res = f.pop(PopRequest{Queue: "q", Group: "g", Partitions: 2, Batch: 10})
	assert.Equal(t, []string{"b2"}, txIDs(res.Messages))
	assert.Equal(t, []int{2}, attempts(res.Messages))
	f.ack(ackOf(res.Messages[0], "completed"))

	empty := f.pop(PopRequest{Queue: "q", Group: "g"})
	assert.Empty(t, empty.Messages)
	assert.True(t, empty.ConflatingEmpty, "an empty conflating pop answers 200 {messages:[]}")
	plain := f.pop(PopRequest{Queue: "q", Group: "other", SubscriptionMode: "all", Partitions: 2, Batch: 10})
	assert.Len(t, plain.Messages, 6, "another group is not conflating")
	assert.False(t, f.pop(PopRequest{Queue: "q", Group: "other"}).ConflatingEmpty)
}

// R37: the conflation refusals, and a refused pop decides nothing.
func TestConflationRefusals_R37_R102(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("q", "", "a")
	_, err := f.e.Pop(context.Background(), PopRequest{Queue: "q", Conflation: true})
	var bad *BadRequest
	require.ErrorAs(t, err, &bad)
	_, err = f.e.Pop(context.Background(), PopRequest{Queue: "q", Group: "g", Conflation: true, AutoAck: true})
	require.ErrorAs(t, err, &bad)
	f.pop(PopRequest{Queue: "q", Group: "c", Conflation: true})
	_, err = f.e.Pop(context.Background(), PopRequest{Queue: "q", Group: "c", AutoAck: true})
	require.ErrorAs(t, err, &bad)
	// g was refused, so its first real pop still decides: all.
	res := f.pop(PopRequest{Queue: "q", Group: "g", SubscriptionMode: "all"})
	assert.Equal(t, []string{"a"}, txIDs(res.Messages))
}

// R38, R121, R57: autoAck hands out without a lease, moves the cursor and counts the delivery.
func TestAutoAck_R38_R121_R57(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("q", "", "a", "b", "c")
	res := f.pop(PopRequest{Queue: "q", AutoAck: true, Batch: 2})
	assert.Equal(t, []string{"a", "b"}, txIDs(res.Messages))
	assert.Empty(t, res.LeaseID)
	assert.Empty(t, res.Messages[0].LeaseID)
	out := f.ack(ackOf(res.Messages[0], "failed"))
	assert.True(t, out[0].Success, "a later ack finds it done (R68)")
	assert.False(t, out[0].DLQ)
	next := f.pop(PopRequest{Queue: "q", Batch: 5})
	assert.Equal(t, []string{"c"}, txIDs(next.Messages))
	_, err := f.e.Seek(QueueMode, "q", false, epoch.Add(-time.Hour))
	require.NoError(t, err)
	back := f.pop(PopRequest{Queue: "q", Batch: 5})
	assert.Equal(t, []int{2, 2, 2}, attempts(back.Messages), "autoAck deliveries count (R57)")
}
