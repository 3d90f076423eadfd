package broker

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/google/uuid"
)

// grant is what one evaluation handed out, kept for a waiting pop so that an answer its client
// no longer wants can be taken back (R142).
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

// Pop leases messages (R20–R45), waiting on real time when r.Wait. A ctx done before the answer
// abandons the pop and leases nothing (R142). A *BadRequest refuses it (R37).
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
	e.enqueue(w)
	e.unlock()
	if e.parked != nil {
		e.parked()
	}
	return e.await(ctx, w)
}

// evaluate is one look at the state for a pop, leasing what it can (R24: a woken pop leases as a
// fresh pop would). w is the pop's waiter, queued or about to be; nil for a pop that never waits.
func (e *Engine) evaluate(r *PopRequest, w *waiter) (PopResult, *grant, error) {
	if err := checkConflationRequest(r); err != nil {
		return PopResult{}, nil, err
	}
	if r.Discovery {
		return e.evaluateDiscovery(r)
	}
	queued := w != nil && w.queued
	if !queued {
		if m := e.storedStart(r.Queue, r.Group); m != nil && m.conflation && r.AutoAck {
			return PopResult{}, nil, &BadRequest{Msg: "autoAck is not allowed for a conflating consumer group"}
		}
	}
	arrival := e.seq
	if w != nil && !e.is015() { // 0.15 decides a start when a pop claims, not when it arrives (O27)
		arrival = w.arrival
	}
	q := e.queues[r.Queue]
	if q == nil {
		res := e.emptyResult(r.Queue, r.Group, r)
		if e.is015() {
			res.Empty = EmptyNoPartition
			if r.Partition != "" {
				res.Empty = EmptyPartitionNotFound
			}
		} else {
			e.decidePending(r.Queue, r.Group, r, arrival, w)
		}
		return res, nil, nil
	}
	_, hadStart := q.groups[r.Group]
	m := e.decideStart(q, r.Group, r, arrival, w)

	parts := q.parts
	if r.Partition != "" {
		p := q.byName[r.Partition]
		if p == nil {
			res := e.emptyResult(r.Queue, r.Group, r)
			if e.is015() {
				res.Empty = EmptyPartitionNotFound
				if !hadStart {
					delete(q.groups, r.Group)
				}
			}
			return res, nil, nil
		}
		parts = []*partition{p}
	}
	ready := e.readyCursors(parts, r.Group, m)

	batch, autoBatch := r.Batch, 0
	if batch <= 0 {
		batch = 1
		if r.Autopilot {
			batch, autoBatch = m.batch, m.batch
		}
	}
	limit := r.Partitions
	switch {
	case r.Partition != "":
		limit = 1
	case limit <= 0 && r.Autopilot:
		pops := e.waitCount[groupKey{q.name, r.Group}]
		if !queued {
			pops++
		}
		limit = autopilotPartitions(len(ready), pops)
	case limit <= 0:
		limit = 1
	}
	res, g := e.claim(q, r.Group, m, ready, batch, limit, q.leaseDuration(r.LeaseSeconds), r.AutoAck, autoBatch, w != nil)
	if e.is015() {
		if !hadStart && !keepStart015(m, parts) {
			delete(q.groups, r.Group)
		}
		if len(res.Messages) == 0 {
			e.empty015(&res, r, parts, !hadStart && m.start != startAll)
		}
	}
	return res, g, nil
}

// checkConflationRequest refuses the request-level conflation conflicts (R37).
func checkConflationRequest(r *PopRequest) error {
	switch {
	case r.Conflation && r.Group == QueueMode:
		return &BadRequest{Msg: "conflation requires a consumerGroup"}
	case r.Conflation && r.AutoAck:
		return &BadRequest{Msg: "conflation cannot be combined with autoAck"}
	}
	return nil
}

// evaluateDiscovery is the label pop (R22): one queue per answer, 60 s lease by default.
func (e *Engine) evaluateDiscovery(r *PopRequest) (PopResult, *grant, error) {
	if r.Namespace == "" && r.Task == "" {
		return PopResult{}, nil, &BadRequest{Msg: "namespace or task is required"}
	}
	var best []*cursorState
	var bestQ *queue
	var bestM *groupMeta
	matched, conflating := false, false
	for _, q := range e.queuesInOrder() {
		if (r.Namespace != "" && q.namespace != r.Namespace) || (r.Task != "" && q.task != r.Task) {
			continue
		}
		if m := q.groups[r.Group]; m != nil && m.conflation && r.AutoAck {
			continue
		}
		m := e.decideStart(q, r.Group, r, e.seq, nil)
		matched, conflating = true, conflating || m.conflation
		ready := e.readyCursors(q.parts, r.Group, m)
		if len(ready) > 0 && (best == nil || olderThan(ready[0], best[0])) {
			best, bestQ, bestM = ready, q, m
		}
	}
	if bestQ == nil {
		// The group's stored choice decides, as on a queue pop; with no queue matched, the
		// request does (R36).
		if !matched {
			conflating = r.Conflation && r.Group != QueueMode
		}
		return PopResult{ConsumerGroup: r.Group, ConflatingEmpty: conflating}, nil, nil
	}
	batch, limit, leaseSeconds := max(r.Batch, 1), max(r.Partitions, 1), r.LeaseSeconds
	if leaseSeconds <= 0 {
		leaseSeconds = defaultLeaseSeconds
	}
	res, g := e.claim(bestQ, r.Group, bestM, best, batch, limit, seconds(leaseSeconds), r.AutoAck, 0, false)
	return res, g, nil
}

