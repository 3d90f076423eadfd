package broker

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Deleting a group forgets its cursors, leases, counters and (by default) its start;
// its dead letters stay.
func TestDeleteGroup(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("q", "p1", "a")
	f.push("q", "p2", "b")
	f.push("r", "", "c")
	res := f.pop(PopRequest{Queue: "q", Group: "g", SubscriptionMode: "all", Partition: "p1"})
	f.ack(ackOf(res.Messages[0], "dlq"))
	held := f.pop(PopRequest{Queue: "q", Group: "g", Partition: "p2"})
	f.pop(PopRequest{Queue: "r", Group: "g", SubscriptionMode: "all"})

	_, err := f.e.DeleteGroup("nobody", "", true)
	assert.ErrorIs(t, err, ErrGroupNotFound)
	_, err = f.e.DeleteGroup("g", "nope", true)
	assert.ErrorIs(t, err, ErrGroupNotFound)

	n, err := f.e.DeleteGroup("g", "q", true)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	assert.Equal(t, "Lease not found", f.e.Extend(held.LeaseID, 10).Error)
	out := f.ack(ackOf(held.Messages[0], "completed"))
	assert.Equal(t, "Invalid or expired lease", out[0].Error)
	_, total := f.e.DeadLetters(DLQQuery{Group: "g"})
	assert.Equal(t, 1, total, "dead letters stay")

	// Its start was forgotten: the next pop decides afresh (new: nothing).
	assert.Empty(t, f.pop(PopRequest{Queue: "q", Group: "g", SubscriptionMode: "new"}).Messages)
	// r still has the group until deleted everywhere.
	n, err = f.e.DeleteGroup("g", "", true)
	require.NoError(t, err)
	assert.Equal(t, 3, n, "q's fresh cursors and r's")
	_, err = f.e.DeleteGroup("g", "", true)
	assert.ErrorIs(t, err, ErrGroupNotFound)
}

// DeleteMetadata false keeps the start and conflation choice; queue mode is a group too.
func TestDeleteGroupKeepsMetadata(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("q", "", "a")
	res := f.pop(PopRequest{Queue: "q", Group: "g", SubscriptionMode: "all"})
	f.ack(ackOf(res.Messages[0], "completed"))
	n, err := f.e.DeleteGroup("g", "q", false)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	again := f.pop(PopRequest{Queue: "q", Group: "g", SubscriptionMode: "new"})
	assert.Equal(t, []string{"a"}, txIDs(again.Messages), "the stored all start is kept; the cursor is new")
	assert.Equal(t, []int{1}, attempts(again.Messages))

	f.pop(PopRequest{Queue: "q"})
	n, err = f.e.DeleteGroup(QueueMode, "", true)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
}

// Deleting a queue removes every trace of it; a later push starts over.
func TestDeleteQueue(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	pushed := f.push("q", "", "a", "b")
	res := f.pop(PopRequest{Queue: "q"})
	f.ack(ackOf(res.Messages[0], "dlq"))
	held := f.pop(PopRequest{Queue: "q"})
	f.push("other", "", "x")
	require.NoError(t, f.e.DeleteQueue("q"))
	assert.ErrorIs(t, f.e.DeleteQueue("q"), ErrQueueNotFound)

	assert.Equal(t, "Lease not found", f.e.Extend(held.LeaseID, 10).Error)
	out := f.ack(ackOf(held.Messages[0], "completed"))
	assert.Equal(t, "Message not found", out[0].Error)
	_, total := f.e.DeadLetters(DLQQuery{})
	assert.Equal(t, 0, total)
	_, err := f.e.Seek("g", "q", true, epoch)
	assert.ErrorIs(t, err, ErrQueueNotFound)

	again := f.push("q", "", "a")
	assert.Equal(t, "queued", again[0].Status)
	assert.Equal(t, int64(0), again[0].Offset)
	assert.NotEqual(t, pushed[0].PartitionID, again[0].PartitionID)
	assert.Len(t, f.pop(PopRequest{Queue: "other"}).Messages, 1)
}

// Configure creates the queue and Default, replaces options, echoes the others.
func TestConfigure(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	five, one := 5, 1
	res := f.e.Configure(ConfigureRequest{Queue: "q", Namespace: "ns", Task: "t", LeaseTime: &five, RetryLimit: &one,
		Options: map[string][]byte{"ttl": []byte("99"), "leaseTime": []byte("5")}})
	assert.Equal(t, "q", res.Queue)
	assert.Equal(t, "ns", res.Namespace)
	assert.NotEmpty(t, res.QueueID)
	assert.Equal(t, "99", string(res.Options["ttl"]))
	assert.Equal(t, "5", string(res.Options["leaseTime"]))
	assert.Equal(t, "1", string(res.Options["retryLimit"]))
	assert.Equal(t, "true", string(res.Options["deadLetterQueue"]))
	pushed := f.push("q", "", "a")
	assert.Equal(t, res.PartitionID, pushed[0].PartitionID)

	again := f.e.Configure(ConfigureRequest{Queue: "q"})
	assert.Equal(t, res.QueueID, again.QueueID)
	assert.Equal(t, "60", string(again.Options["leaseTime"]), "replaced, not merged")
	assert.Equal(t, "3", string(again.Options["retryLimit"]))
	assert.Empty(t, again.Namespace)
	_, hasTTL := again.Options["ttl"]
	assert.False(t, hasTTL)
	assert.Len(t, f.pop(PopRequest{Queue: "q"}).Messages, 1, "configure never touches messages")
}
