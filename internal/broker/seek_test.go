package broker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A seek to T returns exactly the messages pushed at or after T, in every
// partition; to before the first message reads from it.
func TestSeekToTimestamp(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("q", "p1", "a")
	f.clock.Advance(time.Minute)
	f.push("q", "p1", "b")
	f.push("q", "p2", "c")
	res := f.pop(PopRequest{Queue: "q", Group: "g", SubscriptionMode: "all", Partition: "p1", Batch: 5})
	f.ack(ackOf(res.Messages[1], "completed"))

	out, err := f.e.Seek("g", "q", false, epoch.Add(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, 2, out.PartitionsUpdated)
	got := f.pop(PopRequest{Queue: "q", Group: "g", Partitions: 2, Batch: 5})
	assert.ElementsMatch(t, []string{"b", "c"}, txIDs(got.Messages))
	f.e.Ack([]AckItem{ackOf(got.Messages[0], "completed"), ackOf(got.Messages[1], "completed")})

	_, err = f.e.Seek("g", "q", false, epoch.Add(-time.Hour))
	require.NoError(t, err)
	got = f.pop(PopRequest{Queue: "q", Group: "g", Partition: "p1", Batch: 5})
	assert.Equal(t, []string{"a", "b"}, txIDs(got.Messages))
	assert.Equal(t, []int{2, 3}, attempts(got.Messages))
}

// Seek toEnd, and a seek releases live leases, resets counters and wakes waiters.
func TestSeekToEndReleasesLeases(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	pushed := f.push("q", "", "a", "b")
	res := f.pop(PopRequest{Queue: "q", Group: "g", SubscriptionMode: "all"})
	f.ack(ackOf(res.Messages[0], "failed"))
	res = f.pop(PopRequest{Queue: "q", Group: "g"})
	gc := f.e.partitions[pushed[0].PartitionID].groups["g"]
	require.Equal(t, 1, gc.retries)

	_, err := f.e.Seek("g", "q", true, time.Time{})
	require.NoError(t, err)
	assert.Equal(t, 0, gc.retries)
	assert.Nil(t, gc.lease)
	out := f.ack(ackOf(res.Messages[0], "completed"))
	assert.Equal(t, "Invalid or expired lease", out[0].Error)
	assert.Empty(t, f.pop(PopRequest{Queue: "q", Group: "g"}).Messages)
	f.push("q", "", "c")
	assert.Equal(t, []string{"c"}, txIDs(f.pop(PopRequest{Queue: "q", Group: "g"}).Messages))
}

// A group with no stored start gets one from the seek; a seek of an unknown queue is
// ErrQueueNotFound.
func TestSeekGivesAStart(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	_, err := f.e.Seek("g", "nope", true, time.Time{})
	assert.ErrorIs(t, err, ErrQueueNotFound)
	f.push("q", "", "a")
	f.clock.Advance(time.Minute)
	f.push("q", "", "b")
	_, err = f.e.Seek("g", "q", false, epoch.Add(time.Minute))
	require.NoError(t, err)
	f.push("q", "later", "x")
	res := f.pop(PopRequest{Queue: "q", Group: "g", SubscriptionMode: "all", Partitions: 2, Batch: 5})
	assert.ElementsMatch(t, []string{"b", "x"}, txIDs(res.Messages))
}
