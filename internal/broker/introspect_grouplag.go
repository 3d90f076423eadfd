package broker

import (
	"container/heap"
	"time"
)

// What a group summary sums over its queue's partitions (the offsetLag, the partitions with
// lag, the largest time lag, the members, whether the group is active) is kept per (attached
// group, queue) as the state changes, so that the group list reads it without walking
// partitions.
//
// Each of the group's partitions has its part (a pairLag): the group's cursor's, or, where it
// has none, the part its stored start gives it there (a shadow). A part is worked out as if
// every lease it holds were live, like the partitions' tallies: for a group that does not
// conflate the lag and the oldest owed message do not depend on whether its lease is live, and
// a read corrects the rest (leases whose expiry has passed, for conflating groups their lag too)
// from the few partitions such leases hold. Every change that can move a part marks it as due:
// a push to its partition, a cursor's move, a lease taken or ended, a first delivery, a first
// consumption. A read of the group's summary first works the due parts out again, in steps,
// moving the group's sums by the difference, so that the consuming path pays O(1) a change and
// a part changed many times between two reads is worked out once; groupChanged works every part
// of the group out at once. The parts that owe a message are kept in a heap, the oldest owed
// message first, so the largest time lag is its root's: O(log partitions) a part worked out.

// groupLag is one attached group's sums over one queue's partitions.
type groupLag struct {
	group    string
	meta     *groupMeta // its stored start on the queue, nil for none
	lag      int64      // offsetLag summed
	withLag  int64      // parts with an offsetLag above 0
	members  int64      // cursors handed at least one message
	held     int64      // cursors holding a lease
	consumed int64      // cursors that consumed (a lastConsumedAt)
	owed     owedHeap   // the parts owing a message, the oldest owed message first
	shadows  map[*partition]*pairLag
	due      []*pairLag // parts changed since they were last worked out
}

// pairLag is one (group, partition)'s part of its groupLag.
type pairLag struct {
	p      *partition
	gc     *cursorState // nil for a shadow
	in     bool         // counted in the sums
	due    bool         // in its groupLag's due list
	lag    int64
	oldest int64 // createdAt of the oldest owed message, Unix nanoseconds, while lag > 0
	idx    int   // position in owed, -1 when not there

	member, held, consumed bool
}

// owedHeap is a group's parts that owe a message, as a container/heap.
type owedHeap []*pairLag

func (h owedHeap) Len() int           { return len(h) }
func (h owedHeap) Less(i, j int) bool { return h[i].oldest < h[j].oldest }
func (h owedHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].idx, h[j].idx = i, j
}

func (h *owedHeap) Push(x any) {
	pl := x.(*pairLag)
	pl.idx = len(*h)
	*h = append(*h, pl)
}

func (h *owedHeap) Pop() any {
	old := *h
	pl := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	pl.idx = -1
	return pl
}

// count moves the sums by one part, sign +1 or -1.
func (gl *groupLag) count(pl *pairLag, sign int64) {
	gl.lag += sign * pl.lag
	if pl.lag > 0 {
		gl.withLag += sign
	}
	if pl.member {
		gl.members += sign
	}
	if pl.held {
		gl.held += sign
	}
	if pl.consumed {
		gl.consumed += sign
	}
}

// mark notes that pl changed since it was last worked out.
func (gl *groupLag) mark(pl *pairLag) {
	if !pl.due {
		pl.due = true
		gl.due = append(gl.due, pl)
	}
}

// workDue works out the parts of the group on q marked since the last time, in steps; false
// when the group or the queue went in the meantime. On true, the sums are the group's as it is
// in the stepper's current step.
func workDue(s *stepper, q *queue, group string) (*groupLag, bool) {
	for {
		gl := q.groupLags[group]
		if gl == nil {
			return nil, false
		}
		if len(gl.due) == 0 {
			return gl, true
		}
		last := len(gl.due) - 1
		pl := gl.due[last]
		gl.due[last] = nil
		gl.due = gl.due[:last]
		if pl.due { // not dropped since it was marked
			gl.update(pl)
		}
		if s.did(1) && !stillAttached(s.e, q, group) {
			return nil, false
		}
	}
}

// update works pl out again and moves the sums by the difference.
func (gl *groupLag) update(pl *pairLag) {
	pl.due = false
	v := viewAt(pl.p, pl.gc, gl.group, gl.meta, time.Time{}, false)
	owedBefore := pl.in && pl.lag > 0
	if pl.in {
		gl.count(pl, -1)
	}
	pl.lag, pl.in = v.lag, true
	if gc := pl.gc; gc != nil {
		pl.member, pl.held = len(gc.attempts) > 0, gc.lease != nil
		pl.consumed = !gc.consumption.lastConsumedAt.IsZero()
	}
	gl.count(pl, 1)
	switch {
	case v.lag > 0:
		oldest := pl.p.msgs[v.oldest].createdAt.UnixNano()
		if !owedBefore {
			pl.oldest = oldest
			heap.Push(&gl.owed, pl)
		} else if oldest != pl.oldest {
			pl.oldest = oldest
			heap.Fix(&gl.owed, pl.idx)
		}
	case owedBefore:
		heap.Remove(&gl.owed, pl.idx)
	}
}

