package broker

import (
	"container/heap"
	"time"
)

// The counts a queue summary sums over its partitions (messages, pending, processing,
// completed, failed, dead letters) are kept as the state changes, so that the queue list, a
// queue summary and the overview read them without walking partitions and groups.
//
// Each partition keeps its slowest view and the counts read from it (its tally), worked out as if
// every lease it holds were live; its queue keeps the tallies' sum. Every change that can move a
// partition's slowest view recounts that partition: a push, a cursor's move (ack, autoAck,
// seek, conflation), a lease taken or ended (expiry included), a retry spent, a dead letter
// filed or dropped, a cursor placed or dropped. A change of which groups are attached to a queue
// recounts all its partitions. A lease whose expiry has passed counts as expired before its timer
// has ended it, so a read corrects the few partitions such leases hold (dueHolds) with their
// exact counts.
//
// A recount costs O(log groups) plus the queue's special groups. For a group that does not
// conflate, offsetLag is the partition's last offset less the group's position whatever its
// lease, so the slowest such group is the one furthest back: each partition keeps the cursors of
// those groups in a heap, furthest back first (ties: queue mode, then byte order). The other
// attached groups are the queue's special ones, looked at on each recount: conflating groups
// (whose lag is at most 2) and groups that may lack a cursor in some partition (a group that has
// only popped partitions by name, or has no stored start), whose position there is where their
// start would place a cursor.

// tally is a partition's counts, or their sum over a queue; completed is what the others leave.
type tally struct {
	total, pending, processing, failed, deadLetter int64
}

func (t *tally) add(o tally) {
	t.total += o.total
	t.pending += o.pending
	t.processing += o.processing
	t.failed += o.failed
	t.deadLetter += o.deadLetter
}

func (t *tally) sub(o tally) {
	t.total -= o.total
	t.pending -= o.pending
	t.processing -= o.processing
	t.failed -= o.failed
	t.deadLetter -= o.deadLetter
}

func (t tally) counts() Counts {
	return Counts{
		Total: t.total, Pending: t.pending, Processing: t.processing,
		Completed: t.total - t.pending - t.processing, Failed: t.failed, DeadLetter: t.deadLetter,
	}
}

// tallyOf reads p's counts from its slowest view w.
func tallyOf(p *partition, w *groupView) tally {
	t := tally{total: int64(len(p.msgs)), pending: w.pending, processing: w.processing, deadLetter: p.stats.dead}
	if w.gc != nil && w.gc.retries > 0 {
		t.failed = 1
	}
	return t
}

// slowHeap is a partition's cursors of the groups that do not conflate, furthest back first, as
// a container/heap. Each cursor knows its place (cursorState.slowIdx, -1 when not in it).
type slowHeap []*cursorState

func (h slowHeap) Len() int { return len(h) }

func (h slowHeap) Less(i, j int) bool {
	if h[i].cursor != h[j].cursor {
		return h[i].cursor < h[j].cursor
	}
	return slowerTie(h[i].group, h[j].group)
}

func (h slowHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].slowIdx, h[j].slowIdx = i, j
}

func (h *slowHeap) Push(x any) {
	gc := x.(*cursorState)
	gc.slowIdx = len(*h)
	*h = append(*h, gc)
}

func (h *slowHeap) Pop() any {
	old := *h
	gc := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	gc.slowIdx = -1
	return gc
}

// keepsSlow reports whether gc belongs in its partition's heap: its group does not conflate.
func keepsSlow(gc *cursorState) bool {
	m := gc.p.q.groups[gc.group]
	return m == nil || !m.conflation
}

// cursorChanged follows a change of gc (its cursor, lease or retry counter) into its partition's
// heap and counts.
func (p *partition) cursorChanged(gc *cursorState) {
	if gc.slowIdx >= 0 {
		heap.Fix(&p.slow, gc.slowIdx)
	}
	p.recount()
}

// recount works out p's slowest view again, as if every lease it holds were live, and moves
// its queue's sums by the difference.
func (p *partition) recount() {
	w := p.slowest(time.Time{}, false)
	t := tallyOf(p, &w)
	p.q.sum.sub(p.tally)
	p.q.sum.add(t)
	p.held, p.tally = w, t
	if k := p.q.overview; k != nil {
		k.mark(p)
	}
}

