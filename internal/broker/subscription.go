package broker

import "time"

type startKind uint8

const (
	startAll  startKind = iota // offset 0 (R104, R107)
	startNew                   // messages stored after the deciding pop arrived (R103)
	startFrom                  // messages created at or after a time (R105)
)

// groupMeta is what a group keeps on a queue beyond its cursors: its start and conflation
// choice, decided by its first pop (R102, R36), and its autopilot batch size (R34).
type groupMeta struct {
	start      startKind
	seq        int64
	from       time.Time
	conflation bool
	batch      int
	decidedAt  time.Time // when the start was decided, for introspection (R161)

	// decidedBy is the waiting pop whose arrival decided the start, while no other pop of the
	// group has used it; if that pop is abandoned the decision is forgotten (R142).
	decidedBy *waiter
}

func (m *groupMeta) initialCursor(p *partition) int64 {
	switch m.start {
	case startNew:
		return p.firstAfterSeq(m.seq) - 1
	case startFrom:
		return p.firstAtOrAfter(m.from) - 1
	}
	return -1
}

// decideStart returns the group's stored start on q, deciding it from this pop when the group
// has none (R102–R109). arrival is the store step at which the pop arrived.
func (e *Engine) decideStart(q *queue, group string, r *PopRequest, arrival int64, w *waiter) *groupMeta {
	if m := q.groups[group]; m != nil {
		if m.decidedBy != w {
			m.decidedBy = nil
		}
		return m
	}
	m := newStart(group, r, arrival, w)
	m.decidedAt = e.now()
	q.groups[group] = m
	return m
}

// decidePending is decideStart for a queue that does not exist yet: the pop's start waits in
// e.pending until the queue is created, and a new start still counts from this arrival
// (R102, R103). Queue mode has nothing to decide (R107).
func (e *Engine) decidePending(queueName, group string, r *PopRequest, arrival int64, w *waiter) {
	if group == QueueMode {
		return
	}
	groups := e.pending[queueName]
	if m := groups[group]; m != nil {
		if m.decidedBy != w {
			m.decidedBy = nil
		}
		return
	}
	if groups == nil {
		groups = make(map[string]*groupMeta)
		e.pending[queueName] = groups
	}
	m := newStart(group, r, arrival, w)
	m.decidedAt = e.now()
	groups[group] = m
}

func newStart(group string, r *PopRequest, arrival int64, w *waiter) *groupMeta {
	m := &groupMeta{batch: minAutopilotBatch, seq: arrival, decidedBy: w}
	if group != QueueMode {
		m.conflation = r.Conflation
		switch {
		case r.SubscriptionFrom != nil:
			m.start, m.from = startFrom, r.SubscriptionFrom.UTC()
		case r.FromNow || r.SubscriptionMode != "all":
			m.start = startNew
		}
	}
	return m
}

// storedStart is the group's start on the named queue, created or not; nil when undecided.
func (e *Engine) storedStart(queueName, group string) *groupMeta {
	if q := e.queues[queueName]; q != nil {
		return q.groups[group]
	}
	return e.pending[queueName][group]
}

// forgetStart undoes a start decided by an abandoned waiting pop (R142): nothing else of the
// group used it, so its cursors on the queue are still the ones that decision placed.
func (e *Engine) forgetStart(w *waiter) {
	q := e.queues[w.req.Queue]
	if q == nil {
		if groups := e.pending[w.req.Queue]; groups[w.group] != nil && groups[w.group].decidedBy == w {
			delete(groups, w.group)
			if len(groups) == 0 {
				delete(e.pending, w.req.Queue)
			}
		}
		return
	}
	m := q.groups[w.group]
	if m == nil || m.decidedBy != w {
		return
	}
	delete(q.groups, w.group)
	for _, p := range q.parts {
		if gc := p.groups[w.group]; gc != nil && gc.lease == nil {
			delete(p.groups, w.group)
		}
	}
}

// settle marks a waiting pop answered: a start it decided now stands.
func (e *Engine) settle(w *waiter) {
	if m := e.storedStart(w.req.Queue, w.group); m != nil && m.decidedBy == w {
		m.decidedBy = nil
	}
}
