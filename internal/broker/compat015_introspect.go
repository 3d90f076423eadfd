package broker

import (
	"time"
)

// The group reads of a 0.15 broker. What differs from 2.0's:
//
//   - a group is seen only where it has a cursor row: a partition a pop or a seek of the group
//     placed a cursor in, or, for a "new" or time start, every partition that had messages when
//     the start was decided (0.15 seeds those rows then);
//   - the reads take no filters: every queue is listed;
//   - a group's members and lag are counted over its rows, its maxTimeLag is the age of the
//     newest message it owes, and an "all" start is not reported;
//   - lastConsumedAt of a seeded row is the time its start was decided, until the cursor moves;
//   - workerId keeps the id of an expired lease until its messages are handed out again;
//   - a message's detail lists only the groups with a row in its partition.

// row015 reports whether 0.15 would hold a cursor row for the group in p.
func row015(p *partition, gc *cursorState, m *groupMeta) bool {
	if gc != nil && gc.counted() {
		return true
	}
	return m != nil && m.start != startAll && !m.decidedAt.IsZero() &&
		len(p.msgs) > 0 && !p.msgs[0].createdAt.After(m.decidedAt)
}

// lastConsumed015 is a row's lastConsumedAt, zero for none: a seeded row carries the time its
// start was decided until the cursor moves.
func lastConsumed015(gc *cursorState, m *groupMeta) time.Time {
	if gc != nil && !gc.consumption.lastConsumedAt.IsZero() {
		return gc.consumption.lastConsumedAt
	}
	if m != nil && m.start != startAll && !m.decidedAt.IsZero() {
		return m.decidedAt
	}
	return time.Time{}
}

// workerID015 is the id of the group's last lease on the partition while it has not been
// released, "" for none: 0.15 keeps an expired lease's id.
func workerID015(gc *cursorState) string {
	switch {
	case gc == nil:
		return ""
	case gc.lease != nil:
		return gc.lease.id
	case gc.expired != nil: // until its messages are handed out again
		return gc.expired.id
	}
	return ""
}

// ConsumerGroups015 answers 0.15's group list: every queue, members and lag over the cursor
// rows, maxTimeLag the age of the newest owed message.
func (e *Engine) ConsumerGroups015() []GroupSummary {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	out := []GroupSummary{}
	for _, q := range e.queues {
		for _, g := range attachedGroups(q) {
			if s, ok := groupSummary015(q, g, now); ok {
				out = append(out, s)
			}
		}
	}
	sortGroupSummaries(out)
	return out
}

func groupSummary015(q *queue, group string, now time.Time) (GroupSummary, bool) {
	m := q.groups[group]
	s := GroupSummary{Name: group, Queue: q.name}
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
		advanced = advanced || !lastConsumed015(gc, m).IsZero()
	}
	if s.Members == 0 && m == nil {
		return s, false
	}
	s.State = groupState(s.MaxTimeLag, advanced)
	if m != nil && group != QueueMode && m.start != startAll {
		sub := Subscription{Mode: "new", Timestamp: m.decidedAt, CreatedAt: m.decidedAt}
		if m.start == startFrom {
			sub.Mode, sub.Timestamp = "timestamp", m.from
		}
		s.Subscription = &sub
	}
	return s, true
}

// ConsumerGroup015 answers 0.15's group detail: every queue, only the partitions with a cursor
// row; ErrGroupNotFound when there is none.
func (e *Engine) ConsumerGroup015(group string) (GroupDetail, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	out := GroupDetail{}
	for _, q := range e.queues {
		m := q.groups[group]
		var list []GroupPartition
		for _, p := range partitionsByName(q) {
			gc := p.groups[group]
			if !row015(p, gc, m) {
				continue
			}
			v := viewOf(p, group, m, now)
			gp := GroupPartition{
				Partition: p.name, OffsetLag: v.lag, TimeLagSeconds: v.timeLag, LeaseActive: v.live != nil,
				LastConsumedAt: lastConsumed015(gc, m), WorkerID: workerID015(gc),
			}
			if gc != nil {
				gp.TotalConsumed = gc.consumption.totalConsumed
			}
			list = append(list, gp)
		}
		if len(list) > 0 {
			out[q.name] = list
		}
	}
	if len(out) == 0 {
		return nil, ErrGroupNotFound
	}
	return out, nil
}

// Lagging015 answers 0.15's lagging list: the cursor rows owing a message whose time lag is
// above minLagSeconds, which may be negative; no filters.
func (e *Engine) Lagging015(minLagSeconds int64) []LaggingEntry {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	out := []LaggingEntry{}
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
				entry := laggingEntry(p, g, v)
				entry.LastConsumedAt, entry.WorkerID = lastConsumed015(gc, m), workerID015(gc)
				out = append(out, entry)
			}
		}
	}
	sortLagging(out)
	return out
}

// Message015 answers 0.15's message detail: only the groups with a cursor row in the
// message's partition are listed.
func (e *Engine) Message015(partitionID, transactionID string) (MessageDetail, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	d, err := e.message(partitionID, transactionID)
	if err != nil {
		return d, err
	}
	p := e.partitions[partitionID]
	rows := d.Groups[:0]
	for _, g := range d.Groups {
		if row015(p, p.groups[g.Name], p.q.groups[g.Name]) {
			rows = append(rows, g)
		}
	}
	d.Groups = rows
	return d, nil
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
