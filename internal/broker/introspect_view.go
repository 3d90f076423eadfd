package broker

import (
	"slices"
	"strings"
	"time"
)

// The introspection routes are reads: nothing here creates a cursor, a start or a queue,
// or ends a lease. A lease whose expiry has passed counts as expired even if its timer has not
// fired yet, so every read compares expiries with the step's now instead of calling liveLease.

// consumption is what a group's cursor in a partition has done, for introspection.
type consumption struct {
	lastConsumedAt time.Time // last forward move other than by a seek; zero if never
	totalConsumed  int64     // messages finished
}

// partitionStats are a partition's counters kept by the write paths for introspection.
type partitionStats struct {
	created         time.Time
	batchesConsumed int64                   // leased batches ended by their end, plus autoAck pops
	deadAt          map[int64][]*deadLetter // the stored dead letters by offset, whichever group filed them
	dead            int64                   // stored dead letters of the partition
}

// consumed records a forward move of gc's cursor from before, other than by a seek. less is 1 when
// the move dead-lettered or dropped the message it reached, which then counts as not finished.
func (e *Engine) consumed(gc *cursorState, before, less int64) {
	if gc.cursor <= before {
		return
	}
	n := gc.cursor - before - less
	now := e.now()
	gc.consumption.lastConsumedAt = now
	gc.consumption.totalConsumed += n
	e.rates.processed.add(now, n)
	gc.relag()
}

// noteDeadLetter and forgetDeadLetter keep the partition's dead-letter index.
func (p *partition) noteDeadLetter(d *deadLetter) {
	if p.stats.deadAt == nil {
		p.stats.deadAt = make(map[int64][]*deadLetter)
	}
	p.stats.deadAt[d.off] = append(p.stats.deadAt[d.off], d)
	p.stats.dead++
	p.recount()
}

func (p *partition) forgetDeadLetter(d *deadLetter) {
	list := p.stats.deadAt[d.off]
	if i := slices.Index(list, d); i >= 0 {
		list = slices.Delete(list, i, i+1)
		p.stats.dead--
	}
	if len(list) == 0 {
		delete(p.stats.deadAt, d.off)
	} else {
		p.stats.deadAt[d.off] = list
	}
	p.recount()
}

// rateWindow is how far back the overview's throughput looks.
const rateWindow = 300

// secondCounter counts events per second over the last rateWindow seconds.
type secondCounter struct {
	sec   [rateWindow]int64 // the unix second each bucket holds
	count [rateWindow]int64
}

func (c *secondCounter) add(now time.Time, n int64) {
	s := now.Unix()
	i := s % rateWindow
	if c.sec[i] != s {
		c.sec[i], c.count[i] = s, 0
	}
	c.count[i] += n
}

// sum is the count over the rateWindow seconds ending at now.
func (c *secondCounter) sum(now time.Time) int64 {
	s, total := now.Unix(), int64(0)
	for i := range c.sec {
		if c.sec[i] > s-rateWindow && c.sec[i] <= s && c.count[i] > 0 {
			total += c.count[i]
		}
	}
	return total
}

// throughput counts the messages stored and finished, for the overview.
type throughput struct {
	ingested, processed secondCounter
}

// groupView is one attached group's numbers in one partition.
type groupView struct {
	group      string
	gc         *cursorState // nil where the position is not a cursor
	pos        int64
	live       *lease // G's live lease on the partition, nil if none
	leaseFirst int64
	leaseLast  int64

	processing, pending, lag int64
	oldest                   int64 // offset of the oldest owed message; -1 when nothing is owed
	timeLag                  int64 // whole seconds
}

// position is where the group is in p: its cursor, or where its stored start would place one,
// else before offset 0. A binary search at most.
func position(p *partition, gc *cursorState, m *groupMeta) int64 {
	switch {
	case gc != nil:
		return gc.cursor
	case m != nil:
		return m.initialCursor(p)
	}
	return -1
}

// liveAt is gc's lease if it is live at now, else nil.
func liveAt(gc *cursorState, now time.Time) *lease {
	if gc == nil || gc.lease == nil || gc.lease.ended || !now.Before(gc.lease.expires) {
		return nil
	}
	return gc.lease
}

// viewOf computes the group's numbers in p at now: what it holds leased (processing), what is
// after that (pending), the two together (lag) and the age of the oldest owed message; m is its
// stored start on the queue, or nil.
func viewOf(p *partition, group string, m *groupMeta, now time.Time) groupView {
	return viewAt(p, p.groups[group], group, m, now, true)
}

// viewAt is viewOf for the group's cursor gc (nil when it has none in p). Not exact, it counts
// every lease gc holds as live, whatever now, and leaves timeLag 0.
func viewAt(p *partition, gc *cursorState, group string, m *groupMeta, now time.Time, exact bool) groupView {
	v := groupView{group: group, gc: gc, pos: position(p, gc, m), oldest: -1}
	last := p.lastOffset()
	top := v.pos
	var l *lease
	switch {
	case exact:
		l = liveAt(gc, now)
	case gc != nil:
		l = gc.lease
	}
	if l != nil {
		v.live, v.leaseFirst, v.leaseLast = l, gc.first, gc.last
		if gc.last > v.pos {
			v.processing = gc.last - v.pos
			top = gc.last
		}
	}
	conflating := m != nil && m.conflation
	v.pending = max(last-top, 0)
	if conflating {
		v.pending = min(v.pending, 1)
	}
	v.lag = v.processing + v.pending
	if v.lag == 0 {
		return v
	}
	v.oldest = v.pos + 1
	if conflating && v.live == nil {
		v.oldest = last
	}
	if exact {
		v.timeLag = timeLag(p, v.oldest, now)
	}
	return v
}

// timeLag is the whole seconds from the createdAt of the message at off to now; 0 for off -1
// (nothing owed).
func timeLag(p *partition, off int64, now time.Time) int64 {
	if off < 0 {
		return 0
	}
	return int64(now.Sub(p.msgs[off].createdAt) / time.Second)
}

// retries is the view's retry counter.
func (v *groupView) retries() int64 {
	if v.gc == nil {
		return 0
	}
	return int64(v.gc.retries)
}

// attachedGroups lists the groups attached to q in byte order: a stored start, or a
// cursor in one of its partitions. O(groups).
func attachedGroups(q *queue) []string {
	names := make([]string, 0, len(q.groups)+len(q.cursors))
	for g := range q.groups {
		names = append(names, g)
	}
	for g, ix := range q.cursors {
		if ix.n > 0 && q.groups[g] == nil {
			names = append(names, g)
		}
	}
	slices.Sort(names)
	return names
}

// isAttached reports whether the group has state on q.
func isAttached(q *queue, group string) bool {
	if q.groups[group] != nil {
		return true
	}
	ix := q.cursors[group]
	return ix != nil && ix.n > 0
}

// slowerTie breaks a tie between two views of the same offsetLag: the one it reports true for
// is the slowest view (queue mode first, then byte order).
func slowerTie(a, b string) bool {
	switch {
	case a == QueueMode:
		return b != QueueMode
	case b == QueueMode:
		return false
	}
	return strings.Compare(a, b) < 0
}

// skipped records a conflating pop's move past the older messages: it counts as consumption's
// time but finishes nothing.
func (e *Engine) skipped(gc *cursorState, before int64) {
	if gc.cursor > before {
		gc.consumption.lastConsumedAt = e.now()
		gc.relag()
	}
}
