package broker

import (
	"container/heap"
	"time"
)

// lease is one pop's hold, for one group, on the leased batch of each partition it claimed.
// It ends per partition or everywhere at expiry.
//
// A live lease is in e.leases and e.expiries. Once it has ended it is referenced only by the
// cursors whose expired slot names it (cursorState.expired, counted by expiredRefs) and, while
// that count is positive, by e.expired: nothing of it outlives its messages being settled or
// handed out again under a lease that ended in turn.
type lease struct {
	id       string
	q        *queue
	meta     *groupMeta
	created  time.Time
	duration time.Duration
	expires  time.Time
	timer    Timer
	gen      int // which scheduled timer is current
	heapIdx  int // position in e.expiries, -1 when not there

	holds []*cursorState
	held  int // partitions still held
	ended bool

	expiredRefs int // cursors whose expired slot names this lease

	autopilotB int  // the autopilot batch size B when the pop took exactly B messages
	spoiled    bool // a partition ended otherwise than by its cursor reaching the batch end
}

type endReason uint8

const (
	endReached  endReason = iota // the cursor reached the batch end
	endReleased                  // failed, retry, seek, group deletion
	endExpired                   // the lease ran out
)

var (
	errLeaseNotFound       = "Lease not found"
	errLeaseAlreadyExpired = "Lease already expired"
)

// leaseHeap orders live leases by expiry, so that a pop can end the due ones first.
type leaseHeap []*lease

func (h leaseHeap) Len() int           { return len(h) }
func (h leaseHeap) Less(i, j int) bool { return h[i].expires.Before(h[j].expires) }
func (h leaseHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIdx, h[j].heapIdx = i, j
}
func (h *leaseHeap) Push(x any) {
	l := x.(*lease)
	l.heapIdx = len(*h)
	*h = append(*h, l)
}
func (h *leaseHeap) Pop() any {
	old := *h
	l := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	l.heapIdx = -1
	return l
}

// schedule (re)arms the expiry timer; a timer armed earlier is ignored when it fires.
func (e *Engine) schedule(l *lease) {
	if l.timer != nil {
		l.timer.Stop()
	}
	l.gen++
	gen := l.gen
	l.timer = e.clock.AfterFunc(l.expires.Sub(e.now()), func() { e.onLeaseTimer(l, gen) })
	if l.heapIdx < 0 {
		heap.Push(&e.expiries, l)
	} else {
		heap.Fix(&e.expiries, l.heapIdx)
	}
}

func (e *Engine) onLeaseTimer(l *lease, gen int) {
	e.mu.Lock()
	defer e.unlock()
	if l.ended || gen != l.gen {
		return
	}
	if !e.expireIfDue(l) {
		e.schedule(l)
	}
}

// expireDue ends every lease whose expiry has come, as a look at its partition would.
func (e *Engine) expireDue() {
	if len(e.expiries) == 0 {
		return // spares reading the clock, the costliest part of a quiet pop
	}
	now := e.now()
	for len(e.expiries) > 0 && !now.Before(e.expiries[0].expires) {
		l := e.expiries[0]
		e.expireIfDue(l)
		if len(e.expiries) > 0 && e.expiries[0] == l { // ended already, never stuck
			heap.Pop(&e.expiries)
		}
	}
}

// expireIfDue ends l everywhere when its expiry has come, and reports whether it did.
func (e *Engine) expireIfDue(l *lease) bool {
	if l.ended {
		return true
	}
	if e.now().Before(l.expires) {
		return false
	}
	for _, gc := range l.holds {
		if gc.lease == l {
			e.endHold(gc, endExpired)
		}
	}
	return true
}

// liveLease is the live lease of (partition, group), expiring it first if its time has come.
func (e *Engine) liveLease(gc *cursorState) *lease {
	if gc == nil || gc.lease == nil || e.expireIfDue(gc.lease) {
		return nil
	}
	return gc.lease
}

// endHold ends the lease's hold on one partition, and the lease itself with its last hold.
func (e *Engine) endHold(gc *cursorState, why endReason) {
	l := gc.lease
	gc.lease = nil
	l.held--
	if why == endReached {
		gc.p.stats.batchesConsumed++
	}
	if why != endReached {
		l.spoiled = true
	}
	if gc.expired != nil { // the messages of an earlier expired lease were delivered again
		e.clearExpired(gc)
	}
	if why == endExpired {
		gc.expired, gc.expiredLast = l, gc.last
		l.expiredRefs++
	}
	e.refresh(gc)
	if l.held > 0 {
		return
	}
	e.retire(l)
	switch why {
	case endExpired:
		e.expired[l.id] = l
		l.meta.halveBatch()
	case endReached:
		if !l.spoiled && e.now().Sub(l.created) <= l.duration/2 {
			l.meta.doubleBatch(l.autopilotB)
		}
	}
}

// retire takes an ended lease out of the live ones.
func (e *Engine) retire(l *lease) {
	l.ended = true
	delete(e.leases, l.id)
	if l.timer != nil {
		l.timer.Stop()
	}
	if l.heapIdx >= 0 {
		heap.Remove(&e.expiries, l.heapIdx)
	}
}

// clearExpired empties gc's expired slot, forgetting the lease once no cursor names it.
func (e *Engine) clearExpired(gc *cursorState) {
	l := gc.expired
	if l == nil {
		return
	}
	gc.expired = nil
	if l.expiredRefs--; l.expiredRefs <= 0 && e.expired[l.id] == l {
		delete(e.expired, l.id)
	}
}

// endIfReached ends the hold once the cursor has reached the batch end.
func (e *Engine) endIfReached(gc *cursorState) bool {
	if gc.lease != nil && gc.cursor >= gc.last {
		e.endHold(gc, endReached)
		return true
	}
	return false
}

// release ends the hold without the cursor moving. A failed ack ends with it, so a partition
// held by nothing is recounted too: the retry the ack spent is its failed count.
func (e *Engine) release(gc *cursorState) bool {
	if gc.lease == nil {
		gc.p.recount()
		return false
	}
	e.endHold(gc, endReleased)
	return true
}

// forgetLease drops a lease whose id must become unknown.
func (e *Engine) forgetLease(l *lease) {
	for _, gc := range l.holds {
		if gc.lease == l {
			gc.lease = nil
			e.refresh(gc)
		}
	}
	l.held = 0
	e.retire(l)
}

// DefaultExtendSeconds is the extension of a renewal that does not say how long.
const DefaultExtendSeconds = 60

// Extend renews a lease by extend seconds, a positive count.
func (e *Engine) Extend(leaseID string, extend int) ExtendResult {
	e.mu.Lock()
	defer e.unlock()
	l := e.leases[leaseID]
	if l == nil || e.expireIfDue(l) {
		msg := errLeaseNotFound
		if _, ok := e.expired[leaseID]; ok {
			msg = errLeaseAlreadyExpired
		}
		return ExtendResult{LeaseID: leaseID, Error: msg}
	}
	if want := e.now().Add(seconds(extend)); want.After(l.expires) {
		l.expires = want
		e.schedule(l)
	}
	return ExtendResult{LeaseID: leaseID, Success: true, ExpiresAt: l.expires}
}
