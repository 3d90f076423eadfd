package broker

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newParkedFixture is a fixture whose engine signals every pop that starts waiting.
func newParkedFixture(t *testing.T) (*fixture, <-chan struct{}) {
	f := newFixture(t)
	parked := make(chan struct{}, 64)
	f.e.parked = func() { parked <- struct{}{} }
	return f, parked
}

type popOutcome struct {
	res PopResult
	err error
}

func (f *fixture) popAsync(ctx context.Context, r PopRequest) <-chan popOutcome {
	out := make(chan popOutcome, 1)
	go func() {
		res, err := f.e.Pop(ctx, r)
		out <- popOutcome{res, err}
	}()
	return out
}

func waitFor(r PopRequest) PopRequest {
	r.Wait, r.Timeout = true, time.Minute
	return r
}

// When 20 pops of one group race for one ready partition, exactly one gets it.
func TestRacingPopsOneWinner(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("q", "", "a", "b", "c")
	start := make(chan struct{})
	var winners atomic.Int32
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			res, err := f.e.Pop(context.Background(), PopRequest{Queue: "q", Batch: 3})
			if err == nil && len(res.Messages) > 0 {
				winners.Add(1)
			}
		}()
	}
	close(start)
	wg.Wait()
	assert.Equal(t, int32(1), winners.Load())
}

// 8 competing consumers drain 8 partitions: every message is delivered
// once, and each lease is a contiguous run continuing where the partition's last one ended.
func TestCompetingConsumersDrainInOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const parts, perPart = 8, 300
	for p := range parts {
		items := make([]PushItem, perPart)
		for i := range items {
			items[i] = PushItem{Queue: "q", Partition: string(rune('a' + p))}
		}
		f.e.Push(items)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	next := map[string]int64{} // per partition: the offset the next lease must start at
	var delivered, broken atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				res, err := f.e.Pop(ctx, PopRequest{Queue: "q", Batch: 7, Wait: true, Timeout: time.Minute})
				if err != nil || len(res.Messages) == 0 {
					continue
				}
				mu.Lock()
				for _, m := range res.Messages {
					if m.Offset != next[m.Partition] || m.DeliveryAttempt != 1 {
						broken.Add(1)
					}
					next[m.Partition] = m.Offset + 1
				}
				mu.Unlock()
				items := make([]AckItem, len(res.Messages))
				for i, m := range res.Messages {
					items[i] = ackOf(m, "completed")
				}
				for _, r := range f.e.Ack(items) {
					if !r.Success {
						broken.Add(1)
					}
				}
				if delivered.Add(int32(len(res.Messages))) == parts*perPart {
					cancel()
				}
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int32(parts*perPart), delivered.Load())
	assert.Zero(t, broken.Load())
	for p := range parts {
		assert.Equal(t, int64(perPart), next[string(rune('a'+p))])
	}
	assert.Zero(t, f.e.WaitingPops(), "cancelled waiters left the queue")
}

// A push wakes waiting pops, in arrival order.
func TestPushWakesWaitersInArrivalOrder(t *testing.T) {
	t.Parallel()
	f, parked := newParkedFixture(t)
	first := f.popAsync(context.Background(), waitFor(PopRequest{Queue: "q"}))
	<-parked
	second := f.popAsync(context.Background(), waitFor(PopRequest{Queue: "q", Partition: "p"}))
	<-parked
	assert.Equal(t, 2, f.e.WaitingPops())

	f.push("q", "p", "a")
	got := <-first
	require.NoError(t, got.err)
	assert.Equal(t, []string{"a"}, txIDs(got.res.Messages))
	f.ack(ackOf(got.res.Messages[0], "completed"))
	f.push("q", "p", "b")
	got = <-second
	assert.Equal(t, []string{"b"}, txIDs(got.res.Messages))
}

// A `new` pop waiting on a queue not yet created is woken by the push that
// creates it; the start counts from its arrival.
func TestWaiterOnUnknownQueue(t *testing.T) {
	t.Parallel()
	f, parked := newParkedFixture(t)
	out := f.popAsync(context.Background(), waitFor(PopRequest{Queue: "q", Group: "g", SubscriptionMode: "new"}))
	<-parked
	f.push("q", "", "a")
	got := <-out
	assert.Equal(t, []string{"a"}, txIDs(got.res.Messages))
}