// slowest is p's slowest view: exact at now, or, when not exact, as if every held lease were
// live and without its timeLag.
func (p *partition) slowest(now time.Time, exact bool) groupView {
	q := p.q
	var best groupView
	found := false
	consider := func(v groupView) {
		if !found || v.lag > best.lag || (v.lag == best.lag && slowerTie(v.group, best.group)) {
			best, found = v, true
		}
	}
	if len(p.slow) > 0 {
		gc := p.slow[0]
		consider(viewAt(p, gc, gc.group, q.groups[gc.group], now, exact))
	}
	for _, g := range q.special {
		gc := p.groups[g]
		if gc != nil && gc.slowIdx >= 0 {
			continue // the heap has it
		}
		consider(viewAt(p, gc, g, q.groups[g], now, exact))
	}
	if !found { // no group attached: queue mode, before offset 0
		return viewAt(p, nil, QueueMode, nil, now, exact)
	}
	return best
}

// groupChanged follows a change of which groups are attached to q, or of how one of them is
// kept (a start stored or forgotten, its cursors completed or dropped): the group's cursors
// join or leave their heaps, the special groups are listed again, and every partition of q is
// recounted. O(partitions), as the changes that call it already are.
func (e *Engine) groupChanged(q *queue, group string) {
	if ix := q.cursors[group]; ix != nil && ix.n > 0 {
		for _, p := range q.parts {
			gc := p.groups[group]
			switch {
			case gc == nil:
			case keepsSlow(gc) && gc.slowIdx < 0:
				heap.Push(&p.slow, gc)
			case !keepsSlow(gc) && gc.slowIdx >= 0:
				heap.Remove(&p.slow, gc.slowIdx)
			}
		}
	}
	q.listSpecial()
	for _, p := range q.parts {
		p.recount()
	}
	e.keepGroupLag(q, group)
}

// listSpecial lists the groups attached to q that its partitions' heaps may not cover: those
// that conflate, and those without a cursor in every partition (no stored start, or a start not
// yet completed by a queue-wide pop or a seek).
func (q *queue) listSpecial() {
	q.special = q.special[:0]
	for _, g := range attachedGroups(q) {
		if m := q.groups[g]; m == nil || !m.complete || m.conflation {
			q.special = append(q.special, g)
		}
	}
}

// dueHolds are the cursors held by leases whose expiry has passed at now but that no timer or
// pop has ended yet, and due their partitions, whose tallies are therefore not their counts at
// now; nil when there is none, the usual case. O(such leases and their partitions).
func (e *Engine) dueHolds(now time.Time) (holds []*cursorState, due map[*partition]bool) {
	h := e.expiries
	if len(h) == 0 || now.Before(h[0].expires) {
		return nil, nil
	}
	due = map[*partition]bool{}
	var walk func(i int)
	walk = func(i int) {
		if i >= len(h) || now.Before(h[i].expires) {
			return
		}
		for _, gc := range h[i].holds {
			if gc.lease == h[i] {
				holds = append(holds, gc)
				due[gc.p] = true
			}
		}
		walk(2*i + 1)
		walk(2*i + 2)
	}
	walk(0)
	return holds, due
}

// countsAt is p's slowest view and counts at now; due is from dueHolds(now).
func countsAt(p *partition, now time.Time, due map[*partition]bool) (groupView, tally) {
	if due[p] {
		w := p.slowest(now, true)
		return w, tallyOf(p, &w)
	}
	w := p.held
	w.timeLag = timeLag(p, w.oldest, now)
	return w, p.tally
}

// queueTally is q's counts at now: the kept sum, with the partitions in due counted exactly.
func queueTally(q *queue, now time.Time, due map[*partition]bool) tally {
	sum := q.sum
	for p := range due {
		if p.q == q {
			_, t := countsAt(p, now, due)
			sum.sub(p.tally)
			sum.add(t)
		}
	}
	return sum
}
