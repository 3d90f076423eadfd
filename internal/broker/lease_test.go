package broker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Lease length is leaseSeconds, else the queue's leaseTime (0 means 60 s).
func TestLeaseDuration(t *testing.T) {
	t.Parallel()
	zero, ten := 0, 10
	tests := []struct {
		name         string
		leaseTime    *int // nil: push-created queue
		leaseSeconds int
		want         time.Duration
	}{
		{"push-created queue", nil, 0, 60 * time.Second},
		{"configured", &ten, 0, 10 * time.Second},
		{"leaseTime 0 means 60", &zero, 0, 60 * time.Second},
		{"leaseSeconds wins", &ten, 3, 3 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			if tc.leaseTime != nil {
				f.e.Configure(ConfigureRequest{Queue: "q", LeaseTime: tc.leaseTime})
			}
			f.push("q", "", "a")
			res := f.pop(PopRequest{Queue: "q", LeaseSeconds: tc.leaseSeconds})
			require.Len(t, res.Messages, 1)
			f.clock.Advance(tc.want - time.Second)
			assert.Empty(t, f.pop(PopRequest{Queue: "q"}).Messages, "still leased")
			f.clock.Advance(time.Second)
			assert.Len(t, f.pop(PopRequest{Queue: "q"}).Messages, 1, "expired")
		})
	}
}

// Extend renews every partition still held, never shortens, and reports
// why a lease cannot be renewed.
func TestExtend(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("q", "p1", "a")
	f.push("q", "p2", "b")
	res := f.pop(PopRequest{Queue: "q", Partitions: 2, Batch: 2, LeaseSeconds: 10})
	require.Equal(t, 2, res.PartitionsClaimed)

	ext := f.e.Extend(res.LeaseID, 5)
	require.True(t, ext.Success)
	assert.Equal(t, epoch.Add(10*time.Second), ext.ExpiresAt, "never shortens")
	f.clock.Advance(8 * time.Second)
	ext = f.e.Extend(res.LeaseID, 30)
	require.True(t, ext.Success)
	assert.Equal(t, epoch.Add(38*time.Second), ext.ExpiresAt)
	f.clock.Advance(20 * time.Second)
	assert.Empty(t, f.pop(PopRequest{Queue: "q", Partitions: 2}).Messages, "both partitions still held")

	// Release one partition; the other is still renewable.
	f.ack(ackOf(res.Messages[0], "completed"))
	assert.True(t, f.e.Extend(res.LeaseID, 60).Success)
	f.ack(ackOf(res.Messages[1], "retry"))
	ext = f.e.Extend(res.LeaseID, 60)
	assert.False(t, ext.Success)
	assert.Zero(t, ext.ExpiresAt)
	assert.Equal(t, "Lease not found", ext.Error)

	unknown := f.e.Extend("nope", 60)
	assert.Equal(t, "Lease not found", unknown.Error)

	again := f.pop(PopRequest{Queue: "q", LeaseSeconds: 5})
	require.Len(t, again.Messages, 1)
	f.clock.Advance(5 * time.Second)
	ext = f.e.Extend(again.LeaseID, 60)
	assert.Equal(t, "Lease already expired", ext.Error)
}

// Autopilot batch B starts at 100, doubles after a quick full batch, halves on expiry.
func TestAutopilotBatch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	items := make([]PushItem, 5000)
	for i := range items {
		items[i] = PushItem{Queue: "q"}
	}
	f.e.Push(items)
	popAll := func() PopResult {
		t.Helper()
		res := f.pop(PopRequest{Queue: "q", Autopilot: true, LeaseSeconds: 60})
		require.NotEmpty(t, res.Messages)
		return res
	}
	ackLast := func(res PopResult) {
		t.Helper()
		out := f.ack(ackOf(res.Messages[len(res.Messages)-1], "completed"))
		require.True(t, out[0].LeaseReleased)
	}
	sizes := []int{}
	for range 5 {
		res := popAll()
		sizes = append(sizes, len(res.Messages))
		ackLast(res)
	}
	assert.Equal(t, []int{100, 200, 400, 800, 1000}, sizes)

	// A slow batch (past half the lease) does not double.
	res := popAll()
	assert.Len(t, res.Messages, 1000)
	f.clock.Advance(31 * time.Second)
	ackLast(res)
	res = popAll()
	assert.Len(t, res.Messages, 1000)
	// Expiry halves.
	f.clock.Advance(60 * time.Second)
	res = popAll()
	assert.Len(t, res.Messages, 500)
	f.clock.Advance(60 * time.Second)
	res = popAll()
	assert.Len(t, res.Messages, 250)
	ackLast(res)
	// A client batch is used unchanged and does not double B.
	res = f.pop(PopRequest{Queue: "q", Autopilot: true, Batch: 7})
	assert.Len(t, res.Messages, 7)
	ackLast(res)
	res = popAll()
	assert.Len(t, res.Messages, 500)
}

// Without partitions, autopilot claims ⌊ready / waiting pops⌋ partitions, 1..64.
func TestAutopilotPartitions(t *testing.T) {
	t.Parallel()
	assert.Equal(t, 1, autopilotPartitions(0, 1))
	assert.Equal(t, 4, autopilotPartitions(9, 2))
	assert.Equal(t, 1, autopilotPartitions(3, 5))
	assert.Equal(t, 64, autopilotPartitions(100, 1))

	f := newFixture(t)
	for _, p := range []string{"a", "b", "c", "d", "e"} {
		f.push("q", p, p+"1")
	}
	res := f.pop(PopRequest{Queue: "q", Autopilot: true})
	assert.Equal(t, 5, res.PartitionsClaimed)
	res = f.pop(PopRequest{Queue: "q", Autopilot: true, Group: "g", SubscriptionMode: "all", Partitions: 2})
	assert.Equal(t, 2, res.PartitionsClaimed, "a client partitions value is used unchanged")
}
