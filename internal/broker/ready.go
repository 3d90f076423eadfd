package broker

import "container/heap"

// The ready index lets a pop find its partitions without looking at the others.
//
// A group's cursors on a queue hang off one groupCursors (q.cursors[group]), whose ready set
// is a heap of the cursors a pop of the group can take. Invariants, true whenever the engine's
// lock is free:
//   - A group whose stored start on a queue is complete (groupMeta.complete: it has popped the
//     queue queue-wide, or sought) has a cursorState in every partition of that queue; any other
//     group has one only in the partitions it popped by name (and, in 0.15 mode, those it acked
//     or read under a start 0.15 did not store, as 0.15 keeps them).
//   - gc is in gc.ix.ready exactly when it is ready: no lease of the group holds it and a
//     message lies above its cursor. Its key is readyAt, the createdAt of that first message,
//     then the partition's creation order: the order in which pops take ready partitions.
//   - A lease whose expiry has passed still counts as live until the next pop or ack looks
//     (expireDue, liveLease), as it did before there was an index.
// Every change to a cursor, a lease hold or a partition's log ends with refresh(gc) (or
// cursorMoved), which restores the second invariant and tells the group's waiting pops
// (waiters.go).

// groupCursors is one group's cursors on one queue.
type groupCursors struct {
	q     *queue
	group string
	ready readySet
	n     int       // cursors
	sweep int64     // store step of the group's last queue-wide look (cursorState.counted)
	lags  *groupLag // the group's sums on q, nil while it is not attached (introspect_grouplag.go)
}

// readySet is a binary heap of ready cursors, oldest first message first. Each entry carries
// its key, so that sifting through a large set reads one array rather than every cursor.
type readySet []readyEntry

type readyEntry struct {
	at, order int64 // readyAt in Unix nanoseconds, then the partition's creation order
	gc        *cursorState
}

func (s readySet) less(i, j int) bool {
	if s[i].at != s[j].at {
		return s[i].at < s[j].at
	}
	return s[i].order < s[j].order
}

func (s readySet) swap(i, j int) {
	s[i], s[j] = s[j], s[i]
	s[i].gc.readyIdx, s[j].gc.readyIdx = i, j
}

func (s readySet) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !s.less(i, parent) {
			return
		}
		s.swap(i, parent)
		i = parent
	}
}

func (s readySet) down(i int) {
	for {
		least, l, r := i, 2*i+1, 2*i+2
		if l < len(s) && s.less(l, least) {
			least = l
		}
		if r < len(s) && s.less(r, least) {
			least = r
		}
		if least == i {
			return
		}
		s.swap(i, least)
		i = least
	}
}

func (s *readySet) push(gc *cursorState) {
	gc.readyIdx = len(*s)
	*s = append(*s, readyEntry{at: gc.readyAt.UnixNano(), order: gc.p.order, gc: gc})
	s.up(gc.readyIdx)
}

func (s *readySet) remove(gc *cursorState) {
	i, last := gc.readyIdx, len(*s)-1
	if i != last {
		s.swap(i, last)
	}
	(*s)[last] = readyEntry{}
	*s = (*s)[:last]
	gc.readyIdx = -1
	if i != last {
		s.fix(i)
	}
}

// fix restores the order after the key of the entry at i changed.
func (s readySet) fix(i int) {
	s.up(i)
	s.down(i)
}

// top is the partition a pop of the group takes first, nil when none is ready.
func (s readySet) top() *cursorState {
	if len(s) == 0 {
		return nil
	}
	return s[0].gc
}

// refresh puts gc where the ready invariant wants it, after any change to its cursor, its
// lease, its retry counter or its partition's log, and recounts the partition for
// introspection. A cursor that becomes ready wakes the group's waiting pops that can read its
// partition.
func (e *Engine) refresh(gc *cursorState) {
	e.refreshReady(gc)
	gc.p.cursorChanged(gc)
	gc.relag()
}

