package broker

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func groupPart(t *testing.T, e *Engine, group, queue, partition string) GroupPartition {
	t.Helper()
	d, err := e.ConsumerGroup(group, queue)
	require.NoError(t, err)
	for _, p := range d[queue] {
		if p.Partition == partition {
			return p
		}
	}
	t.Fatalf("no partition %s for %s on %s", partition, group, queue)
	return GroupPartition{}
}

// An unread queue shows every message pending, with queue mode's time lag from
// offset 0; no group is reported on it.
func TestUnreadQueueCountsEverythingPending(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("q", "", "a", "b", "c")
	f.clock.Advance(90 * time.Second)
	d, err := f.e.QueueDetail("q")
	require.NoError(t, err)
	assert.Equal(t, Counts{Total: 3, Pending: 3}, d.Totals)
	assert.Equal(t, epoch, d.Partitions[0].OldestMessage)
	assert.Empty(t, f.e.ConsumerGroups("", Page{}))
	o := f.e.Overview()
	assert.Equal(t, LagStats{Min: 3, Max: 3, Avg: 3, Median: 3}, o.OffsetLag)
	assert.Equal(t, LagStats{Min: 90, Max: 90, Avg: 90, Median: 90}, o.TimeLag)
}

// A conflating group owes at most the newest message; its time lag is that
// message's age once no lease is live; its skip is consumption time but finishes nothing.
func TestConflatingGroupLag(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("q", "", "a", "b", "c")
	res := f.pop(PopRequest{Queue: "q", Group: "c", Conflation: true, SubscriptionMode: "all"})
	require.Equal(t, []string{"c"}, txIDs(res.Messages))
	gp := groupPart(t, f.e, "c", "q", "Default")
	assert.Equal(t, int64(1), gp.Cursor)
	assert.Equal(t, int64(1), gp.Processing)
	assert.Equal(t, int64(0), gp.Pending)
	assert.Equal(t, epoch, gp.LastConsumedAt, "the skip is a forward move")
	assert.Equal(t, int64(0), gp.TotalConsumed, "a conflating skip finishes nothing")

	f.clock.Advance(10 * time.Second)
	f.push("q", "", "d", "e")
	f.clock.Advance(5 * time.Second)
	gp = groupPart(t, f.e, "c", "q", "Default")
	assert.Equal(t, int64(1), gp.Pending, "at most the newest")
	assert.Equal(t, int64(2), gp.OffsetLag)
	assert.Equal(t, int64(15), gp.TimeLagSeconds, "oldest owed is the leased c")

	f.ack(ackOf(res.Messages[0], "completed"))
	gp = groupPart(t, f.e, "c", "q", "Default")
	assert.Equal(t, int64(1), gp.OffsetLag)
	assert.Equal(t, int64(5), gp.TimeLagSeconds, "the newest, e, is owed")
	assert.Equal(t, int64(1), gp.TotalConsumed)
	sum := f.e.ConsumerGroups("q", Page{})
	require.Len(t, sum, 1)
	assert.True(t, sum[0].Conflation)
}

// An expired lease counts as expired before its timer fires.
func TestExpiredLeaseCountsAsExpiredBeforeItsTimer(t *testing.T) {
	t.Parallel()
	clock := &lazyClock{ManualClock: NewManualClock(epoch)}
	e := New(clock)
	t.Cleanup(e.Close)
	e.Push([]PushItem{{Queue: "q", TransactionID: "a"}, {Queue: "q", TransactionID: "b"}})
	res, err := e.Pop(t.Context(), PopRequest{Queue: "q", Group: "g", SubscriptionMode: "all", Batch: 2, LeaseSeconds: 10})
	require.NoError(t, err)
	require.Len(t, res.Messages, 2)
	gp := groupPart(t, e, "g", "q", "Default")
	assert.True(t, gp.LeaseActive)
	assert.Equal(t, int64(2), gp.Processing)

	clock.Advance(10 * time.Second) // the timer never fires on this clock
	gp = groupPart(t, e, "g", "q", "Default")
	assert.False(t, gp.LeaseActive)
	assert.Zero(t, gp.WorkerID)
	assert.Zero(t, gp.LeaseExpiresAt)
	assert.Equal(t, int64(0), gp.Processing)
	assert.Equal(t, int64(2), gp.Pending, "back to pending once the lease ended")
	assert.Equal(t, int64(10), gp.TimeLagSeconds)
	list, err := e.Browse(BrowseQuery{Queue: "q", Limit: 10})
	require.NoError(t, err)
	assert.Equal(t, "pending", list.Messages[0].Status)
	assert.Equal(t, "Dead", e.ConsumerGroups("q", Page{})[0].State, "no live lease, nothing consumed")
}

