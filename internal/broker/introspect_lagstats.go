package broker

import "time"

// The overview's lags (the min, max, average and median of every partition's slowest view's
// offsetLag and time lag) are read from trees of the partitions, so that the overview costs
// O(queues) under the lock, not O(partitions). A recount only marks its partition as due; the
// overview places the partitions marked since the last one in the trees, in steps, before it
// reads them: the consuming path pays O(1) a change, and a partition changed many times
// between two overviews is placed once.
//
// A partition's time lag is the whole seconds from the createdAt c of its oldest owed message
// to now (0 when it owes nothing), so the partitions in order of c, newest first, are in order
// of time lag: the k-th time lag is found as the k-th c, once the partitions that owe nothing
// (counted as 0) are placed among them. Their sum needs more: with now = a·1s + r and
// c = b·1s + t (0 ≤ r, t < 1s), the whole seconds from c to now are a − b, less 1 when t > r,
// so the sum is the count times a, less the sum of the b, less the count of t above r, each
// kept in a tree (plus 1 for each c after now whose distance to it is not whole seconds: a time
// lag rounds towards zero; a c after now is seen only when the wall clock has gone back).

// overviewLags holds the engine's partitions in three trees.
type overviewLags struct {
	lags   rankTree // every partition, by its slowest view's offsetLag (the value summed too)
	oldest rankTree // the partitions owing a message, by its createdAt (Unix ns); b summed
	frac   rankTree // the same, by its createdAt's fraction of a second t

	due []*partition // recounted since they were last placed
}

// partitionLags are one partition's nodes in the overview's trees.
type partitionLags struct {
	lag, oldest, frac rankNode
	due               bool // in overviewLags.due
}

// mark notes that p's slowest view changed since p was last placed in the trees.
func (k *overviewLags) mark(p *partition) {
	if !p.lagNodes.due {
		p.lagNodes.due = true
		k.due = append(k.due, p)
	}
}

// placeDue places the partitions marked since the last time, in steps; on return the trees
// hold every partition as it is in the stepper's current step.
func (k *overviewLags) placeDue(s *stepper) {
	for len(k.due) > 0 {
		last := len(k.due) - 1
		p := k.due[last]
		k.due[last] = nil
		k.due = k.due[:last]
		p.lagNodes.due = false
		if p.q.overview == k { // not in a queue deleted since
			k.place(p, &p.held)
		}
		s.did(1)
	}
}

const nanosPerSecond = int64(time.Second)

// floorDiv and floorMod divide by a second, rounding down.
func floorDiv(n int64) int64 {
	q := n / nanosPerSecond
	if n%nanosPerSecond < 0 {
		q--
	}
	return q
}

func floorMod(n int64) int64 { return n - floorDiv(n)*nanosPerSecond }

// place puts p in the trees with w as its slowest view.
func (k *overviewLags) place(p *partition, w *groupView) {
	n := &p.lagNodes
	n.lag.tie, n.oldest.tie, n.frac.tie = p.order, p.order, p.order
	k.lags.set(&n.lag, w.lag, w.lag)
	if w.oldest < 0 {
		k.oldest.drop(&n.oldest)
		k.frac.drop(&n.frac)
		return
	}
	c := p.msgs[w.oldest].createdAt.UnixNano()
	k.oldest.set(&n.oldest, c, floorDiv(c))
	k.frac.set(&n.frac, floorMod(c), 0)
}

// forget takes p out of the trees.
func (k *overviewLags) forget(p *partition) {
	k.lags.drop(&p.lagNodes.lag)
	k.oldest.drop(&p.lagNodes.oldest)
	k.frac.drop(&p.lagNodes.frac)
}

// maxFuture is how many partitions whose oldest owed message was created after now (the wall
// clock went back) the overview counts one by one; beyond it, it walks the partitions.
const maxFuture = 1024

// stats are the offset lags' and time lags' statistics at now; false when too many messages
// are dated after now to count them under the lock.
func (k *overviewLags) stats(now time.Time) (offset, timeLag LagStats, ok bool) {
	n := k.lags.len()
	if n == 0 {
		return LagStats{}, LagStats{}, true
	}
	at := func(i int) int64 { return k.lags.kth(i).key }
	offset = LagStats{
		Min: float64(at(0)), Max: float64(at(n - 1)),
		Avg: float64(k.lags.total() / int64(n)), Median: float64(at((n - 1) / 2)),
	}

	N := now.UnixNano()
	a, r := floorDiv(N), floorMod(N)
	m := k.oldest.len()
	none := n - m                                      // partitions owing nothing: time lag 0
	negative := k.oldest.above(N + nanosPerSecond - 1) // owed messages a whole second or more after now
	newest := func(i int) int64 { return (N - k.oldest.kth(m-1-i).key) / nanosPerSecond }
	ascending := func(i int) int64 { // the i-th time lag, smallest first
		switch {
		case i < negative:
			return newest(i)
		case i < negative+none:
			return 0
		}
		return newest(i - none)
	}
	total := int64(m)*a - k.oldest.total() - int64(k.frac.above(r))
	if future := k.oldest.above(N); future > 0 {
		if future > maxFuture {
			return offset, LagStats{}, false
		}
		k.oldest.walkDown(func(nd *rankNode) bool {
			if nd.key <= N {
				return false
			}
			if floorMod(nd.key) != r {
				total++
			}
			return true
		})
	}
	timeLag = LagStats{
		Min: float64(ascending(0)), Max: float64(ascending(n - 1)),
		Avg: float64(total / int64(n)), Median: float64(ascending((n - 1) / 2)),
	}
	return offset, timeLag, true
}