// Each way a lease ends wakes a waiting pop of the group.
func TestLeaseEndsWakeWaiters(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		end  func(f *fixture, held PopResult)
	}{
		{"expiry", func(f *fixture, held PopResult) { f.clock.Advance(time.Minute) }},
		{"failed", func(f *fixture, held PopResult) { f.ack(ackOf(held.Messages[0], "failed")) }},
		{"retry", func(f *fixture, held PopResult) { f.ack(ackOf(held.Messages[0], "retry")) }},
		{"completed with more behind", func(f *fixture, held PopResult) { f.ack(ackOf(held.Messages[0], "completed")) }},
		{"seek", func(f *fixture, held PopResult) {
			_, err := f.e.Seek(QueueMode, "q", false, epoch.Add(-time.Hour))
			require.NoError(t, err)
		}},
		{"group deleted", func(f *fixture, held PopResult) {
			_, err := f.e.DeleteGroup(QueueMode, "q", true)
			require.NoError(t, err)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f, parked := newParkedFixture(t)
			f.push("q", "", "a", "b")
			held := f.pop(PopRequest{Queue: "q"})
			out := f.popAsync(context.Background(), waitFor(PopRequest{Queue: "q"}))
			<-parked
			tc.end(f, held)
			got := <-out
			require.NoError(t, got.err)
			assert.NotEmpty(t, got.res.Messages)
		})
	}
}

// A transaction push and a replay wake waiting pops.
func TestTransactionAndReplayWake(t *testing.T) {
	t.Parallel()
	f, parked := newParkedFixture(t)
	out := f.popAsync(context.Background(), waitFor(PopRequest{Queue: "q"}))
	<-parked
	tx := f.e.Transaction([]TxOp{{Type: "push", Push: []PushItem{{Queue: "q", TransactionID: "a"}}}})
	require.True(t, tx.Success)
	got := <-out
	require.Equal(t, []string{"a"}, txIDs(got.res.Messages))
	f.ack(ackOf(got.res.Messages[0], "dlq"))

	out = f.popAsync(context.Background(), waitFor(PopRequest{Queue: "q"}))
	<-parked
	list, _ := f.e.DeadLetters(DLQQuery{})
	require.Len(t, list, 1)
	_, err := f.e.Replay(list[0].ID)
	require.NoError(t, err)
	got = <-out
	assert.Equal(t, []string{"dlq:" + list[0].ID}, txIDs(got.res.Messages))
}

// A long poll answers empty after its real-time timeout; a conflating group's
// empty answer is marked.
func TestLongPollTimesOut(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.push("q", "", "a")
	res := f.pop(PopRequest{Queue: "q", Group: "c", Conflation: true, Wait: true, Timeout: 20 * time.Millisecond})
	assert.Empty(t, res.Messages)
	assert.True(t, res.ConflatingEmpty)
	res = f.pop(PopRequest{Queue: "q", Group: "g", Wait: true, Timeout: 20 * time.Millisecond})
	assert.Empty(t, res.Messages)
	assert.False(t, res.ConflatingEmpty)
	assert.Zero(t, f.e.WaitingPops())
}

// A waiting pop whose client goes away leases nothing and decides no start.
func TestAbandonedWaiterLeavesNoTrace(t *testing.T) {
	t.Parallel()
	f, parked := newParkedFixture(t)
	f.push("q", "", "old")
	ctx, cancel := context.WithCancel(context.Background())
	out := f.popAsync(ctx, waitFor(PopRequest{Queue: "q", Group: "g", SubscriptionMode: "new"}))
	<-parked
	cancel()
	got := <-out
	assert.ErrorIs(t, got.err, context.Canceled)
	assert.Zero(t, f.e.WaitingPops())
	res := f.pop(PopRequest{Queue: "q", Group: "g", SubscriptionMode: "all"})
	assert.Equal(t, []string{"old"}, txIDs(res.Messages), "the abandoned pop decided nothing")

	_, err := f.e.Pop(ctx, PopRequest{Queue: "q", Group: "h", SubscriptionMode: "all"})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Len(t, f.pop(PopRequest{Queue: "q", Group: "h", SubscriptionMode: "all"}).Messages, 1)

	// The same on a queue not created yet: the abandoned pop's pending start is forgotten.
	ctx, cancel = context.WithCancel(context.Background())
	out = f.popAsync(ctx, waitFor(PopRequest{Queue: "later", Group: "g", SubscriptionMode: "all"}))
	<-parked
	cancel()
	assert.ErrorIs(t, (<-out).err, context.Canceled)
	f.push("later", "", "first")
	res = f.pop(PopRequest{Queue: "later", Group: "g", SubscriptionMode: "new"})
	assert.Empty(t, res.Messages, "the abandoned pop decided nothing: this pop decides new")
}

