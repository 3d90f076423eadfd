package broker

import (
	"cmp"
	"math"
	"slices"
)

// lagging is the time lag above which a group summary's state is Lagging.
const lagging = 300

// Page is one page of a list: at most Limit entries (every one for 0 or less) after the first
// Offset.
type Page struct{ Limit, Offset int }

// of is the part of n entries the page holds, as [start, end).
func (pg Page) of(n int) (start, end int) {
	start = min(max(pg.Offset, 0), n)
	end = n
	if pg.Limit > 0 {
		end = start + min(pg.Limit, n-start)
	}
	return start, end
}

// ConsumerGroups answers one summary per (attached group, queue), by group then queue name, the
// page asked for. A queue other than "" keeps that queue's entries. It names the pairs first,
// then reads the page's from the sums each group keeps: O(queues + groups), and the parts
// changed since the last read, in steps.
func (e *Engine) ConsumerGroups(queueName string, pg Page) []GroupSummary {
	s := e.steps()
	defer s.done()
	type pair struct {
		group string
		q     *queue
	}
	var pairs []pair
	for _, q := range e.queuesFor(queueName) {
		if e.queues[q.name] != q { // deleted between two steps
			continue
		}
		groups := attachedGroups(q)
		for _, g := range groups {
			pairs = append(pairs, pair{g, q})
		}
		s.did(1 + len(groups))
	}
	s.outside(func() {
		slices.SortFunc(pairs, func(a, b pair) int {
			return cmp.Or(cmp.Compare(a.group, b.group), cmp.Compare(a.q.name, b.q.name))
		})
	})
	start, end := pg.of(len(pairs))
	out := make([]GroupSummary, 0, end-start)
	for _, pr := range pairs[start:end] {
		if !stillAttached(e, pr.q, pr.group) { // gone between two steps
			continue
		}
		if sum, ok := groupSummary(s, pr.q, pr.group); ok {
			out = append(out, sum)
		}
		s.did(1)
	}
	return out
}

// sortGroupSummaries orders summaries by group, then queue name.
func sortGroupSummaries(list []GroupSummary) {
	slices.SortFunc(list, func(a, b GroupSummary) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Queue, b.Queue))
	})
}

// queuesFor is the named queue, every queue for "" (in creation order), or none for an unknown
// name.
func (e *Engine) queuesFor(name string) []*queue {
	if name != "" {
		if q := e.queues[name]; q != nil {
			return []*queue{q}
		}
		return nil
	}
	return slices.Clone(e.order)
}

// groupSummary is the group's summary on q, read from its kept sums at the step's now once the
// parts changed since the last read are worked out: O(those parts, in steps, and the leases
// whose expiry has passed unnoticed). False when the group or the queue went in the meantime.
func groupSummary(s *stepper, q *queue, group string) (GroupSummary, bool) {
	gl, ok := workDue(s, q, group)
	if !ok {
		return GroupSummary{}, false
	}
	var stale []*cursorState
	for _, gc := range s.stale {
		if gc.p.q == q && gc.group == group {
			stale = append(stale, gc)
		}
	}
	sum, active := groupSums(gl, stale, s.now)
	sum.Name, sum.Queue = group, q.name
	m := q.groups[group]
	sum.Conflation = m != nil && m.conflation
	sum.State = groupState(sum.MaxTimeLag, active)
	sum.Subscription = subscriptionOf(group, m)
	return sum, true
}

// subscriptionOf is a group summary's subscription: its stored start m, nil for none or for
// queue mode.
func subscriptionOf(group string, m *groupMeta) *Subscription {
	if m == nil || group == QueueMode {
		return nil
	}
	sub := Subscription{Mode: "all", CreatedAt: m.decidedAt}
	switch m.start {
	case startNew:
		sub.Mode, sub.Timestamp = "new", m.decidedAt
	case startFrom:
		sub.Mode, sub.Timestamp = "timestamp", m.from
	}
	return &sub
}

// groupState is a group summary's state: Lagging past the lagging time lag, else Stable when
// the group has done something, else Dead.
func groupState(maxTimeLag int64, active bool) string {
	switch {
	case maxTimeLag > lagging:
		return "Lagging"
	case active:
		return "Stable"
	}
	return "Dead"
}

// ConsumerGroup answers a group's partitions on every queue it is attached to, or on the named
// one; ErrGroupNotFound when there is none. It reads the partitions in steps.
func (e *Engine) ConsumerGroup(group, queueName string) (GroupDetail, error) {
	if group == "" {
		group = QueueMode
	}
	s := e.steps()
	defer s.done()
	out := GroupDetail{}
	for _, a := range attachedOf(s, e.queuesFor(queueName), group) {
		q := a.q
		if !stillAttached(e, q, group) { // gone since
			continue
		}
		list := a.list
		for _, p := range a.parts {
			list = append(list, groupPartition(p, viewOf(p, group, q.groups[group], s.now)))
			if s.did(1) && !stillAttached(e, q, group) {
				list = nil
				break
			}
		}
		if list != nil {
			out[q.name] = list
		}
	}
	if len(out) == 0 {
		return nil, ErrGroupNotFound
	}
	return out, nil
}

// attachedTo is one queue a group is attached to, its partitions by name, and room for the
// group's detail there.
type attachedTo struct {
	q     *queue
	parts []*partition
	list  []GroupPartition
}

