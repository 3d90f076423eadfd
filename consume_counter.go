package queen

import (
	"context"
	"slices"
	"sync"
	"time"
)

// A 0.15 broker's retry counter belongs to the (partition, group), not to the message: every
// failed ack adds one, and only a completed ack that finishes a whole leased batch resets it.
// The loop acks a completed prefix and one failure per batch, and the failed message comes
// back with the rest of its partition in one batch; a later message of that batch that fails
// then spends what the first one left of the budget, so a partition whose messages fail once
// each, a few apart, has one dead-lettered on its first failure. The loop keeps the 2.0
// meaning, that a message is dead-lettered by its own failures only: after a failed ack of a
// message without an offset (a 0.15 broker's), its next pop of that partition asks for one
// message, the one that failed, so that completing it finishes its leased batch and resets the
// counter. That costs one pop per failure on 0.15 and nothing on 2.0, whose counter is the
// message's own.
//
// The failed ack and that pop go out with no other pop of the loop in between (popGate): a
// pop of the queue answered meanwhile would lease the failed message again together with the
// ones after it. A pop of the loop is never cut short right before such an ack, as the broker
// could still hand it the partition the ack frees, for nobody; instead, once a failure is
// decided, the pop in flight is cut short (the partition is still the loop's then, and its
// backoff gives the broker time to see the pop go), and the loop's pops until the ack is due
// wait no longer than until then.

// repopWait is how long the pop of the one failed message waits for it to be free again.
const repopWait = 2 * time.Second

// popGate lets the fetch loop's pops and the acks that must not overlap them take turns.
type popGate struct {
	mu           sync.Mutex
	changed      chan struct{} // closed and replaced at every change
	popping      bool
	since        time.Time          // when the pop in flight left
	cancel       context.CancelFunc // cuts the pop in flight short
	interrupting bool
	exclusive    int // acks waiting for their turn, or taking it
	inside       bool
}

func (g *popGate) changedLocked() chan struct{} {
	if g.changed == nil {
		g.changed = make(chan struct{})
	}
	return g.changed
}

func (g *popGate) broadcastLocked() {
	if g.changed != nil {
		close(g.changed)
		g.changed = nil
	}
}

// beginPop waits until no ack has asked for its turn, and returns the ctx of the pop the fetch
// loop sends next, and the func to call once it was answered.
func (g *popGate) beginPop(parent context.Context) (context.Context, func()) {
	g.mu.Lock()
	for g.exclusive > 0 && parent.Err() == nil {
		ch := g.changedLocked()
		g.mu.Unlock()
		select {
		case <-ch:
		case <-parent.Done():
		}
		g.mu.Lock()
	}
	ctx, cancel := context.WithCancel(parent)
	g.popping, g.since, g.cancel, g.interrupting = true, time.Now(), cancel, false
	g.mu.Unlock()
	return ctx, func() {
		g.mu.Lock()
		g.popping, g.cancel = false, nil
		g.broadcastLocked()
		g.mu.Unlock()
		cancel()
	}
}

// interrupt cuts the pop in flight short, if any, once it has had popStopGrace.
func (g *popGate) interrupt() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.popping || g.interrupting {
		return
	}
	g.interrupting = true
	if wait := popStopGrace - time.Since(g.since); wait > 0 {
		time.AfterFunc(wait, g.cancel)
	} else {
		g.cancel()
	}
}

// alone runs fn once no pop of the loop is in flight, with none sent until it returns.
func (g *popGate) alone(fn func()) {
	g.mu.Lock()
	g.exclusive++
	for g.popping || g.inside {
		ch := g.changedLocked()
		g.mu.Unlock()
		<-ch
		g.mu.Lock()
	}
	g.inside = true
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.inside = false
		g.exclusive--
		g.broadcastLocked()
		g.mu.Unlock()
	}()
	fn()
}

// pendingResets are the failed acks a loop will send, with when each is due: the loop's pops
// do not wait past the earliest.
type pendingResets struct {
	mu  sync.Mutex
	due map[*leasedBatch]time.Time
}

func (r *pendingResets) add(b *leasedBatch, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.due == nil {
		r.due = make(map[*leasedBatch]time.Time)
	}
	r.due[b] = at
}

func (r *pendingResets) remove(b *leasedBatch) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.due, b)
}

// earliest is when the first pending ack is due; false when none is.
func (r *pendingResets) earliest() (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var first time.Time
	for _, at := range r.due {
		if first.IsZero() || at.Before(first) {
			first = at
		}
	}
	return first, !first.IsZero()
}

// resetsCounter reports whether it is a failed ack of a message of a 0.15 broker (without an
// offset), whose partition's next pop then asks for that message alone.
func (l *consumer) resetsCounter(it AckItem) bool {
	return it.Status == StatusFailed && it.Message.Offset < 0 && it.Message.Partition != "" && !l.stopping()
}

// awaitReset notes that b's failed ack goes out at `at`: the pop in flight is cut short and
// the next ones wait no longer than that.
func (l *consumer) awaitReset(b *leasedBatch, at time.Time) {
	l.resets.add(b, at)
	l.gate.interrupt()
}

// clipPoll shortens a long poll to end by the time the first pending failed ack is due.
func (l *consumer) clipPoll(p *popParams) {
	due, ok := l.resets.earliest()
	if !ok || !p.longPoll {
		return
	}
	if left := due.Sub(l.now()); left < p.timeout {
		p.timeout = max(left, 0).Truncate(time.Millisecond)
	}
}

// repopQueue is the partitions whose next pop asks for their one failed message.
type repopQueue struct {
	mu         sync.Mutex
	partitions []string
}

func (q *repopQueue) add(partition string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !slices.Contains(q.partitions, partition) {
		q.partitions = append(q.partitions, partition)
	}
}

func (q *repopQueue) take() (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.partitions) == 0 {
		return "", false
	}
	p := q.partitions[0]
	q.partitions = q.partitions[1:]
	return p, true
}

// repopParams are the parameters of the pop of one partition's failed message: one message,
// waiting a little for the partition to be free.
func (l *consumer) repopParams(p popParams) popParams {
	p.batch, p.partitions, p.autopilot = 1, 0, false
	p.longPoll, p.noWait, p.timeout = true, false, repopWait
	return p
}

// sendFailed sends a batch's last acks, which end with a failed, and reports the results.
// Against a broker whose retry counter is the partition's, the failed message's next pop asks
// for it alone.
func (l *consumer) sendFailed(b *leasedBatch, items []AckItem) []AckResult {
	last := items[len(items)-1]
	if !l.resetsCounter(last) {
		return l.send(items, b.deadline)
	}
	defer l.resets.remove(b)
	var results []AckResult
	l.gate.alone(func() {
		results = l.send(items, b.deadline)
		if n := len(results); n == len(items) && results[n-1].Success && !results[n-1].DLQ {
			l.repops.add(last.Message.Partition)
		}
	})
	return results
}
