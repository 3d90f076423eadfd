package queen

import (
	"context"
	"slices"
	"sync"
	"time"
)

// A 0.15 broker's retry counter belongs to the (partition, group), not to the message: every
// failed ack adds one, and only a completed ack that finishes a whole leased batch resets it
// (filing a message does not). The loop acks a completed prefix and one failure per batch,
// and the failed message comes back with the rest of its partition in one batch; a later
// message of that batch that fails then spends what the first one left of the budget, so a
// partition whose messages fail once each, a few apart, has one dead-lettered on its first
// failure. The loop keeps the 2.0 meaning, that a message is dead-lettered by its own failures
// only, for the partitions its client consumes:
//   - After a failed ack of a message without an offset (a 0.15 broker's), the partition is
//     pending: its next pop asks for one message, the one that failed, so that completing it
//     finishes its leased batch and resets the counter. That costs one pop per failure on 0.15
//     and nothing on 2.0, whose counter is the message's own. A batch of more than one message
//     of a pending partition (another loop's pop, or a lease that ran out, brought it) is
//     released at once and popped again one message at a time.
//   - Once a failed has filed its message, the counter stays spent until a completed resets
//     it, and the next failure would file its message at once. The client has counted the
//     failed acks since it last saw the counter reset, which tells it the least retryLimit the
//     queue can have; until the reset, a message's failures are sent as retry, which spends
//     nothing, and its failed only once they have reached that limit.
//
// The failed ack and the pop of its message go out with no other pop of the loop in between
// (popGate), and that pop goes alone: a pop of the queue answered meanwhile would lease the
// failed message again together with the ones after it. A pop of the loop is never cut short
// right before such an ack, as the broker could still hand it the partition the ack frees, for
// nobody; instead, once a failure is decided, the pops in flight are cut short (the partition is still the loop's
// then, and its backoff gives the broker time to see the pop go), and the loop's pops until
// the ack is due wait no longer than until then. What the client knows of a partition's
// counter holds across its loops; across processes it cannot.

// popGate lets the fetch loop's pops and the acks that must not overlap them take turns.
type popGate struct {
	mu        sync.Mutex
	changed   chan struct{} // closed and replaced at every change
	pops      map[*gatedPop]struct{}
	spare     []*gatedPop // ended pops, made again for the next ones
	exclusive int         // acks waiting for their turn, or taking it
	inside    bool
}

// gatedPop is one pop of the loop in flight.
type gatedPop struct {
	since        time.Time          // when it left
	cancel       context.CancelFunc // cuts it short
	interrupting bool
	end          func() // ends it: made once, with the gatedPop, so that a pop costs no closure
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

// beginPop waits until no ack has asked for its turn, and returns the ctx of a pop the fetch
// loop sends next, and the func to call once it was answered. A bound above zero is the pop's
// deadline from now: the one ctx then both ends the pop in time and lets the gate cut it short.
func (g *popGate) beginPop(parent context.Context, bound time.Duration) (context.Context, func()) {
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
	var ctx context.Context
	var cancel context.CancelFunc
	if bound > 0 {
		ctx, cancel = context.WithTimeout(parent, bound)
	} else {
		ctx, cancel = context.WithCancel(parent)
	}
	var p *gatedPop
	if n := len(g.spare); n > 0 {
		p, g.spare = g.spare[n-1], g.spare[:n-1]
	} else {
		p = &gatedPop{}
		p.end = func() { g.endPop(p) }
	}
	p.since, p.cancel, p.interrupting = time.Now(), cancel, false
	if g.pops == nil {
		g.pops = make(map[*gatedPop]struct{})
	}
	g.pops[p] = struct{}{}
	g.mu.Unlock()
	return ctx, p.end
}

// endPop ends p once it was answered. A timer of interrupt may still hold p's cancel, which
// then cancels the ctx of the pop that ended, not of the next one p is made again for.
func (g *popGate) endPop(p *gatedPop) {
	g.mu.Lock()
	cancel := p.cancel
	delete(g.pops, p)
	p.cancel = nil
	g.spare = append(g.spare, p)
	g.broadcastLocked()
	g.mu.Unlock()
	cancel()
}

// interrupt cuts every pop in flight short, each once it has had popStopGrace.
func (g *popGate) interrupt() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for p := range g.pops {
		if p.interrupting {
			continue
		}
		p.interrupting = true
		if wait := popStopGrace - time.Since(p.since); wait > 0 {
			time.AfterFunc(wait, p.cancel)
		} else {
			p.cancel()
		}
	}
}

