package broker

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// grant is what one evaluation handed out, kept for a waiting pop so that an answer its client
// no longer wants can be taken back.
type grant struct {
	lease  *lease
	claims []claim
}

type claim struct {
	gc                       *cursorState
	prevCursor, prevRetryOff int64
	prevRetries              int
	prevConsumption          consumption
	first, last              int64
}

// Pop leases messages, waiting on real time when r.Wait. A ctx done before the answer
// abandons the pop and leases nothing. A *BadRequest refuses it.
func (e *Engine) Pop(ctx context.Context, r PopRequest) (PopResult, error) {
	if err := ctx.Err(); err != nil {
		return PopResult{}, err
	}
	if r.Group == "" {
		r.Group = QueueMode
	}
	e.mu.Lock()
	if err := ctx.Err(); err != nil {
		e.mu.Unlock()
		return PopResult{}, err
	}
	var w *waiter
	if r.Wait && r.Timeout > 0 && !r.Discovery && !e.closed {
		w = &waiter{req: r, group: r.Group, arrival: e.seq}
	}
	res, _, err := e.evaluate(&r, w)
	if err != nil || len(res.Messages) > 0 || w == nil {
		if w != nil {
			e.settle(w)
		}
		e.unlock()
		return res, err
	}
	w.blind = e.gen.waitsBlind(w)
	e.enqueue(w)
	e.unlock()
	if e.parked != nil {
		e.parked()
	}
	return e.await(ctx, w)
}

// evaluate is one look at the state for a pop, leasing what it can (a woken pop leases as a
// fresh pop would). w is the pop's waiter, queued or about to be; nil for a pop that never waits.
func (e *Engine) evaluate(r *PopRequest, w *waiter) (PopResult, *grant, error) {
	e.evaluations++
	if err := checkConflationRequest(r); err != nil {
		return PopResult{}, nil, err
	}
	if r.Discovery {
		return e.evaluateDiscovery(r)
	}
	queued := w != nil && w.queued
	if queued && w.blind { // sees nothing until its wait ends (waiters.go)
		return e.emptyResult(r.Queue, r.Group, r), nil, nil
	}
	if !queued {
		if m := e.storedStart(r.Queue, r.Group); m != nil && m.conflation && r.AutoAck {
			return PopResult{}, nil, &BadRequest{Msg: "autoAck is not allowed for a conflating consumer group"}
		}
	}
	arrival := e.gen.arrival(w)
	q := e.queues[r.Queue]
	if q == nil {
		res := e.emptyResult(r.Queue, r.Group, r)
		res.Empty = e.gen.noQueue(*r, arrival, w)
		return res, nil, nil
	}
	var p *partition
	if r.Partition != "" {
		if p = q.byName[r.Partition]; p == nil { // no state for a partition that is not there
			res := e.emptyResult(r.Queue, r.Group, r)
			res.Empty = e.gen.noPartition()
			return res, nil, nil
		}
	}
	e.expireDue() // a lease past its expiry frees its partition now, as a scan would
	_, hadStart := q.groups[r.Group]
	m := e.decideStart(q, r.Group, r, arrival, w)
	var ix *groupCursors
	var src readySource
	if p != nil {
		gc := e.cursorIn(p, m)
		gc.visited = gc.visited || len(p.msgs) > 0
		src = onePartition{gc}
	} else {
		e.completeCursors(m)
		ix = e.cursorsOf(q, r.Group)
		ix.sweep = e.seq
		src = &ix.ready
	}

	batch, autoBatch := r.Batch, 0
	if batch <= 0 {
		batch = 1
		if r.Autopilot {
			batch, autoBatch = m.batch, m.batch
		}
	}
	limit := r.Partitions
	switch {
	case p != nil:
		limit = 1
	case limit <= 0 && r.Autopilot:
		pops := e.waitCount[groupKey{q.name, r.Group}]
		if !queued {
			pops++
		}
		limit = autopilotPartitions(len(ix.ready), pops)
	case limit <= 0:
		limit = 1
	}
	res, g := e.claim(q, r.Group, m, src, batch, limit, q.leaseDuration(r.LeaseSeconds), r.AutoAck, autoBatch, w != nil)
	res = e.gen.claimed(res, m, q, p, hadStart)
	if q.groups[r.Group] != m { // the mode forgot the start this pop decided
		e.groupChanged(q, r.Group)
	}
	return res, g, nil
}

