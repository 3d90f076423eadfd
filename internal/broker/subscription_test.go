package broker

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A group's first pop decides its start; later pops change nothing.
func TestSubscriptionStarts(t *testing.T) {
	t.Parallel()
	at := func(d time.Duration) *time.Time { v := epoch.Add(d); return &v }
	tests := []struct {
		name  string
		first PopRequest
		want  []string // after "late" is pushed
	}{
		{"default is new", PopRequest{}, []string{"late"}},
		{"new", PopRequest{SubscriptionMode: "new"}, []string{"late"}},
		{"all", PopRequest{SubscriptionMode: "all"}, []string{"a", "b", "c", "late"}},
		{"from a time", PopRequest{SubscriptionFrom: at(time.Minute)}, []string{"b", "c", "late"}},
		{"from beats mode", PopRequest{SubscriptionMode: "all", SubscriptionFrom: at(2 * time.Minute)}, []string{"c", "late"}},
		{"from=now means new", PopRequest{SubscriptionMode: "all", FromNow: true}, []string{"late"}},
		{"queue mode reads everything", PopRequest{Group: QueueMode, SubscriptionMode: "new"}, []string{"a", "b", "c", "late"}},
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
			// A later pop with another mode changes nothing.
			f.push("q", "", "late")
			f.push("q", "other", "late") // The start applies to later partitions too
			next := f.pop(PopRequest{Queue: "q", Group: r.Group, SubscriptionMode: "all", Partition: "Default", Batch: 10})
			assert.Equal(t, tc.want, txIDs(next.Messages))
			later := f.pop(PopRequest{Queue: "q", Group: r.Group, Partition: "other"})
			assert.Equal(t, []string{"late"}, txIDs(later.Messages))
		})
	}
}

// A first pop on a queue not created yet decides the group's start, which the
// queue adopts once a push creates it; a new start counts from that pop's arrival.
func TestStartDecidedOnlyOnceQueueExists(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// g's first pop, before q exists, decides "all"; the later "new" pop changes nothing.
	assert.Empty(t, f.pop(PopRequest{Queue: "q", Group: "g", SubscriptionMode: "all"}).Messages)
	// h's first pop decides "new" as of its arrival, which is before the push below.
	assert.Empty(t, f.pop(PopRequest{Queue: "q", Group: "h"}).Messages)
	// c's first pop makes it conflating there, so autoAck is refused before q exists.
	assert.True(t, f.pop(PopRequest{Queue: "q", Group: "c", Conflation: true}).ConflatingEmpty)
	_, err := f.e.Pop(context.Background(), PopRequest{Queue: "q", Group: "c", AutoAck: true})
	var bad *BadRequest
	require.ErrorAs(t, err, &bad)
	require.ErrorIs(t, f.e.DeleteQueue("q"), ErrQueueNotFound, "a pop creates no queue")

	f.push("q", "", "a")
	assert.Equal(t, []string{"a"}, txIDs(f.pop(PopRequest{Queue: "q", Group: "g", SubscriptionMode: "new"}).Messages))
	assert.Equal(t, []string{"a"}, txIDs(f.pop(PopRequest{Queue: "q", Group: "h"}).Messages))
	f.push("q", "", "b")
	assert.Equal(t, []string{"b"}, txIDs(f.pop(PopRequest{Queue: "q", Group: "c", Batch: 5}).Messages))
	// A group first seen after the push starts new as of its own first pop.
	assert.Empty(t, f.pop(PopRequest{Queue: "q", Group: "late"}).Messages)
}

// A conflating group gets only the newest message per partition, stored on its first pop.
func TestConflation(t *testing.T) {
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

// The conflation refusals, and a refused pop decides nothing.
func TestConflationRefusals(t *testing.T) {
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

// AutoAck hands out without a lease, moves the cursor and counts the delivery.
func TestAutoAck(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("q", "", "a", "b", "c")
	res := f.pop(PopRequest{Queue: "q", AutoAck: true, Batch: 2})
	assert.Equal(t, []string{"a", "b"}, txIDs(res.Messages))
	assert.Empty(t, res.LeaseID)
	assert.Empty(t, res.Messages[0].LeaseID)
	out := f.ack(ackOf(res.Messages[0], "failed"))
	assert.True(t, out[0].Success, "a later ack finds it done")
	assert.False(t, out[0].DLQ)
	next := f.pop(PopRequest{Queue: "q", Batch: 5})
	assert.Equal(t, []string{"c"}, txIDs(next.Messages))
	_, err := f.e.Seek(QueueMode, "q", false, epoch.Add(-time.Hour))
	require.NoError(t, err)
	back := f.pop(PopRequest{Queue: "q", Batch: 5})
	assert.Equal(t, []int{2, 2, 2}, attempts(back.Messages), "autoAck deliveries count")
}