// lazyClock is a manual clock whose timers never fire: a lease whose expiry passed stays in
// place until something looks at it.
type lazyClock struct{ *ManualClock }

func (lazyClock) AfterFunc(time.Duration, func()) Timer { return lazyTimer{} }

type lazyTimer struct{}

func (lazyTimer) Stop() bool { return true }

// AutoAck pops finish what they hand out and count as batches.
func TestAutoAckCountsAsConsumption(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("q", "", "a", "b", "c")
	f.clock.Advance(time.Second)
	res := f.pop(PopRequest{Queue: "q", Group: "g", SubscriptionMode: "all", AutoAck: true, Batch: 2})
	require.Len(t, res.Messages, 2)
	gp := groupPart(t, f.e, "g", "q", "Default")
	assert.Equal(t, int64(2), gp.TotalConsumed)
	assert.Equal(t, epoch.Add(time.Second), gp.LastConsumedAt)
	assert.Equal(t, int64(1), gp.OffsetLag)
	d, err := f.e.QueueDetail("q")
	require.NoError(t, err)
	assert.Equal(t, []int64{2, 1}, []int64{d.Partitions[0].TotalConsumed, d.Partitions[0].BatchesConsumed})
	s := f.e.ConsumerGroups("q", Page{})[0]
	assert.Equal(t, int64(1), s.Members)
	assert.Equal(t, "Stable", s.State)
	f.clock.Advance(400 * time.Second)
	assert.Equal(t, "Lagging", f.e.ConsumerGroups("q", Page{})[0].State)
}

// A failed with retries left leaves the message pending and the partition
// failed; a dead letter moves the group past it, and the partition counts it.
func TestRetriesAndDeadLettersInCounts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("q", "", "a", "b")
	m := f.pop(PopRequest{Queue: "q", Batch: 1}).Messages[0]
	f.ack(ackOf(m, "failed"))
	d, err := f.e.QueueDetail("q")
	require.NoError(t, err)
	assert.Equal(t, Counts{Total: 2, Pending: 2, Failed: 1}, d.Partitions[0].Messages)
	assert.Equal(t, int64(1), groupPart(t, f.e, QueueMode, "q", "Default").Retries)

	m = f.pop(PopRequest{Queue: "q", Batch: 1}).Messages[0]
	f.ack(ackOf(m, "dlq"))
	d, err = f.e.QueueDetail("q")
	require.NoError(t, err)
	assert.Equal(t, Counts{Total: 2, Pending: 1, Completed: 1, DeadLetter: 1}, d.Partitions[0].Messages)
	list, _ := f.e.DeadLetters(DLQQuery{Queue: "q"})
	require.Len(t, list, 1)
	require.NoError(t, f.e.DeleteDeadLetter(list[0].ID))
	d, err = f.e.QueueDetail("q")
	require.NoError(t, err)
	assert.Equal(t, int64(0), d.Partitions[0].Messages.DeadLetter)
	detail, err := f.e.Message(d.Partitions[0].ID, "a")
	require.NoError(t, err)
	assert.Equal(t, statusCompleted, detail.Status, "no dead letter stored any more")
}

// Reads create no queue, no cursor, no start, and decide nothing.
func TestReadsChangeNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("q", "", "a")
	f.pop(PopRequest{Queue: "q", Group: "g", SubscriptionMode: "new"}) // start new, before a
	f.push("q", "p2", "b")                                             // a partition g never read
	p2 := f.e.queues["q"].byName["p2"]

	read := func() {
		f.e.Queues(QueueFilter{Limit: 10})
		_, _ = f.e.QueueDetail("q")
		_, _ = f.e.QueueDetail("nope")
		f.e.ConsumerGroups("", Page{})
		_, _ = f.e.ConsumerGroup("g", "")
		_, _ = f.e.ConsumerGroup("other", "q")
		f.e.Lagging(LaggingQuery{})
		_, _ = f.e.Browse(BrowseQuery{Queue: "q", Limit: 10, Payload: true})
		_, _ = f.e.Browse(BrowseQuery{Queue: "nope", Limit: 10})
		_, _ = f.e.Message(p2.id, "b")
		f.e.Overview()
	}
	read()
	assert.Len(t, f.e.queues, 1)
	require.Len(t, p2.groups, 1, "g's cursor in p2, placed at its start by the push (ready.go)")
	assert.False(t, p2.groups["g"].counted(), "no cursor placed by a read")
	assert.Nil(t, f.e.queues["q"].groups["other"])
	assert.Equal(t, int64(1), groupPart(t, f.e, "g", "q", "p2").OffsetLag, "b came after g's start")
	assert.Equal(t, int64(-1), groupPart(t, f.e, "g", "q", "p2").Cursor)
	read()
	res := f.pop(PopRequest{Queue: "q", Group: "g", Partition: "p2"})
	require.Len(t, res.Messages, 1)
	assert.Equal(t, 1, res.Messages[0].DeliveryAttempt, "reads count no delivery")
}