// drop takes pl out of the sums.
func (gl *groupLag) drop(pl *pairLag) {
	pl.due = false
	if !pl.in {
		return
	}
	gl.count(pl, -1)
	if pl.idx >= 0 {
		heap.Remove(&gl.owed, pl.idx)
	}
	pl.in = false
}

// relag marks gc's part of its group's sums as due after a change of gc or of its partition's
// log.
func (gc *cursorState) relag() {
	if gl := gc.ix.lags; gl != nil {
		gl.mark(&gc.lag)
	}
}

// relagShadows follows a change of p's log into the parts of the groups without a cursor in
// p, all of them among q's special groups.
func (p *partition) relagShadows() {
	for _, g := range p.q.special {
		if p.groups[g] == nil {
			if gl := p.q.groupLags[g]; gl != nil {
				gl.shadow(p)
			}
		}
	}
}

// shadow marks the part of p where the group has no cursor as due, making it if need be.
func (gl *groupLag) shadow(p *partition) {
	pl := gl.shadows[p]
	if pl == nil {
		pl = &pairLag{p: p, idx: -1}
		gl.shadows[p] = pl
	}
	gl.mark(pl)
}

// unshadow takes the part of p where the group had no cursor out, as a cursor takes its place.
func (gl *groupLag) unshadow(p *partition) {
	if pl := gl.shadows[p]; pl != nil {
		gl.drop(pl)
		delete(gl.shadows, p)
	}
}

// keepGroupLag works out the group's sums on q afresh, or forgets them once it is no longer
// attached there. O(partitions).
func (e *Engine) keepGroupLag(q *queue, group string) {
	ix := q.cursors[group]
	if !isAttached(q, group) {
		delete(q.groupLags, group)
		if ix != nil {
			ix.lags = nil
		}
		return
	}
	gl := q.groupLags[group]
	if gl == nil {
		gl = &groupLag{group: group, shadows: map[*partition]*pairLag{}}
		q.groupLags[group] = gl
	}
	for _, pl := range gl.owed {
		pl.idx = -1
	}
	old := gl.shadows
	*gl = groupLag{group: group, meta: q.groups[group], owed: gl.owed[:0], shadows: make(map[*partition]*pairLag, len(old))}
	for _, p := range q.parts {
		if gc := p.groups[group]; gc != nil {
			gc.lag.in, gc.lag.idx = false, -1
			gl.update(&gc.lag)
			continue
		}
		pl := old[p]
		if pl == nil {
			pl = &pairLag{p: p}
		}
		pl.in, pl.idx = false, -1
		gl.shadows[p] = pl
		gl.update(pl)
	}
	if ix != nil {
		ix.lags = gl
	}
}

// groupSums is a group summary's sums at now: the kept ones, corrected for the parts held by
// leases whose expiry has passed (stale, from the read's step).
func groupSums(gl *groupLag, stale []*cursorState, now time.Time) (sum GroupSummary, active bool) {
	sum.Members, sum.PartitionsWithLag, sum.TotalLag = gl.members, gl.withLag, gl.lag
	live := gl.held
	conflating := gl.meta != nil && gl.meta.conflation
	oldest, owes := int64(0), false
	consider := func(at int64) {
		if !owes || at < oldest {
			oldest, owes = at, true
		}
	}
	for _, gc := range stale {
		live--
		if !conflating {
			continue // its lag and oldest owed message are the same with the lease expired
		}
		pl := &gc.lag
		v := viewAt(gc.p, gc, gl.group, gl.meta, now, true)
		sum.TotalLag += v.lag - pl.lag
		sum.PartitionsWithLag += oneIf(v.lag > 0) - oneIf(pl.lag > 0)
		if v.lag > 0 {
			consider(gc.p.msgs[v.oldest].createdAt.UnixNano())
		}
	}
	if conflating && len(stale) > 0 {
		skip := make(map[*pairLag]bool, len(stale))
		for _, gc := range stale {
			skip[&gc.lag] = true
		}
		gl.owed.least(skip, consider)
	} else if len(gl.owed) > 0 {
		consider(gl.owed[0].oldest)
	}
	if owes {
		sum.MaxTimeLag = max(0, int64(now.Sub(time.Unix(0, oldest))/time.Second))
	}
	return sum, gl.consumed > 0 || live > 0
}

// least calls f with the oldest owed message of every part that skip does not name, or with
// enough of them to include the oldest: it walks the heap down only below skipped parts.
func (h owedHeap) least(skip map[*pairLag]bool, f func(int64)) {
	var walk func(i int)
	walk = func(i int) {
		if i >= len(h) {
			return
		}
		if !skip[h[i]] {
			f(h[i].oldest)
			return
		}
		walk(2*i + 1)
		walk(2*i + 2)
	}
	walk(0)
}

func oneIf(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
