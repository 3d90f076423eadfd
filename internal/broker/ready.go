package broker

import "container/heap"

// The ready index lets a pop find its partitions without looking at the others (R150).
//
// A group's cursors on a queue hang off one groupCursors (q.cursors[group]), whose ready set
// is a heap of the cursors a pop of the group can take. Invariants, true whenever the engine's
// lock is free:
//   - A group with a stored start on a queue (q.groups[group]) has a cursorState in every
//     partition of that queue. (Only 0.15 mode keeps cursors of a group without a stored start,
//     in the partitions it read, as 0.15 does.)
//   - gc is in gc.ix.ready exactly when it is ready: no lease of the group holds it and a
//     message lies above its cursor. Its key is readyAt, the createdAt of that first message,
//     then the partition's creation order: the order in which pops take ready partitions (R19).
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
	n     int   // cursors
	sweep int64 // store step of the group's last queue-wide look (cursorState.counted)
}

// readySet is a heap of ready cursors, oldest first message first.
type readySet []*cursorState

func (s readySet) Len() int { return len(s) }
func (s readySet) Less(i, j int) bool {
	a, b := s[i], s[j]
	if !a.readyAt.Equal(b.readyAt) {
		return a.readyAt.Before(b.readyAt)
	}
	return a.p.order < b.p.order
}
func (s readySet) Swap(i, j int) {
	s[i], s[j] = s[j], s[i]
	s[i].readyIdx, s[j].readyIdx = i, j
}
func (s *readySet) Push(x any) {
	gc := x.(*cursorState)
	gc.readyIdx = len(*s)
	*s = append(*s, gc)
}
func (s *readySet) Pop() any {
	old := *s
	gc := old[len(old)-1]
	old[len(old)-1] = nil
	*s = old[:len(old)-1]
	gc.readyIdx = -1
	return gc
}

// top is the partition a pop of the group takes first, nil when none is ready.
func (s readySet) top() *cursorState {
	if len(s) == 0 {
		return nil
	}
	return s[0]
}

// refresh puts gc where the ready invariant wants it, after any change to its cursor, its
// lease or its partition's log. A cursor that becomes ready wakes the group's waiting pops
// that can read its partition.
func (e *Engine) refresh(gc *cursorState) {
	ready := gc.lease == nil && gc.available() > 0
	if !ready {
		if gc.readyIdx >= 0 {
			heap.Remove(&gc.ix.ready, gc.readyIdx)
		}
		return
	}
	at := gc.p.msgs[gc.cursor+1].createdAt
	if gc.readyIdx >= 0 {
		if !at.Equal(gc.readyAt) {
			gc.readyAt = at
			heap.Fix(&gc.ix.ready, gc.readyIdx)
		}
		return
	}
	gc.readyAt = at
	heap.Push(&gc.ix.ready, gc)
	e.wakeFor(gc)
}

// placeCursor gives the group a cursor in p at offset cursor.
func (e *Engine) placeCursor(p *partition, group string, cursor int64) *cursorState {
	ix := p.q.cursors[group]
	if ix == nil {
		ix = &groupCursors{q: p.q, group: group}
		p.q.cursors[group] = ix
	}
	gc := &cursorState{p: p, ix: ix, group: group, cursor: cursor, readyIdx: -1}
	p.groups[group] = gc
	ix.n++
	e.refresh(gc)
	return gc
}

// placeCursors gives the group of m a cursor at its start in every partition of its queue that
// has none.
func (e *Engine) placeCursors(m *groupMeta) {
	for _, p := range m.q.parts {
		if p.groups[m.group] == nil {
			e.placeCursor(p, m.group, m.initialCursor(p))
		}
	}
}

// dropCursor deletes the group's cursor in gc's partition, with what refers to it.
func (e *Engine) dropCursor(gc *cursorState) {
	if gc.lease != nil {
		e.forgetLease(gc.lease)
	}
	if gc.readyIdx >= 0 {
		heap.Remove(&gc.ix.ready, gc.readyIdx)
	}
	e.clearExpired(gc)
	delete(gc.p.groups, gc.group)
	if gc.ix.n--; gc.ix.n == 0 && gc.ix.q.cursors[gc.group] == gc.ix {
		delete(gc.ix.q.cursors, gc.group)
	}
}

// dropCursors deletes every cursor of the group on q and reports how many counted.
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