// refreshReady is refresh without the recount, for a change that recounts the partition once
// for all its cursors (a push).
func (e *Engine) refreshReady(gc *cursorState) {
	ready := gc.lease == nil && gc.available() > 0
	if !ready {
		if gc.readyIdx >= 0 {
			gc.ix.ready.remove(gc)
		}
		return
	}
	at := gc.p.msgs[gc.cursor+1].createdAt
	if gc.readyIdx >= 0 {
		if !at.Equal(gc.readyAt) {
			gc.readyAt = at
			gc.ix.ready[gc.readyIdx].at = at.UnixNano()
			gc.ix.ready.fix(gc.readyIdx)
		}
		return
	}
	gc.readyAt = at
	gc.ix.ready.push(gc)
	e.wakeFor(gc)
}

// cursorsOf is the group's cursors on q, made empty if it has none.
func (e *Engine) cursorsOf(q *queue, group string) *groupCursors {
	ix := q.cursors[group]
	if ix == nil {
		ix = &groupCursors{q: q, group: group, lags: q.groupLags[group]}
		q.cursors[group] = ix
	}
	return ix
}

// placeCursor gives the group a cursor in p at offset cursor.
func (e *Engine) placeCursor(p *partition, group string, cursor int64) *cursorState {
	ix := e.cursorsOf(p.q, group)
	gc := &cursorState{p: p, ix: ix, group: group, cursor: cursor, readyIdx: -1, slowIdx: -1}
	gc.lag = pairLag{p: p, gc: gc, idx: -1}
	p.groups[group] = gc
	ix.n++
	if ix.lags != nil { // the cursor's part takes the place of what the group's start gave it
		ix.lags.unshadow(p)
	}
	if keepsSlow(gc) {
		heap.Push(&p.slow, gc)
	}
	e.refresh(gc)
	if ix.n == 1 && p.q.groups[group] == nil { // attached by this cursor alone (0.15 acks)
		e.groupChanged(p.q, group)
	}
	return gc
}

// completeCursors gives the group of m a cursor at its start in every partition of its queue
// that has none, once: a queue-wide pop needs them all in the ready set.
func (e *Engine) completeCursors(m *groupMeta) {
	if m.complete {
		return
	}
	m.complete = true
	for _, p := range m.q.parts {
		if p.groups[m.group] == nil {
			e.placeCursor(p, m.group, m.initialCursor(p))
		}
	}
	m.q.listSpecial() // the heaps cover it now; no partition's counts changed
}

// cursorIn is the group's cursor in p, placed at the group's start if it has none.
func (e *Engine) cursorIn(p *partition, m *groupMeta) *cursorState {
	if gc := p.groups[m.group]; gc != nil {
		return gc
	}
	return e.placeCursor(p, m.group, m.initialCursor(p))
}

// dropCursor deletes the group's cursor in gc's partition, with what refers to it.
func (e *Engine) dropCursor(gc *cursorState) {
	if gc.lease != nil {
		e.forgetLease(gc.lease)
	}
	if gc.readyIdx >= 0 {
		gc.ix.ready.remove(gc)
	}
	e.clearExpired(gc)
	if gc.slowIdx >= 0 {
		heap.Remove(&gc.p.slow, gc.slowIdx)
	}
	if gc.ix.lags != nil { // its callers follow it with groupChanged, which gives p its shadow
		gc.ix.lags.drop(&gc.lag)
	}
	delete(gc.p.groups, gc.group)
	if gc.ix.n--; gc.ix.n == 0 && gc.ix.q.cursors[gc.group] == gc.ix {
		delete(gc.ix.q.cursors, gc.group)
	}
	gc.p.recount()
}

// dropCursors deletes every cursor of the group on q and reports how many counted. The caller
// follows it with groupChanged.
func (e *Engine) dropCursors(q *queue, group string) (counted int) {
	if q.cursors[group] == nil {
		return 0
	}
	for _, p := range q.parts {
		if gc := p.groups[group]; gc != nil {
			if gc.counted() {
				counted++
			}
			e.dropCursor(gc)
		}
	}
	return counted
}