// checkConflationRequest refuses the request-level conflation conflicts.
func checkConflationRequest(r *PopRequest) error {
	switch {
	case r.Conflation && r.Group == QueueMode:
		return &BadRequest{Msg: "conflation=true needs a consumerGroup"}
	case r.Conflation && r.AutoAck:
		return &BadRequest{Msg: "conflation=true cannot be combined with autoAck=true"}
	}
	return nil
}

// evaluateDiscovery is the label pop: one queue per answer, 60 s lease by default.
func (e *Engine) evaluateDiscovery(r *PopRequest) (PopResult, *grant, error) {
	if r.Namespace == "" && r.Task == "" {
		return PopResult{}, nil, &BadRequest{Msg: "namespace or task is required"}
	}
	e.expireDue()
	var best *cursorState
	var bestQ *queue
	var bestM *groupMeta
	matched, conflating := false, false
	for _, q := range e.order {
		if (r.Namespace != "" && q.namespace != r.Namespace) || (r.Task != "" && q.task != r.Task) {
			continue
		}
		if m := q.groups[r.Group]; m != nil && m.conflation && r.AutoAck {
			continue
		}
		m := e.decideStart(q, r.Group, r, e.seq, nil)
		e.completeCursors(m)
		ix := e.cursorsOf(q, r.Group)
		ix.sweep = e.seq
		matched, conflating = true, conflating || m.conflation
		if top := ix.ready.top(); top != nil && (best == nil || olderThan(top, best)) {
			best, bestQ, bestM = top, q, m
		}
	}
	if bestQ == nil {
		// The group's stored choice decides, as on a queue pop; with no queue matched, the
		// request does.
		if !matched {
			conflating = r.Conflation && r.Group != QueueMode
		}
		return PopResult{ConsumerGroup: r.Group, ConflatingEmpty: conflating}, nil, nil
	}
	batch, limit, leaseSeconds := max(r.Batch, 1), max(r.Partitions, 1), r.LeaseSeconds
	if leaseSeconds <= 0 {
		leaseSeconds = defaultLeaseSeconds
	}
	res, g := e.claim(bestQ, r.Group, bestM, &bestQ.cursors[r.Group].ready, batch, limit, seconds(leaseSeconds), r.AutoAck, 0, false)
	return res, g, nil
}

// readySource is where a claim takes its partitions from, best first: a group's ready set, or
// the one partition a partition pop names.
type readySource interface{ top() *cursorState }

// onePartition is the ready source of a partition pop.
type onePartition struct{ gc *cursorState }

func (o onePartition) top() *cursorState {
	if o.gc.readyIdx < 0 {
		return nil
	}
	return o.gc
}

// olderThan orders ready cursors of different queues as pops take them.
func olderThan(a, b *cursorState) bool {
	ta, tb := a.readyAt, b.readyAt
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	if a.p.q != b.p.q {
		return a.p.q.order < b.p.q.order
	}
	return a.p.order < b.p.order
}

// Bounds of one pop's answer.
const (
	maxPopMessages = 10_000
	maxPopBytes    = 16 << 20 // of data; the message that reaches it is the last one added
)

