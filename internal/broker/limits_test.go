package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// heapAfterGC is the live heap once garbage is collected.
func heapAfterGC() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// A push wakes only the waiting pops that can take one of its messages, in arrival order
// among those; pops that cannot are not even looked at.
func TestPushWakesOnlyPopsItCanServe(t *testing.T) {
	t.Parallel()
	f, parked := newParkedFixture(t)
	f.push("q", "a", "seed")
	f.push("q", "b", "seed")
	held := f.pop(PopRequest{Queue: "q", Partitions: 2, Batch: 2})
	require.Equal(t, 2, held.PartitionsClaimed)

	onB := f.popAsync(context.Background(), waitFor(PopRequest{Queue: "q", Partition: "b"}))
	<-parked
	wide := f.popAsync(context.Background(), waitFor(PopRequest{Queue: "q"}))
	<-parked
	onA := f.popAsync(context.Background(), waitFor(PopRequest{Queue: "q", Partition: "a"}))
	<-parked
	var others []<-chan popOutcome
	for i := range 50 {
		others = append(others, f.popAsync(context.Background(), waitFor(PopRequest{Queue: "q", Partition: fmt.Sprint("x", i)})))
		<-parked
	}

	looked := f.e.evaluations
	f.push("q", "c", "c1") // only the queue-wide pop can take it
	got := <-wide
	assert.Equal(t, []string{"c1"}, txIDs(got.res.Messages))
	assert.Equal(t, looked+1, f.e.evaluations, "the push looked at the one pop it could serve")

	f.push("q", "a", "a1") // a is still held: nobody can take it
	assert.Equal(t, looked+1, f.e.evaluations)
	f.ack(ackOf(held.Messages[0], "completed")) // frees a: the pop waiting on a takes a1
	got = <-onA
	assert.Equal(t, []string{"a1"}, txIDs(got.res.Messages))
	f.ack(ackOf(held.Messages[1], "completed")) // b is free but empty: the pop on b waits on
	assert.Equal(t, 51, f.e.WaitingPops())
	f.push("q", "b", "b1")
	got = <-onB
	assert.Equal(t, []string{"b1"}, txIDs(got.res.Messages))
	assert.Equal(t, looked+3, f.e.evaluations)

	f.e.Close()
	for _, out := range others {
		assert.Empty(t, (<-out).res.Messages)
	}
}

// However a lease ends, nothing of it stays once its messages are settled or handed out
// again under a lease that ended in turn; an expired one is remembered until then.
func TestEndedLeasesLeaveNothing(t *testing.T) {
	t.Parallel()
	ends := map[string]func(f *fixture, res PopResult){
		"completed": func(f *fixture, res PopResult) { f.ack(ackOf(res.Messages[1], "completed")) },
		"failed":    func(f *fixture, res PopResult) { f.ack(ackOf(res.Messages[0], "failed")) },
		"retry":     func(f *fixture, res PopResult) { f.ack(ackOf(res.Messages[0], "retry")) },
		"dlq":       func(f *fixture, res PopResult) { f.ack(ackOf(res.Messages[0], "dlq"), ackOf(res.Messages[1], "dlq")) },
		"expiry":    func(f *fixture, res PopResult) { f.clock.Advance(10 * time.Second) },
		"seek": func(f *fixture, res PopResult) {
			_, err := f.e.Seek(QueueMode, "q", true, time.Time{})
			require.NoError(f.t, err)
		},
		"group deleted": func(f *fixture, res PopResult) {
			_, err := f.e.DeleteGroup(QueueMode, "q", true)
			require.NoError(f.t, err)
		},
		"queue deleted": func(f *fixture, res PopResult) { require.NoError(f.t, f.e.DeleteQueue("q")) },
	}
	for name, end := range ends {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			f.push("q", "", "a", "b")
			res := f.pop(PopRequest{Queue: "q", Batch: 2, LeaseSeconds: 10})
			end(f, res)
			checkIndex(t, f.e)
			assert.Empty(t, f.e.leases)
			assert.Empty(t, f.e.expiries)
			if name != "expiry" {
				assert.Empty(t, f.e.expired)
				return
			}
			assert.Equal(t, errLeaseAlreadyExpired, f.e.Extend(res.LeaseID, 5).Error)
			again := f.pop(PopRequest{Queue: "q", Batch: 2}) // delivered again: still remembered
			assert.Equal(t, errLeaseAlreadyExpired, f.e.Extend(res.LeaseID, 5).Error)
			f.ack(ackOf(again.Messages[1], "completed")) // settled: forgotten
			assert.Equal(t, errLeaseNotFound, f.e.Extend(res.LeaseID, 5).Error)
			assert.Empty(t, f.e.expired)
			checkIndex(t, f.e)
		})
	}
}

