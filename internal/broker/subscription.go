package broker

import "time"

type startKind uint8

const (
	startAll  startKind = iota // offset 0
	startNew                   // messages stored after the deciding pop arrived
	startFrom                  // messages created at or after a time
)

// groupMeta is what a group keeps on a queue beyond its cursors: its start and conflation
// choice, decided by its first pop, its autopilot batch size, and the index
// of its ready cursors (ready.go).
type groupMeta struct {
	q     *queue // nil while pending (the queue does not exist yet)
	group string

	start      startKind
	seq        int64
	from       time.Time
	conflation bool
	batch      int
	decidedAt  time.Time // when the start was decided, for introspection

	// decidedBy is the waiting pop whose arrival decided the start, while no other pop of the
	// group has used it; if that pop is abandoned the decision is forgotten.
	decidedBy *waiter

	// complete is set once the group has a cursor in every partition of q, placed when it
	// first pops q queue-wide (or seeks); from then on every new partition gets one too. A group
	// that only pops named partitions has cursors only there (ready.go).
	complete bool

	pendingAt int64 // position in the pending table while pending

	// onlyFor is the partition whose pop decided the start on 0.15, which stores such a
	// start for that partition alone; nil when a queue-wide pop decided it (compat015.go).
	onlyFor *partition
}

func (m *groupMeta) initialCursor(p *partition) int64 {
	if m.onlyFor != nil && m.onlyFor != p && m.start == startNew {
		return p.lastOffset() // decided again, as of the pop that first reads p
	}
	return m.startCursor(p)
}

// startCursor is where the start as decided places a cursor in p.
func (m *groupMeta) startCursor(p *partition) int64 {
	switch m.start {
	case startNew:
		return p.firstAfterSeq(m.seq) - 1
	case startFrom:
		return p.firstAtOrAfter(m.from) - 1
	}
	return -1
}

// decideStart returns the group's stored start on q, deciding it from this pop when the group
// has none. arrival is the store step at which the pop arrived.
func (e *Engine) decideStart(q *queue, group string, r *PopRequest, arrival int64, w *waiter) *groupMeta {
	if m := q.groups[group]; m != nil {
		if m.decidedBy != w {
			m.decidedBy = nil
		}
		return m
	}
	m := newStart(group, r, arrival, w)
	m.decidedAt = e.now()
	e.adoptStart(q, m)
	return m
}

// adoptStart stores m as its group's start on q.
func (e *Engine) adoptStart(q *queue, m *groupMeta) {
	m.q = q
	q.groups[m.group] = m
	e.groupChanged(q, m.group)
}

// Starts decided on queues that do not exist yet wait in a table bounded in bytes: a pop that
// finds no queue must not make the broker hold memory without limit, so beyond the
// budget the oldest decisions are forgotten first (the group then decides again).
const (
	pendingBudget   = 64 << 10 // bytes of names and bookkeeping
	pendingOverhead = 256      // bytes counted per entry besides its names
)

func pendingCost(queueName, group string) int { return len(queueName) + len(group) + pendingOverhead }

// decidePending is decideStart for a queue that does not exist yet: the pop's start waits in
// e.pending until the queue is created, and a new start still counts from this arrival.
// Queue mode has nothing to decide.
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
	e.pendingSeq++
	m.pendingAt = e.pendingSeq
	groups[group] = m
	e.pendingOrder = append(e.pendingOrder, pendingEntry{queueName, group, m.pendingAt})
	e.pendingBytes += pendingCost(queueName, group)
	e.pendingCount++
	if len(e.pendingOrder) > 2*e.pendingCount+64 { // drop the entries of starts gone since
		live := e.pendingOrder[:0]
		for _, pe := range e.pendingOrder {
			if pm := e.pending[pe.queue][pe.group]; pm != nil && pm.pendingAt == pe.at {
				live = append(live, pe)
			}
		}
		clear(e.pendingOrder[len(live):])
		e.pendingOrder = live
	}
	for e.pendingBytes > pendingBudget && len(e.pendingOrder) > 0 {
		old := e.pendingOrder[0]
		e.pendingOrder = e.pendingOrder[1:]
		if pm := e.pending[old.queue][old.group]; pm != nil && pm.pendingAt == old.at {
			e.dropPending(old.queue, old.group)
		}
	}
	if len(e.pendingOrder) == 0 {
		e.pendingOrder = nil // let the backing array go
	}
}

// pendingEntry is one decision in the pending table's age order; at tells a decision from a
// later one of the same names.
type pendingEntry struct {
	queue, group string
	at           int64
}

// dropPending forgets a pending start.
func (e *Engine) dropPending(queueName, group string) {
	groups := e.pending[queueName]
	if groups[group] == nil {
		return
	}
	delete(groups, group)
	e.pendingBytes -= pendingCost(queueName, group)
	e.pendingCount--
	if len(groups) == 0 {
		delete(e.pending, queueName)
	}
	if len(e.pending) == 0 {
		e.pendingOrder, e.pendingBytes, e.pendingCount = nil, 0, 0
	}
}

// takePending hands a created queue the starts decided before it existed.
func (e *Engine) takePending(q *queue) {
	groups := e.pending[q.name]
	for group, m := range groups {
		e.dropPending(q.name, group)
		e.adoptStart(q, m)
	}
}

func newStart(group string, r *PopRequest, arrival int64, w *waiter) *groupMeta {
	m := &groupMeta{group: group, batch: minAutopilotBatch, seq: arrival, decidedBy: w}
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

// forgetStart undoes a start decided by an abandoned waiting pop: nothing else of the
// group used it, so its cursors on the queue are still the ones that decision placed.
func (e *Engine) forgetStart(w *waiter) {
	q := e.queues[w.req.Queue]
	if q == nil {
		if m := e.pending[w.req.Queue][w.group]; m != nil && m.decidedBy == w {
			e.dropPending(w.req.Queue, w.group)
		}
		return
	}
	m := q.groups[w.group]
	if m == nil || m.decidedBy != w {
		return
	}
	delete(q.groups, w.group)
	e.dropCursors(q, w.group)
	e.groupChanged(q, w.group)
}

// settle marks a waiting pop answered: a start it decided now stands.
func (e *Engine) settle(w *waiter) {
	if m := e.storedStart(w.req.Queue, w.group); m != nil && m.decidedBy == w {
		m.decidedBy = nil
	}
}