func (e *Engine) queuesInOrder() []*queue {
	qs := make([]*queue, 0, len(e.queues))
	for _, q := range e.queues {
		qs = append(qs, q)
	}
	slices.SortFunc(qs, func(a, b *queue) int { return cmp.Compare(a.order, b.order) })
	return qs
}

// readyCursors lists the partitions ready for the group: a message above the cursor and no live
// lease of the group (R49). Oldest available message first, then oldest partition (R19).
func (e *Engine) readyCursors(parts []*partition, group string, m *groupMeta) []*cursorState {
	var ready []*cursorState
	for _, p := range parts {
		if len(p.msgs) == 0 {
			continue
		}
		gc := e.cursorOf(p, group, m)
		if gc.available() <= 0 || e.liveLease(gc) != nil {
			continue
		}
		ready = append(ready, gc)
	}
	if len(ready) > 1 {
		slices.SortFunc(ready, func(a, b *cursorState) int {
			if olderThan(a, b) {
				return -1
			}
			return 1
		})
	}
	return ready
}

func olderThan(a, b *cursorState) bool {
	ta, tb := a.p.msgs[a.cursor+1].createdAt, b.p.msgs[b.cursor+1].createdAt
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	if a.p.q != b.p.q {
		return a.p.q.order < b.p.q.order
	}
	return a.p.order < b.p.order
}

// claim hands out up to batch messages from up to limit ready partitions, filling each from its
// cursor before taking the next (R29, R32, R50), under one lease unless autoAck (R38).
func (e *Engine) claim(q *queue, group string, m *groupMeta, ready []*cursorState, batch, limit int,
	d time.Duration, autoAck bool, autoBatch int, keepGrant bool) (PopResult, *grant) {
	res := PopResult{Queue: q.name, ConsumerGroup: group}
	if len(ready) == 0 {
		res.ConflatingEmpty = m.conflation
		return res, nil
	}
	ready = ready[:min(limit, len(ready))]
	size := 0
	for _, gc := range ready {
		if m.conflation {
			size++
		} else {
			size += int(gc.available())
		}
	}
	size = min(size, batch)

	var l *lease
	if !autoAck {
		now := e.now()
		l = &lease{id: uuid.NewString(), q: q, meta: m, created: now, duration: d, expires: now.Add(d)}
		res.LeaseID = l.id
	}
	var g *grant
	if keepGrant {
		g = &grant{lease: l}
	}
	msgs := make([]Message, 0, size)
	budget := int64(size)
	for _, gc := range ready {
		if budget == 0 {
			break
		}
		c := claim{gc: gc, prevCursor: gc.cursor, prevRetries: gc.retries, prevRetryOff: gc.retryOff, prevConsumption: gc.consumption}
		if m.conflation {
			before := gc.cursor
			gc.moveTo(gc.p.lastOffset() - 1) // older messages are done for the group (R36)
			e.skipped(gc, before)
		}
		first := gc.cursor + 1
		last := min(gc.p.lastOffset(), gc.cursor+budget)
		for off := first; off <= last; off++ {
			msgs = append(msgs, gc.p.handedOut(off, res.LeaseID, group, gc.handOut(off)))
		}
		budget -= last - first + 1
		res.PartitionsClaimed++
		if autoAck {
			before := gc.cursor
			gc.moveTo(last)
			e.consumed(gc, before, 0)
			gc.p.stats.batchesConsumed++
		} else {
			gc.lease, gc.first, gc.last = l, first, last
			l.holds = append(l.holds, gc)
			l.held++
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
// conflating group (R36, R41).
func (e *Engine) emptyResult(queueName, group string, r *PopRequest) PopResult {
	conflating := group != QueueMode && r.Conflation
	if m := e.storedStart(queueName, group); m != nil {
		conflating = m.conflation
	}
	return PopResult{Queue: queueName, ConsumerGroup: group, ConflatingEmpty: conflating}
}

// undo takes back what a grant handed out, as if it never had been: deliveries uncounted, the
// cursor and budget restored where nothing moved them since (R142).
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
		e.markWake(gc.p.q.name)
	}
	if l != nil && !l.ended {
		l.ended = true
		delete(e.leases, l.id)
		if l.timer != nil {
			l.timer.Stop()
		}
	}
}