// An answer handed to a waiter that was abandoned meanwhile is taken back whole.
func TestUndoHandedOutAnswer(t *testing.T) {
	t.Parallel()
	for _, autoAck := range []bool{false, true} {
		f := newFixture(t)
		pushed := f.push("q", "", "a", "b")
		f.e.mu.Lock()
		w := &waiter{req: PopRequest{Queue: "q", Group: "g", SubscriptionMode: "all", Batch: 2, AutoAck: autoAck}, group: "g"}
		w.req.Wait = true
		f.e.enqueue(w)
		res, g, err := f.e.evaluate(&w.req, w)
		require.NoError(t, err)
		require.Len(t, res.Messages, 2)
		f.e.dequeue(w)
		f.e.undo(g)
		f.e.forgetStart(w)
		f.e.unlock()

		assert.Equal(t, errLeaseNotFound, f.e.Extend(res.LeaseID, 5).Error)
		again := f.pop(PopRequest{Queue: "q", Group: "g", SubscriptionMode: "all", Batch: 2})
		assert.Equal(t, []int{1, 1}, attempts(again.Messages), "autoAck=%v", autoAck)
		assert.NotNil(t, f.e.partitions[pushed[0].PartitionID].groups["g"])
	}
}

// A waiter whose client left while a push answered it ends with nothing leased, and the
// delivery it was handed does not count.
func TestCancelledWhileAnswered(t *testing.T) {
	t.Parallel()
	f, parked := newParkedFixture(t)
	for i := range 50 {
		ctx, cancel := context.WithCancel(context.Background())
		out := f.popAsync(ctx, waitFor(PopRequest{Queue: "q", Batch: 5}))
		<-parked
		// Cancel and push in one locked stretch: the push answers the waiter before its own
		// goroutine can look at the state again.
		f.e.mu.Lock()
		cancel()
		f.e.push([]PushItem{{Queue: "q", TransactionID: fmt.Sprint("m", i)}})
		f.e.unlock()
		got := <-out
		require.ErrorIs(t, got.err, context.Canceled)
		res := f.pop(PopRequest{Queue: "q", Batch: 5})
		require.Len(t, res.Messages, 1, "round %d", i)
		assert.Equal(t, 1, res.Messages[0].DeliveryAttempt)
		f.ack(ackOf(res.Messages[0], "completed"))
	}
}

// Close answers every waiting pop at once, and later pops do not wait.
func TestCloseAnswersWaiters(t *testing.T) {
	t.Parallel()
	f, parked := newParkedFixture(t)
	out := f.popAsync(context.Background(), waitFor(PopRequest{Queue: "q"}))
	<-parked
	f.e.Close()
	got := <-out
	require.NoError(t, got.err)
	assert.Empty(t, got.res.Messages)
	assert.Empty(t, f.pop(waitFor(PopRequest{Queue: "q"})).Messages)
}

// Pops waiting on a deleted queue keep waiting, and a push recreating it wakes them.
func TestWaitersSurviveQueueDelete(t *testing.T) {
	t.Parallel()
	f, parked := newParkedFixture(t)
	f.push("q", "", "a")
	held := f.pop(PopRequest{Queue: "q"})
	require.Len(t, held.Messages, 1)
	out := f.popAsync(context.Background(), waitFor(PopRequest{Queue: "q"}))
	<-parked
	require.NoError(t, f.e.DeleteQueue("q"))
	assert.Equal(t, 1, f.e.WaitingPops())
	f.push("q", "", "b")
	got := <-out
	assert.Equal(t, []string{"b"}, txIDs(got.res.Messages))
}