// attachedOf is the queues among queues the group is attached to, each with its partitions
// copied and sorted by name outside the lock.
func attachedOf(s *stepper, queues []*queue, group string) []attachedTo {
	var out []attachedTo
	for _, q := range queues {
		if isAttached(q, group) {
			out = append(out, attachedTo{q: q, parts: q.parts})
		}
	}
	s.outside(func() { // a queue's partitions are only ever appended: the copy can wait
		for i := range out {
			out[i].parts = slices.Clone(out[i].parts)
			sortByName(out[i].parts)
			out[i].list = make([]GroupPartition, 0, len(out[i].parts))
		}
	})
	return out
}

// stillAttached reports, after a step, whether the queue and the group on it are still there;
// a walk stops reading a pair that is gone.
func stillAttached(e *Engine, q *queue, group string) bool {
	return e.queues[q.name] == q && isAttached(q, group)
}

func groupPartition(p *partition, v groupView) GroupPartition {
	gp := GroupPartition{
		Partition: p.name, PartitionID: p.id, Cursor: v.pos,
		OffsetLag: v.lag, Pending: v.pending, Processing: v.processing,
		TimeLagSeconds: v.timeLag, LeaseActive: v.live != nil, Retries: v.retries(),
	}
	if v.live != nil {
		gp.WorkerID, gp.LeaseExpiresAt = v.live.id, v.live.expires
	}
	if v.gc != nil {
		gp.LastConsumedAt = v.gc.consumption.lastConsumedAt
		gp.TotalConsumed = v.gc.consumption.totalConsumed
	}
	return gp
}

// LaggingQuery selects the lagging list and its page. Empty names do not filter.
type LaggingQuery struct {
	MinLagSeconds int64
	Queue, Group  string
	Page
}

// Lagging lists the (attached group, partition) pairs whose time lag is above MinLagSeconds,
// most lagging first, the page asked for. It walks every pair in steps, keeping only the
// entries that can reach the page.
func (e *Engine) Lagging(lq LaggingQuery) []LaggingEntry {
	s := e.steps()
	defer s.done()
	top := &laggingTop{}
	if lq.Limit > 0 {
		top.keep = lq.Limit + max(lq.Offset, 0)
		pairs := 0 // at most
		for _, q := range e.queuesFor(lq.Queue) {
			pairs += (len(q.groups) + len(q.cursors)) * len(q.parts)
		}
		s.outside(func() { top.list = make([]LaggingEntry, 0, min(top.keep, pairs)) }) // not under the lock
	}
	for _, q := range e.queuesFor(lq.Queue) {
		for _, g := range attachedGroups(q) {
			if lq.Group != "" && g != lq.Group {
				continue
			}
			for i := 0; i < len(q.parts); i++ {
				p := q.parts[i]
				v := viewOf(p, g, q.groups[g], s.now)
				if v.timeLag > lq.MinLagSeconds && v.oldest >= 0 {
					entry := laggingEntry(p, g, v)
					if v.gc != nil {
						entry.LastConsumedAt = v.gc.consumption.lastConsumedAt
					}
					if v.live != nil {
						entry.WorkerID = v.live.id
					}
					top.add(entry)
				}
				if s.did(1) && !stillAttached(e, q, g) {
					break
				}
			}
		}
	}
	var out []LaggingEntry
	s.outside(func() {
		sortLagging(top.list)
		start, end := lq.Page.of(len(top.list))
		out = append([]LaggingEntry{}, top.list[start:end]...)
	})
	return out
}

// laggingTop keeps the first keep entries in the lagging list's order (every entry for keep
// 0), as a heap whose root is the last of them.
type laggingTop struct {
	keep int
	list []LaggingEntry
}

func (t *laggingTop) add(e LaggingEntry) {
	switch {
	case t.keep == 0:
		t.list = append(t.list, e)
	case len(t.list) < t.keep:
		t.list = append(t.list, e)
		t.up(len(t.list) - 1)
	case laggingOrder(e, t.list[0]) < 0: // before the last one kept: it takes its place
		t.list[0] = e
		t.down(0)
	}
}

// after reports whether the entry at i comes after the one at j in the list's order.
func (t *laggingTop) after(i, j int) bool { return laggingOrder(t.list[i], t.list[j]) > 0 }

func (t *laggingTop) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !t.after(i, parent) {
			return
		}
		t.list[i], t.list[parent] = t.list[parent], t.list[i]
		i = parent
	}
}

func (t *laggingTop) down(i int) {
	for {
		last, l, r := i, 2*i+1, 2*i+2
		if l < len(t.list) && t.after(l, last) {
			last = l
		}
		if r < len(t.list) && t.after(r, last) {
			last = r
		}
		if last == i {
			return
		}
		t.list[i], t.list[last] = t.list[last], t.list[i]
		i = last
	}
}

// laggingEntry is the group's entry for p in the lagging list, without its consumption.
func laggingEntry(p *partition, group string, v groupView) LaggingEntry {
	return LaggingEntry{
		Group: group, Queue: p.q.name, Partition: p.name, PartitionID: p.id,
		OffsetLag: v.lag, TimeLagSeconds: v.timeLag, LagHours: hours(v.timeLag),
		OldestUnconsumedAt: p.msgs[v.oldest].createdAt,
	}
}

// sortLagging orders the lagging list most lagging first, then by group, queue and partition.
func sortLagging(list []LaggingEntry) { slices.SortFunc(list, laggingOrder) }

func laggingOrder(a, b LaggingEntry) int {
	return cmp.Or(cmp.Compare(b.TimeLagSeconds, a.TimeLagSeconds), cmp.Compare(a.Group, b.Group),
		cmp.Compare(a.Queue, b.Queue), cmp.Compare(a.Partition, b.Partition))
}

// hours is seconds / 3600 rounded half up to 2 decimals.
func hours(seconds int64) float64 {
	return math.Floor(float64(seconds)/36+0.5) / 100
}
