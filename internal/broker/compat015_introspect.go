package broker

import (
	"slices"
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
//   - a message's detail lists only the groups with a row in its partition;
//   - a start a partition pop decided is stored for that partition only: on the group's other
//     partitions its seeded rows hold no cursor, so their lag counts every message there;
//   - a browse's status view is chosen per partition: queue mode's where it has a row (every
//     message past its cursor processing while it holds a lease there), else the named
//     groups' with a row (completed once all of them passed it, never processing); a
//     message's leaseExpiresAt is queue mode's last lease on the partition, expired or not.

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
// rows, maxTimeLag the age of the newest owed message. It reads the partitions in steps.
func (e *Engine) ConsumerGroups015() []GroupSummary {
	s := e.steps()
	defer s.done()
	out := []GroupSummary{}
	for _, q := range slices.Clone(e.order) {
		if e.queues[q.name] != q { // deleted between two steps
			continue
		}
		for _, g := range attachedGroups(q) {
			if sum, ok := groupSummary015(s, q, g); ok {
				out = append(out, sum)
			}
		}
	}
	s.outside(func() { sortGroupSummaries(out) })
	return out
}

// groupSummary015 sums the group's rows of q in steps; false when it has none, or when the
// group or the queue went in the meantime.
func groupSummary015(s *stepper, q *queue, group string) (GroupSummary, bool) {
	sum := GroupSummary{Name: group, Queue: q.name}
	advanced := false
	for i := 0; i < len(q.parts); i++ {
		p, m := q.parts[i], q.groups[group]
		gc := p.groups[group]
		if row015(p, gc, m) {
			sum.Members++
			lag := view015(p, group, m, s.now).lag
			if seeded015(p, gc, m) { // the list's own join reads a seeded row from the start as decided
				lag = p.lastOffset() - m.startCursor(p)
			}
			if lag > 0 {
				sum.PartitionsWithLag++
				sum.MaxTimeLag = max(sum.MaxTimeLag, int64(s.now.Sub(p.msgs[p.lastOffset()].createdAt)/time.Second))
			}
			advanced = advanced || !lastConsumed015(gc, m).IsZero()
		}
		if s.did(1) && !stillAttached(s.e, q, group) {
			return GroupSummary{}, false
		}
	}
	m := q.groups[group]
	if sum.Members == 0 && m == nil {
		return sum, false
	}
	sum.State = groupState(sum.MaxTimeLag, advanced)
	if m != nil && group != QueueMode && m.start != startAll {
		sub := Subscription{Mode: "new", Timestamp: m.decidedAt, CreatedAt: m.decidedAt}
		if m.start == startFrom {
			sub.Mode, sub.Timestamp = "timestamp", m.from
		}
		sum.Subscription = &sub
	}
	return sum, true
}

// ConsumerGroup015 answers 0.15's group detail: every queue, only the partitions with a cursor
// row; ErrGroupNotFound when there is none. It reads the partitions in steps.
func (e *Engine) ConsumerGroup015(group string) (GroupDetail, error) {
	s := e.steps()
	defer s.done()
	out := GroupDetail{}
	for _, a := range attachedOf(s, e.order, group) {
		q := a.q
		if !stillAttached(e, q, group) { // gone since
			continue
		}
		list := a.list
		for _, p := range a.parts {
			m, gc := q.groups[group], p.groups[group]
			if row015(p, gc, m) {
				v := view015(p, group, m, s.now)
				gp := GroupPartition{
					Partition: p.name, OffsetLag: v.lag, TimeLagSeconds: v.timeLag, LeaseActive: v.live != nil,
					LastConsumedAt: lastConsumed015(gc, m), WorkerID: workerID015(gc),
				}
				if gc != nil {
					gp.TotalConsumed = gc.consumption.totalConsumed
				}
				list = append(list, gp)
			}
			if s.did(1) && !stillAttached(e, q, group) {
				list = nil
				break
			}
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
// above minLagSeconds, which may be negative; no filters. It walks the rows in steps.
func (e *Engine) Lagging015(minLagSeconds int64) []LaggingEntry {
	s := e.steps()
	defer s.done()
	out := []LaggingEntry{}
	for _, q := range slices.Clone(e.order) {
		if e.queues[q.name] != q { // deleted between two steps
			continue
		}
		for _, g := range attachedGroups(q) {
			for i := 0; i < len(q.parts); i++ {
				p, m := q.parts[i], q.groups[g]
				gc := p.groups[g]
				if row015(p, gc, m) {
					if v := view015(p, g, m, s.now); v.oldest >= 0 && v.timeLag > minLagSeconds {
						entry := laggingEntry(p, g, v)
						entry.LastConsumedAt, entry.WorkerID = lastConsumed015(gc, m), workerID015(gc)
						out = append(out, entry)
					}
				}
				if s.did(1) && !stillAttached(e, q, g) {
					break
				}
			}
		}
	}
	s.outside(func() { sortLagging(out) })
	return out
}

// seeded015 reports whether the group's row in p is one 0.15 seeded without a cursor: its start
// was decided by a partition pop on another partition, and it has not read p since.
func seeded015(p *partition, gc *cursorState, m *groupMeta) bool {
	return gc == nil && m != nil && m.onlyFor != nil && m.onlyFor != p
}

// view015 is viewOf as 0.15 reports it: a seeded row counts every message of the partition.
func view015(p *partition, group string, m *groupMeta, now time.Time) groupView {
	v := viewOf(p, group, m, now)
	if !seeded015(p, p.groups[group], m) || len(p.msgs) == 0 {
		return v
	}
	n := int64(len(p.msgs))
	v.pos, v.processing, v.pending, v.lag, v.oldest = -1, 0, n, n, 0
	v.timeLag = int64(now.Sub(p.msgs[0].createdAt) / time.Second)
	return v
}

// lastLease015 is the expiry of the group's last lease on the partition, expired or not; zero
// once acks released it, or for none.
func lastLease015(gc *cursorState) time.Time {
	switch {
	case gc == nil:
	case gc.lease != nil:
		return gc.lease.expires
	case gc.expired != nil:
		return gc.expired.expires
	}
	return time.Time{}
}

// look015 is what 0.15's browse reads of one partition: queue mode's row, or the named groups
// with a row.
type look015 struct {
	p        *partition
	qm       *groupView // queue mode's view where it has a row, else nil
	qmExpiry time.Time  // queue mode's last lease expiry on the partition
	named    []groupView
}

func lookAt015(p *partition, groups []string, now time.Time) look015 {
	l := look015{p: p}
	for _, g := range groups {
		m, gc := p.q.groups[g], p.groups[g]
		if !row015(p, gc, m) {
			continue
		}
		v := view015(p, g, m, now)
		if g == QueueMode {
			l.qm, l.qmExpiry = &v, lastLease015(gc)
			continue
		}
		l.named = append(l.named, v)
	}
	return l
}

// consumedBy counts the named groups with a row that passed off.
func (l *look015) consumedBy(off int64) int64 {
	n := int64(0)
	for i := range l.named {
		if off <= l.named[i].pos {
			n++
		}
	}
	return n
}

// status is the message's status and queueStatus as 0.15's browse reports them.
func (l *look015) status(off int64) (status, queueStatus string) {
	switch {
	case len(l.p.stats.deadAt[off]) > 0:
		return statusDeadLetter, statusDeadLetter
	case l.qm != nil && off <= l.qm.pos:
		return statusCompleted, statusCompleted
	case l.qm != nil && l.qm.live != nil:
		return statusProcessing, statusProcessing
	case l.qm != nil:
		return statusPending, statusPending
	case len(l.named) > 0 && l.consumedBy(off) == int64(len(l.named)):
		return statusCompleted, statusPending
	}
	return statusPending, statusPending
}

func (l *look015) entry(off int64) MessageEntry {
	p, q, m := l.p, l.p.q, &l.p.msgs[off]
	status, queueStatus := l.status(off)
	return MessageEntry{
		ID: m.id, TransactionID: m.txID, PartitionID: p.id, Partition: p.name, Queue: q.name,
		QueuePath: q.name + "/" + p.name, Namespace: q.namespace, Task: q.task, QueuePriority: q.priority(),
		Offset: off, TraceID: m.traceID, CreatedAt: m.createdAt, Status: status, QueueStatus: queueStatus,
		ConsumedBy: l.consumedBy(off), TotalGroups: int64(len(l.named)), LeaseExpiresAt: l.qmExpiry,
	}
}

// browsed015 is the queue a browse names and the partitions it looks at.
func (e *Engine) browsed015(bq BrowseQuery) (*queue, []*partition, error) {
	q, ok := e.queues[bq.Queue]
	switch {
	case !ok:
		return nil, nil, ErrQueueNotFound
	case bq.Partition == "":
		return q, q.parts, nil
	}
	if p, ok := q.byName[bq.Partition]; ok {
		return q, []*partition{p}, nil
	}
	return nil, nil, ErrPartitionNotFound
}

// Browse015 answers 0.15's browse of a queue: the partitions' own status views, newest first
// whatever bq.Ascending says, and no payloads.
func (e *Engine) Browse015(bq BrowseQuery) (MessageList, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	q, parts, err := e.browsed015(bq)
	if err != nil {
		return MessageList{}, err
	}
	now, groups := e.now(), attachedGroups(q)
	out := MessageList{Messages: []MessageEntry{}, Mode: modeOf(groups)}
	labels := (bq.Namespace == nil || *bq.Namespace == q.namespace) && (bq.Task == nil || *bq.Task == q.task)
	if !labels {
		return out, nil
	}
	type hit struct {
		l   *look015
		off int64
	}
	var hits []hit
	for _, p := range parts {
		lo, hi := int64(0), p.lastOffset()
		if bq.From != nil {
			lo = p.firstAtOrAfter(*bq.From)
		}
		if bq.To != nil {
			hi = min(hi, p.firstAfter(*bq.To)-1)
		}
		if lo > hi {
			continue
		}
		l := lookAt015(p, groups, now)
		for off := hi; off >= lo; off-- {
			if status, _ := l.status(off); bq.Status == "" || status == bq.Status {
				hits = append(hits, hit{&l, off})
			}
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int { // newest first
		return int(b.l.p.msgs[b.off].seq - a.l.p.msgs[a.off].seq)
	})
	hits = hits[min(max(bq.Offset, 0), len(hits)):]
	for _, h := range hits[:min(max(bq.Limit, 0), len(hits))] {
		out.Messages = append(out.Messages, h.l.entry(h.off))
	}
	return out, nil
}

// Message015 answers 0.15's message detail: its partition's status view, only the groups with a
// row there, each with its last lease's expiry on the partition whatever the message, and the
// partition's kinds of group.
func (e *Engine) Message015(partitionID, transactionID string) (MessageDetail, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	d, err := e.message(partitionID, transactionID)
	if err != nil {
		return d, err
	}
	p := e.partitions[partitionID]
	off := p.byTx[transactionID]
	l := lookAt015(p, attachedGroups(p.q), e.now())
	payload := d.Payload
	d.MessageEntry = l.entry(off)
	d.Payload = payload
	d.Mode = GroupKinds{HasQueueMode: l.qm != nil, BusGroupsCount: int64(len(l.named))}
	d.Mode.Type = modeOf015(d.Mode)
	rows := d.Groups[:0]
	for _, g := range d.Groups {
		m, gc := p.q.groups[g.Name], p.groups[g.Name]
		if !row015(p, gc, m) {
			continue
		}
		g.Consumed = off <= position015(p, gc, m)
		g.LeaseExpiresAt = lastLease015(gc)
		rows = append(rows, g)
	}
	d.Groups = rows
	return d, nil
}

// position015 is the group's position in p as 0.15 reports it.
func position015(p *partition, gc *cursorState, m *groupMeta) int64 {
	if seeded015(p, gc, m) {
		return -1
	}
	return position(p, gc, m)
}

// modeOf015 names a partition's kinds of group.
func modeOf015(k GroupKinds) string {
	switch {
	case k.HasQueueMode && k.BusGroupsCount > 0:
		return "hybrid"
	case k.HasQueueMode:
		return "queue"
	case k.BusGroupsCount > 0:
		return "bus"
	}
	return "none"
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
	gc.relag()
}