// Leases that keep expiring on the same messages do not add up.
// Not parallel: it measures the heap, which other tests would move.
func TestExpiredLeasesDoNotAccumulate(t *testing.T) {
	f := newFixture(t)
	f.push("q", "", "a")
	cycle := func() {
		res := f.pop(PopRequest{Queue: "q", LeaseSeconds: 1})
		require.Len(t, res.Messages, 1)
		f.clock.Advance(time.Second)
	}
	for range 100 {
		cycle()
	}
	before := heapAfterGC()
	for range 10_000 {
		cycle()
	}
	after := heapAfterGC()
	assert.LessOrEqual(t, len(f.e.expired), 1)
	assert.Empty(t, f.e.leases)
	assert.Less(t, after-before, int64(200<<10), "10,000 expired leases kept %d bytes", after-before)
}

// Requests that find no queue, partition, group, lease or dead letter keep nothing for
// it. Not parallel: it measures the heap, which other tests would move.
func TestUnknownNamesKeepNoState(t *testing.T) {
	f := newFixture(t)
	f.push("q", "", "a")
	f.pop(PopRequest{Queue: "q", Group: "known", SubscriptionMode: "all"})
	long := strings.Repeat("n", 200)
	requests := func(i int) {
		name := fmt.Sprintf("%s-%d", long, i)
		ctx := context.Background()
		_, _ = f.e.Pop(ctx, PopRequest{Queue: "missing-" + name, Group: "g-" + name, SubscriptionMode: "all", Conflation: true})
		_, _ = f.e.Pop(ctx, PopRequest{Queue: "q", Partition: "p-" + name, Group: "g-" + name})
		_, _ = f.e.Pop(ctx, PopRequest{Discovery: true, Namespace: "ns-" + name, Group: "g-" + name})
		f.e.Ack([]AckItem{{TransactionID: "t-" + name, PartitionID: "p-" + name, LeaseID: "l-" + name, Group: "g-" + name}})
		f.e.Extend("l-"+name, 5)
		_, _ = f.e.Seek("g-"+name, "missing-"+name, true, time.Time{})
		_, _ = f.e.DeleteGroup("g-"+name, "", true)
		_ = f.e.DeleteQueue("missing-" + name)
		f.e.DeadLetters(DLQQuery{Queue: "missing-" + name, Group: "g-" + name, Partition: "p-" + name})
		_, _ = f.e.Replay("d-" + name)
		_ = f.e.DeleteDeadLetter("d-" + name)
	}
	for i := range 100 { // the bounded table of early starts fills up first
		requests(i)
	}
	before := heapAfterGC()
	for i := range 2000 {
		requests(100 + i)
	}
	after := heapAfterGC()
	assert.Less(t, after-before, int64(300<<10), "2,000 rounds of requests for unknown names kept %d bytes", after-before)
	f.e.mu.Lock()
	assert.Len(t, f.e.queues, 1)
	assert.Len(t, f.e.queues["q"].groups, 1, "a pop of an unknown partition decided no start")
	assert.LessOrEqual(t, f.e.pendingBytes, pendingBudget)
	assert.LessOrEqual(t, len(f.e.pendingOrder), 2*f.e.pendingCount+64)
	f.e.mu.Unlock()
}

// A pop leases at most 10,000 messages, and adds none once their data reaches
// 16 MiB, always answering at least one; its lease covers exactly what it handed out.
func TestPopAnswerBounds(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	items := make([]PushItem, maxPopMessages+5)
	for i := range items {
		items[i] = PushItem{Queue: "many", Partition: []string{"a", "b"}[i%2]}
	}
	f.e.Push(items)
	res := f.pop(PopRequest{Queue: "many", Batch: 1 << 30, Partitions: 2})
	assert.Len(t, res.Messages, maxPopMessages)
	assert.Equal(t, 2, res.PartitionsClaimed)

	mib := json.RawMessage(`"` + strings.Repeat("x", 1<<20-2) + `"`)
	big := make([]PushItem, 20)
	for i := range big {
		big[i] = PushItem{Queue: "big", Partition: []string{"a", "b"}[i/10], Payload: mib}
	}
	f.e.Push(big)
	res = f.pop(PopRequest{Queue: "big", Batch: 100, Partitions: 2})
	assert.Len(t, res.Messages, 16, "the 16th MiB is the last message added")
	out := f.ack(ackOf(res.Messages[15], "completed"))
	assert.True(t, out[0].LeaseReleased, "the lease ends at the last message handed out")

	huge := json.RawMessage(`"` + strings.Repeat("y", maxPopBytes) + `"`)
	f.e.Push([]PushItem{{Queue: "huge", Payload: huge}, {Queue: "huge"}})
	res = f.pop(PopRequest{Queue: "huge", Batch: 10})
	require.Len(t, res.Messages, 1, "a message above the cap still goes out, alone")
	assert.Len(t, res.Messages[0].Data, maxPopBytes+2)
}
