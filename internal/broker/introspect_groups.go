package broker

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/queenmq/queen-go/internal/wire"
)

// lagging is the time lag above which a group summary's state is Lagging (R161).
const lagging = 300

// ConsumerGroups answers one summary per (attached group, queue), by group then queue name
// (R160, R161). A queue other than "" keeps that queue's entries.
func (e *Engine) ConsumerGroups(queueName string) []wire.GroupSummary {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	out := []wire.GroupSummary{}
	for _, q := range e.queuesFor(queueName) {
		for _, g := range attachedGroups(q) {
			out = append(out, groupSummary(q, g, now))
		}
	}
	slices.SortFunc(out, func(a, b wire.GroupSummary) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.QueueName, b.QueueName))
	})
	return out
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

func groupSummary(q *queue, group string, now time.Time) wire.GroupSummary {
	m := q.groups[group]
	s := wire.GroupSummary{Name: group, QueueName: q.name, Topics: []string{q.name}, Conflation: ptr(m != nil && m.conflation)}
	var totalLag int64
	active := false
	for _, p := range q.parts {
		v := viewOf(p, group, m, now)
		if v.gc != nil && len(v.gc.attempts) > 0 {
			s.Members++
		}
		if v.lag > 0 {
			s.PartitionsWithLag++
		}
		totalLag += v.lag
		s.MaxTimeLag = max(s.MaxTimeLag, v.timeLag)
		active = active || v.live != nil || (v.gc != nil && !v.gc.consumption.lastConsumedAt.IsZero())
	}
	s.TotalLag = &totalLag
	switch {
	case s.MaxTimeLag > lagging:
		s.State = "Lagging"
	case active:
		s.State = "Stable"
	default:
		s.State = "Dead"
	}
	if m != nil && group != QueueMode {
		mode, ts := "all", time.Time{}
		switch m.start {
		case startNew:
			mode, ts = "new", m.decidedAt
		case startFrom:
			mode, ts = "timestamp", m.from
		}
		s.SubscriptionMode = &mode
		s.SubscriptionTimestamp = wire.AtOrNil(ts)
		s.SubscriptionCreatedAt = wire.AtOrNil(m.decidedAt)
	}
	return s
}

// ConsumerGroup answers a group's partitions on every queue it is attached to, or on the named
// one (R162); ErrGroupNotFound when there is none.
func (e *Engine) ConsumerGroup(group, queueName string) (wire.GroupDetail, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if group == "" {
		group = QueueMode
	}
	now := e.now()
	out := wire.GroupDetail{}
	for _, q := range e.queuesFor(queueName) {
		if !isAttached(q, group) {
			continue
		}
		m := q.groups[group]
		parts := partitionsByName(q)
		list := make([]wire.GroupPartition, 0, len(parts))
		for _, p := range parts {
			list = append(list, groupPartition(p, viewOf(p, group, m, now)))
		}
		out[q.name] = wire.GroupDetailQueue{Partitions: list}
	}
	if len(out) == 0 {
		return nil, ErrGroupNotFound
	}
	return out, nil
}

// isAttached reports whether the group has state on q (R154), in O(partitions).
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

func groupPartition(p *partition, v groupView) wire.GroupPartition {
	gp := wire.GroupPartition{
		Partition: p.name, PartitionID: ptr(p.id), Cursor: ptr(v.pos),
		OffsetLag: v.lag, Pending: ptr(v.pending), Processing: ptr(v.processing),
		TimeLagSeconds: v.timeLag, LeaseActive: v.live != nil, Retries: ptr(v.retries()),
	}
	if v.live != nil {
		gp.WorkerID = ptr(v.live.id)
		gp.LeaseExpiresAt = wire.AtOrNil(v.live.expires)
	}
	if v.gc != nil {
		gp.LastConsumedAt = wire.AtOrNil(v.gc.consumption.lastConsumedAt)
		gp.TotalConsumed = v.gc.consumption.totalConsumed
	}
	return gp
}

// LaggingQuery selects the lagging list (R163). Empty names do not filter.
type LaggingQuery struct {
	MinLagSeconds int64
	Queue, Group  string
}

// Lagging lists the (attached group, partition) pairs whose time lag is above MinLagSeconds,
// most lagging first (R163).
func (e *Engine) Lagging(lq LaggingQuery) []wire.LaggingEntry {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	out := []wire.LaggingEntry{}
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
				entry := wire.LaggingEntry{
					ConsumerGroup: g, QueueName: q.name, PartitionName: p.name, PartitionID: p.id,
					OffsetLag: v.lag, TimeLagSeconds: v.timeLag, LagHours: hours(v.timeLag),
					OldestUnconsumedAt: wire.AtOrNil(p.msgs[v.oldest].createdAt),
				}
				if v.gc != nil {
					entry.LastConsumedAt = wire.AtOrNil(v.gc.consumption.lastConsumedAt)
				}
				if v.live != nil {
					entry.WorkerID = ptr(v.live.id)
				}
				out = append(out, entry)
			}
		}
	}
	slices.SortFunc(out, func(a, b wire.LaggingEntry) int {
		return cmp.Or(cmp.Compare(b.TimeLagSeconds, a.TimeLagSeconds), cmp.Compare(a.ConsumerGroup, b.ConsumerGroup),
			cmp.Compare(a.QueueName, b.QueueName), cmp.Compare(a.PartitionName, b.PartitionName))
	})
	return out
}

// hours is seconds / 3600 rounded half up to 2 decimals (R163).
func hours(seconds int64) float64 {
	return math.Floor(float64(seconds)/36+0.5) / 100
}