// A seek attaches queue mode; its lag follows the seek.
func TestSeekAttachesQueueMode(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("q", "", "a", "b")
	_, err := f.e.ConsumerGroup(QueueMode, "q")
	require.ErrorIs(t, err, ErrGroupNotFound, "queue mode has not popped q")
	_, err = f.e.Seek(QueueMode, "q", true, time.Time{})
	require.NoError(t, err)
	gp := groupPart(t, f.e, QueueMode, "q", "Default")
	assert.Equal(t, int64(1), gp.Cursor)
	assert.Equal(t, int64(0), gp.OffsetLag)
	assert.Zero(t, gp.LastConsumedAt, "a seek is no consumption")

	_, err = f.e.DeleteGroup(QueueMode, "q", true)
	require.NoError(t, err)
	_, err = f.e.ConsumerGroup(QueueMode, "q")
	assert.ErrorIs(t, err, ErrGroupNotFound)
}

// A status filter, found by ranges, selects exactly the entries of that status, in
// both orders, with paging; named groups only (bus) and queue mode (hybrid) alike.
func TestBrowseStatusFilterMatchesTheStatuses(t *testing.T) {
	t.Parallel()
	s := newInspected(t)
	bus := newFixture(t)
	bus.push("b", "", "a", "b", "c", "d", "e", "f")
	bus.ack(ackOf(bus.pop(PopRequest{Queue: "b", Group: "x", SubscriptionMode: "all", Batch: 2}).Messages[1], "completed"))
	bus.pop(PopRequest{Queue: "b", Group: "x", SubscriptionMode: "all", Batch: 1})
	bus.pop(PopRequest{Queue: "b", Group: "y", SubscriptionMode: "all", Batch: 4})
	m := bus.pop(PopRequest{Queue: "b", Group: "z", SubscriptionMode: "all", Batch: 1}).Messages[0]
	bus.ack(ackOf(m, "dlq"))
	for _, e := range []*Engine{s.e, bus.e} {
		for _, q := range []string{"orders", "b"} {
			all, err := e.Browse(BrowseQuery{Queue: q, Limit: 1000, Ascending: true})
			if err != nil {
				continue
			}
			for _, status := range []string{"", statusPending, statusProcessing, statusCompleted, statusDeadLetter} {
				var want []string
				for _, m := range all.Messages {
					if status == "" || m.Status == status {
						want = append(want, m.PartitionID+"/"+m.TransactionID)
					}
				}
				for _, asc := range []bool{true, false} {
					got, err := e.Browse(BrowseQuery{Queue: q, Status: status, Limit: 1000, Ascending: asc})
					require.NoError(t, err)
					ids := make([]string, 0, len(got.Messages))
					for _, m := range got.Messages {
						ids = append(ids, m.PartitionID+"/"+m.TransactionID)
					}
					if !asc {
						slices.Reverse(ids)
					}
					assert.Equal(t, want, append([]string(nil), ids...), "%s %s asc=%v", q, status, asc)
					ordered := slices.Clone(want)
					if !asc {
						slices.Reverse(ordered)
					}
					for k := 0; k <= len(ordered)+1; k++ {
						page, err := e.Browse(BrowseQuery{Queue: q, Status: status, Limit: 3, Offset: k, Ascending: asc})
						require.NoError(t, err)
						var got []string
						for _, m := range page.Messages {
							got = append(got, m.PartitionID+"/"+m.TransactionID)
						}
						end := min(k+3, len(ordered))
						var wantPage []string
						if k < len(ordered) {
							wantPage = ordered[k:end]
						}
						assert.Equal(t, wantPage, got, "%s %s asc=%v offset %d", q, status, asc, k)
					}
				}
			}
		}
	}
}