// claim hands out up to batch messages from up to limit ready partitions, filling each from its
// cursor before taking the next, under one lease unless autoAck. It stops
// at maxPopMessages, or after the message whose data reaches maxPopBytes.
func (e *Engine) claim(q *queue, group string, m *groupMeta, src readySource, batch, limit int,
	d time.Duration, autoAck bool, autoBatch int, keepGrant bool) (PopResult, *grant) {
	res := PopResult{Queue: q.name, ConsumerGroup: group}
	gc := src.top()
	if gc == nil {
		res.ConflatingEmpty = m.conflation
		return res, nil
	}
	budget := int64(min(batch, maxPopMessages))
	size := budget
	if m.conflation {
		size = min(size, int64(limit))
	} else {
		size = min(size, gc.available()) // a first guess: the slice grows if more partitions give
	}

	var l *lease
	if !autoAck {
		now := e.now()
		l = &lease{id: uuid.NewString(), q: q, meta: m, created: now, duration: d, expires: now.Add(d), heapIdx: -1}
		res.LeaseID = l.id
	}
	var g *grant
	if keepGrant {
		g = &grant{lease: l}
	}
	msgs := make([]Message, 0, size)
	bytes := 0
	for ; gc != nil && budget > 0 && res.PartitionsClaimed < limit && bytes < maxPopBytes; gc = src.top() {
		c := claim{gc: gc, prevCursor: gc.cursor, prevRetries: gc.retries, prevRetryOff: gc.retryOff, prevConsumption: gc.consumption}
		if m.conflation {
			before := gc.cursor
			e.advance(gc, gc.p.lastOffset()-1) // older messages are done for the group
			e.skipped(gc, before)
		}
		first := gc.cursor + 1
		last := min(gc.p.lastOffset(), gc.cursor+budget)
		for off := first; off <= last; off++ {
			if off > first && bytes >= maxPopBytes {
				last = off - 1
				break
			}
			msgs = append(msgs, gc.p.handedOut(off, res.LeaseID, group, gc.handOut(off)))
			bytes += len(gc.p.msgs[off].data)
		}
		budget -= last - first + 1
		res.PartitionsClaimed++
		gc.visited = true
		if autoAck {
			before := gc.cursor
			e.advance(gc, last)
			e.consumed(gc, before, 0)
			gc.p.stats.batchesConsumed++
		} else {
			gc.lease, gc.first, gc.last = l, first, last
			l.holds = append(l.holds, gc)
			l.held++
			e.refresh(gc)
		}
		if g != nil {
			c.first, c.last = first, last
			g.claims = append(g.claims, c)
		}
	}
	res.Messages = msgs
	res.Partition, res.PartitionID = msgs[0].Partition, msgs[0].PartitionID
	if l != nil {
		if autoBatch > 0 && len(msgs) == autoBatch {
			l.autopilotB = autoBatch
		}
		e.leases[l.id] = l
		e.schedule(l)
	}
	return res, g
}

// emptyResult is the answer of a pop that found nothing: 204, or 200 {"messages":[]} for a
// conflating group.
func (e *Engine) emptyResult(queueName, group string, r *PopRequest) PopResult {
	conflating := group != QueueMode && r.Conflation
	if m := e.storedStart(queueName, group); m != nil {
		conflating = m.conflation
	}
	return PopResult{Queue: queueName, ConsumerGroup: group, ConflatingEmpty: conflating}
}

// undo takes back what a grant handed out, as if it never had been: deliveries uncounted, the
// cursor and budget restored where nothing moved them since.
func (e *Engine) undo(g *grant) {
	l := g.lease
	for _, c := range g.claims {
		gc := c.gc
		if l != nil {
			if gc.lease != l {
				continue
			}
			gc.lease = nil
			l.held--
		}
		unmoved := gc.cursor == c.first-1 || (l == nil && gc.cursor == c.last)
		for off := c.first; off <= c.last; off++ {
			if off > gc.cursor || unmoved {
				gc.attempts[off]--
			}
		}
		if unmoved {
			gc.cursor, gc.retries, gc.retryOff = c.prevCursor, c.prevRetries, c.prevRetryOff
			if l == nil && gc.consumption != c.prevConsumption { // an autoAck pop taken back
				gc.consumption = c.prevConsumption
				gc.p.stats.batchesConsumed--
			}
		}
		e.refresh(gc)
	}
	if l != nil && !l.ended {
		e.retire(l)
	}
}