// alone runs fn once no pop of the loop is in flight, with none sent until it returns.
func (g *popGate) alone(fn func()) {
	g.mu.Lock()
	g.exclusive++
	for len(g.pops) > 0 || g.inside {
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

// countsFailure reports whether a failure of m is counted by a 0.15 broker's partition counter:
// m has no offset, and the loop knows its partition.
func countsFailure(m *Message) bool { return m.Offset < 0 && m.Partition != "" }

// awaitReset notes that b's failed ack goes out at `at`: the pops in flight are cut short and
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

// repopParams are the parameters of the pop of one partition's failed message: one message,
// at once. Should the partition not be free (another consumer took it), the loop goes on; a
// batch of more than one message of it that a later pop brings is given back.
func (l *consumer) repopParams(p popParams) popParams {
	p.batch, p.partitions, p.autopilot = 1, 0, false
	p.longPoll, p.noWait, p.timeout = false, true, 0
	return p
}

// sendFailure sends a batch's last acks, which end with the ack of a failure (a failed, or the
// retry that stands for one), and records the answer in what the client knows of the
// partition's counter.
func (l *consumer) sendFailure(b *leasedBatch, items []AckItem) []AckResult {
	last := items[len(items)-1]
	if !countsFailure(last.Message) {
		return l.send(items, b.deadline)
	}
	defer l.resets.remove(b)
	var results []AckResult
	// The partition's next pop is the one-message pop before the gate lets any other go.
	send := func() {
		var sure bool
		results, sure = l.sendAcks(items, b.deadline)
		var res AckResult
		if sure && len(results) == len(items) {
			res = results[len(results)-1]
		}
		l.counters.failed(last.Message, last.Status, res, sure && len(results) == len(items))
	}
	if l.stopping() {
		send() // no pop follows
	} else {
		l.gate.alone(send)
	}
	return results
}

// partitionCounters is what a client knows of the retry counters of the 0.15 partitions its
// loops consume, per (queue, group).
type partitionCounters struct {
	mu sync.Mutex
	m  map[startKey]*groupCounters
}

func (p *partitionCounters) of(queue, group string) *groupCounters {
	if group == "" {
		group = queueModeGroup
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = make(map[startKey]*groupCounters)
	}
	k := startKey{queue, group}
	g := p.m[k]
	if g == nil {
		g = &groupCounters{parts: make(map[string]*partitionCounter)}
		p.m[k] = g
	}
	return g
}

// groupCounters is one (queue, group)'s partitions, by name, and those whose next pop asks
// for one message.
type groupCounters struct {
	mu     sync.Mutex
	parts  map[string]*partitionCounter
	repops []string
}

// partitionCounter is what the client knows of one partition's retry counter.
type partitionCounter struct {
	pending   bool           // the counter may hold failures since its last reset
	spent     int            // failed acks accepted since the client last saw it reset
	exhausted bool           // a failed filed its message since: the counter stays spent
	limit     int            // the least retryLimit the queue can have; -1 until learned
	own       map[string]int // while exhausted: each message's failures, sent as retry
}

func (g *groupCounters) partLocked(name string) *partitionCounter {
	p := g.parts[name]
	if p == nil {
		p = &partitionCounter{limit: -1}
		g.parts[name] = p
	}
	return p
}

// asRetry reports whether a failure of m is sent as retry: while m's partition's counter is
// spent, a failed would file m at once; up to the limit learned, the client counts m's
// failures itself.
func (g *groupCounters) asRetry(m *Message) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := g.parts[m.Partition]
	if p == nil || !p.exhausted || p.limit < 0 {
		return false
	}
	if p.own == nil {
		p.own = make(map[string]int)
	}
	p.own[m.TransactionID]++
	return p.own[m.TransactionID] <= p.limit
}

// failed records the answer to the ack of a failure of m sent with status (failed, or retry):
// res when answered, else no answer. Unless the broker refused it, the partition is pending
// and its next pop asks for one message.
func (g *groupCounters) failed(m *Message, status Status, res AckResult, answered bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if answered && !res.Success {
		return // refused: nothing was applied
	}
	p := g.partLocked(m.Partition)
	if answered && status == StatusFailed {
		p.spent++
		if res.DLQ && !p.exhausted {
			// Filed on this failed: the counter was past the limit, which is at least what
			// it was before this one.
			p.exhausted, p.limit = true, max(p.limit, p.spent-1)
		}
		if res.DLQ {
			delete(p.own, m.TransactionID)
		}
	}
	p.pending = true
	g.repopLocked(m.Partition)
}

// reset records a completed ack that finished a whole leased batch of the partition: its
// counter is 0.
func (g *groupCounters) reset(partition string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if p := g.parts[partition]; p != nil {
		p.pending, p.spent, p.exhausted, p.own = false, 0, false, nil
	}
}

// pending reports whether the partition's counter may hold failures since its last reset.
func (g *groupCounters) pending(partition string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := g.parts[partition]
	return p != nil && p.pending
}

// repop has the partition's next pop ask for one message.
func (g *groupCounters) repop(partition string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.repopLocked(partition)
}

func (g *groupCounters) repopLocked(partition string) {
	if !slices.Contains(g.repops, partition) {
		g.repops = append(g.repops, partition)
	}
}

// take is a partition whose next pop asks for one message, if any.
func (g *groupCounters) take() (string, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.repops) == 0 {
		return "", false
	}
	p := g.repops[0]
	g.repops = g.repops[1:]
	return p, true
}

// releasePending gives back at once a batch of more than one message of a pending partition,
// and has the partition popped one message at a time; it reports whether it did.
func (l *consumer) releasePending(msgs []*Message, deadline *leaseDeadline) bool {
	if len(msgs) < 2 || !countsFailure(msgs[0]) || !l.counters.pending(msgs[0].Partition) {
		return false
	}
	l.send(releaseItem(msgs), deadline)
	l.counters.repop(msgs[0].Partition)
	return true
}
