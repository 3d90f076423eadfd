package broker

import (
	"cmp"
	"slices"
	"time"

	"github.com/queenmq/queen-go/internal/wire"
)

// 0.15's group reads (O32–O34) see a group only where it has a cursor row: a partition a pop
// or a seek of the group placed a cursor in, or, for a `new` or time start, every partition
// that had messages when the start was decided (0.15 seeds those rows then).

// row015 reports whether 0.15 would hold a cursor row for the group in p.
func row015(p *partition, gc *cursorState, m *groupMeta) bool {
	if gc != nil && gc.counted() {
		return true
	}
	return m != nil && m.start != startAll && !m.decidedAt.IsZero() &&
		len(p.msgs) > 0 && !p.msgs[0].createdAt.After(m.decidedAt)
}

// lastConsumed015 is a row's lastConsumedAt: a seeded row carries the time its start was
// decided until the cursor moves.
func lastConsumed015(gc *cursorState, m *groupMeta) *wire.Time015 {
	if gc != nil && !gc.consumption.lastConsumedAt.IsZero() {
		return &wire.Time015{Time: gc.consumption.lastConsumedAt}
	}
	if m != nil && m.start != startAll && !m.decidedAt.IsZero() {
		return &wire.Time015{Time: m.decidedAt}
	}
	return nil
}

// workerID015 is the id of the group's last lease on the partition while it has not been
// released: 0.15 keeps an expired lease's id (O33).
func workerID015(gc *cursorState) *string {
	switch {
	case gc == nil:
		return nil
	case gc.lease != nil:
		return ptr(gc.lease.id)
	case gc.expired != nil: // until its messages are handed out again
		return ptr(gc.expired.id)
	}
	return nil
}

// ConsumerGroups015 answers 0.15's group list: every queue, members and lag over the cursor
// rows, totalLag null, maxTimeLag the age of the newest owed message (O32).
func (e *Engine) ConsumerGroups015() []wire.GroupSummary015 {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	out := []wire.GroupSummary015{}
	for _, q := range e.queues {
		for _, g := range attachedGroups(q) {
			if s, ok := groupSummary015(q, g, now); ok {
				out = append(out, s)
			}
		}
	}
	slices.SortFunc(out, func(a, b wire.GroupSummary015) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.QueueName, b.QueueName))
	})
	return out
}

func groupSummary015(q *queue, group string, now time.Time) (wire.GroupSummary015, bool) {
	m := q.groups[group]
	s := wire.GroupSummary015{Name: group, QueueName: q.name, Topics: []string{q.name}}
	advanced := false
	for _, p := range q.parts {
		gc := p.groups[group]
		if !row015(p, gc, m) {
			continue
		}
		s.Members++
		if v := viewOf(p, group, m, now); v.lag > 0 {
			s.PartitionsWithLag++
			s.MaxTimeLag = max(s.MaxTimeLag, int64(now.Sub(p.msgs[p.lastOffset()].createdAt)/time.Second))
		}
		advanced = advanced || lastConsumed015(gc, m) != nil
	}
	if s.Members == 0 && m == nil {
		return s, false
	}
	switch {
	case s.MaxTimeLag > lagging:
		s.State = "Lagging"
	case advanced:
		s.State = "Stable"
	default:
		s.State = "Dead"
	}
	if m != nil && group != QueueMode && m.start != startAll {
		mode, ts := "new", m.decidedAt
		if m.start == startFrom {
			mode, ts = "timestamp", m.from
		}
		s.SubscriptionMode = &mode
		s.SubscriptionTimestamp = &wire.Time015{Time: ts}
		s.SubscriptionCreatedAt = &wire.Time015{Time: m.decidedAt}
	}
	return s, true
}

// ConsumerGroup015 answers 0.15's group detail: every queue, only the partitions with a cursor
// row (O33); ErrGroupNotFound when there is none.
func (e *Engine) ConsumerGroup015(group string) (wire.GroupDetail015, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	out := wire.GroupDetail015{}
	for _, q := range e.queues {
		m := q.groups[group]
		var list []wire.GroupPartition015
		for _, p := range partitionsByName(q) {
			gc := p.groups[group]
			if !row015(p, gc, m) {
				continue
			}
			v := viewOf(p, group, m, now)
			gp := wire.GroupPartition015{
				Partition: p.name, OffsetLag: v.lag, TimeLagSeconds: v.timeLag, LeaseActive: v.live != nil,
				LastConsumedAt: lastConsumed015(gc, m), WorkerID: workerID015(gc),
			}
			if gc != nil {
				gp.TotalConsumed = gc.consumption.totalConsumed
			}
			list = append(list, gp)
		}
		if len(list) > 0 {
			out[q.name] = wire.GroupDetailQueue015{Partitions: list}
		}
	}
	if len(out) == 0 {
		return nil, ErrGroupNotFound
	}
	return out, nil
}

// Lagging015 answers 0.15's lagging list: the cursor rows owing a message whose time lag is
// above minLagSeconds, which may be negative; no filters (O34).
func (e *Engine) Lagging015(minLagSeconds int64) []wire.LaggingEntry015 {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	out := []wire.LaggingEntry015{}
	for _, q := range e.queues {
		for _, g := range attachedGroups(q) {
			m := q.groups[g]
			for _, p := range q.parts {
				gc := p.groups[g]
				if !row015(p, gc, m) {
					continue
				}
				v := viewOf(p, g, m, now)
				if v.oldest < 0 || v.timeLag <= minLagSeconds {
					continue
				}
				out = append(out, wire.LaggingEntry015{
					ConsumerGroup: g, QueueName: q.name, PartitionName: p.name, PartitionID: p.id,
					OffsetLag: v.lag, TimeLagSeconds: v.timeLag, LagHours: hours(v.timeLag),
					OldestUnconsumedAt: &wire.Time015{Time: p.msgs[v.oldest].createdAt},
					LastConsumedAt:     lastConsumed015(gc, m), WorkerID: workerID015(gc),
				})
			}
		}
	}
	slices.SortFunc(out, func(a, b wire.LaggingEntry015) int {
		return cmp.Or(cmp.Compare(b.TimeLagSeconds, a.TimeLagSeconds), cmp.Compare(a.ConsumerGroup, b.ConsumerGroup),
			cmp.Compare(a.QueueName, b.QueueName), cmp.Compare(a.PartitionName, b.PartitionName))
	})
	return out
}

// CursorRows015 are the groups with a cursor row in the partition with the given id, for a
// 0.15 message detail (O36).
func (e *Engine) CursorRows015(partitionID string) map[string]bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.partitions[partitionID]
	if p == nil {
		return nil
	}
	rows := map[string]bool{}
	for _, g := range attachedGroups(p.q) {
		if row015(p, p.groups[g], p.q.groups[g]) {
			rows[g] = true
		}
	}
	return rows
}

// consumed015 records an ack as 0.15's cursor row does: every ack sets lastConsumedAt, and
// only a completed one counts towards totalConsumed (a dead-lettered message counts 0).
func (e *Engine) consumed015(gc *cursorState, completed bool) {
	now := e.now()
	gc.consumption.lastConsumedAt = now
	if completed {
		gc.consumption.totalConsumed++
		e.rates.processed.add(now, 1)
	}
}
