package broker

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A multi-partition pop fills each partition from its cursor, oldest first, under
// one leaseId; each message is acked with its own partitionId.
func TestMultiPartitionPop(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("q", "p1", "a1")
	f.clock.Advance(time.Second)
	f.push("q", "p2", "b1", "b2", "b3")
	f.clock.Advance(time.Second)
	f.push("q", "p1", "a2") // p1's oldest is still older than p2's
	f.push("q", "p3", "c1")

	res := f.pop(PopRequest{Queue: "q", Partitions: 2, Batch: 4})
	assert.Equal(t, []string{"a1", "a2", "b1", "b2"}, txIDs(res.Messages))
	assert.Equal(t, 2, res.PartitionsClaimed)
	assert.Equal(t, "p1", res.Partition)
	for _, m := range res.Messages {
		assert.Equal(t, res.LeaseID, m.LeaseID)
	}
	out := f.ack(ackOf(res.Messages[1], "completed"), ackOf(res.Messages[3], "completed"))
	assert.True(t, out[0].LeaseReleased)
	assert.True(t, out[1].LeaseReleased)
	rest := f.pop(PopRequest{Queue: "q", Partitions: 5, Batch: 10})
	assert.Equal(t, []string{"b3", "c1"}, txIDs(rest.Messages))
}

// The partition route reads only that partition; partitions has no effect there.
func TestPartitionRoute(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("q", "p1", "a")
	f.push("q", "p2", "b")
	res := f.pop(PopRequest{Queue: "q", Partition: "p2", Partitions: 5, Batch: 5})
	assert.Equal(t, []string{"b"}, txIDs(res.Messages))
	assert.Empty(t, f.pop(PopRequest{Queue: "q", Partition: "p2"}).Messages)
}

// A huge batch returns what exists; extra pops of a busy group answer empty.
func TestHugeBatchAndBusyGroup(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("q", "", "a", "b")
	res := f.pop(PopRequest{Queue: "q", Batch: 1 << 30})
	assert.Len(t, res.Messages, 2)
	assert.Empty(t, f.pop(PopRequest{Queue: "q", Batch: 1 << 30}).Messages)
}

// The discovery pop reads one queue matching the labels, with a 60 s lease by default.
func TestDiscoveryPop(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	short := 5
	f.e.Configure(ConfigureRequest{Queue: "a", Namespace: "billing", Task: "email", LeaseTime: &short})
	f.e.Configure(ConfigureRequest{Queue: "b", Namespace: "billing", Task: "sms"})
	f.e.Configure(ConfigureRequest{Queue: "c", Namespace: "other", Task: "email"})
	f.push("b", "", "b1")
	f.clock.Advance(time.Second)
	f.push("a", "", "a1")
	f.push("c", "", "c1")

	_, err := f.e.Pop(context.Background(), PopRequest{Discovery: true})
	var bad *BadRequest
	require.ErrorAs(t, err, &bad)

	res := f.pop(PopRequest{Discovery: true, Namespace: "billing", Batch: 5, Wait: true, Timeout: time.Minute})
	assert.Equal(t, "b", res.Queue, "oldest available message first")
	assert.Equal(t, []string{"b1"}, txIDs(res.Messages))
	res = f.pop(PopRequest{Discovery: true, Namespace: "billing", Task: "email", Partitions: 3, Batch: 5})
	assert.Equal(t, "a", res.Queue)
	f.clock.Advance(59 * time.Second)
	assert.Empty(t, f.pop(PopRequest{Queue: "a"}).Messages, "60 s, not the queue's leaseTime")
	f.clock.Advance(time.Second)
	assert.Len(t, f.pop(PopRequest{Queue: "a"}).Messages, 1)

	none := f.pop(PopRequest{Discovery: true, Task: "fax", Wait: true, Timeout: time.Minute})
	assert.Empty(t, none.Messages, "never long-polls")
}

// A partition's log doubles when it is full, so that a long log is not copied over and over
// as pushes add to it, and grows at once to hold a push bigger than itself.
func TestALogDoublesWhenFull(t *testing.T) {
	t.Parallel()
	full := make([]storedMessage, 1000)
	if got := cap(growLog(full, 1)); got < 2000 {
		t.Fatalf("a full log of 1000 grew to room for %d, want at least 2000", got)
	}
	if got := cap(growLog(full, 5000)); got < 6000 {
		t.Fatalf("a log of 1000 made room for %d after a push of 5000, want at least 6000", got)
	}
	roomy := make([]storedMessage, 10, 100)
	if got := growLog(roomy, 90); cap(got) != 100 {
		t.Fatalf("a log with room for the push was copied (cap %d)", cap(got))
	}
}
