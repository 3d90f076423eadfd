package broker

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// lagging is the time lag above which a group summary's state is Lagging.
const lagging = 300

// ConsumerGroups answers one summary per (attached group, queue), by group then queue name.
// A queue other than "" keeps that queue's entries.
func (e *Engine) ConsumerGroups(queueName string) []GroupSummary {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	out := []GroupSummary{}
	for _, q := range e.queuesFor(queueName) {
		for _, g := range attachedGroups(q) {
			out = append(out, groupSummary(q, g, now))
		}
	}
	sortGroupSummaries(out)
	return out
}

// sortGroupSummaries orders summaries by group, then queue name.
func sortGroupSummaries(list []GroupSummary) {
	slices.SortFunc(list, func(a, b GroupSummary) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Queue, b.Queue))
	})
}

// queuesFor is the named queue, every queue for "", or none for an unknown name.
func (e *Engine) queuesFor(name string) []*queue {
	if name != "" {
		if q := e.queues[name]; q != nil {
			return []*queue{q}
		}
		return nil
	}
	qs := make([]*queue, 0, len(e.queues))
	for _, q := range e.queues {
		qs = append(qs, q)
	}
	return qs
}

func groupSummary(q *queue, group string, now time.Time) GroupSummary {
	m := q.groups[group]
	s := GroupSummary{Name: group, Queue: q.name, Conflation: m != nil && m.conflation}
	active := false
	for _, p := range q.parts {
		v := viewOf(p, group, m, now)
		if v.gc != nil && len(v.gc.attempts) > 0 {
			s.Members++
		}
		if v.lag > 0 {
			s.PartitionsWithLag++
		}
		s.TotalLag += v.lag
		s.MaxTimeLag = max(s.MaxTimeLag, v.timeLag)
		active = active || v.live != nil || (v.gc != nil && !v.gc.consumption.lastConsumedAt.IsZero())
	}
	s.State = groupState(s.MaxTimeLag, active)
	if m != nil && group != QueueMode {
		sub := Subscription{Mode: "all", CreatedAt: m.decidedAt}
		switch m.start {
		case startNew:
			sub.Mode, sub.Timestamp = "new", m.decidedAt
		case startFrom:
			sub.Mode, sub.Timestamp = "timestamp", m.from
		}
		s.Subscription = &sub
	}
	return s
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
// one; ErrGroupNotFound when there is none.
func (e *Engine) ConsumerGroup(group, queueName string) (GroupDetail, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if group == "" {
		group = QueueMode
	}
	now := e.now()
	out := GroupDetail{}
	for _, q := range e.queuesFor(queueName) {
		if !isAttached(q, group) {
			continue
		}
		m := q.groups[group]
		parts := partitionsByName(q)
		list := make([]GroupPartition, 0, len(parts))
		for _, p := range parts {
			list = append(list, groupPartition(p, viewOf(p, group, m, now)))
		}
		out[q.name] = list
	}
	if len(out) == 0 {
		return nil, ErrGroupNotFound
	}
	return out, nil
}

// isAttached reports whether the group has state on q, in O(partitions).
func isAttached(q *queue, group string) bool {
	if q.groups[group] != nil {
		return true
	}
	for _, p := range q.parts {
		if p.groups[group] != nil {
			return true
		}
	}
	return false
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

// LaggingQuery selects the lagging list. Empty names do not filter.
type LaggingQuery struct {
	MinLagSeconds int64
	Queue, Group  string
}

// Lagging lists the (attached group, partition) pairs whose time lag is above MinLagSeconds,
// most lagging first.
func (e *Engine) Lagging(lq LaggingQuery) []LaggingEntry {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	out := []LaggingEntry{}
	for _, q := range e.queuesFor(lq.Queue) {
		for _, g := range attachedGroups(q) {
			if lq.Group != "" && g != lq.Group {
				continue
			}
			m := q.groups[g]
			for _, p := range q.parts {
				v := viewOf(p, g, m, now)
				if v.timeLag <= lq.MinLagSeconds || v.oldest < 0 {
					continue
				}
				entry := laggingEntry(p, g, v)
				if v.gc != nil {
					entry.LastConsumedAt = v.gc.consumption.lastConsumedAt
				}
				if v.live != nil {
					entry.WorkerID = v.live.id
				}
				out = append(out, entry)
			}
		}
	}
	sortLagging(out)
	return out
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
func sortLagging(list []LaggingEntry) {
	slices.SortFunc(list, func(a, b LaggingEntry) int {
		return cmp.Or(cmp.Compare(b.TimeLagSeconds, a.TimeLagSeconds), cmp.Compare(a.Group, b.Group),
			cmp.Compare(a.Queue, b.Queue), cmp.Compare(a.Partition, b.Partition))
	})
}

// hours is seconds / 3600 rounded half up to 2 decimals.
func hours(seconds int64) float64 {
	return math.Floor(float64(seconds)/36+0.5) / 100
}
