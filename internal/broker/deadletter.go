package broker

import (
	"time"

	"github.com/google/uuid"
)

// deadLetter records that a group gave up on a message; one per (message, group).
type deadLetter struct {
	id         string
	p          *partition
	off        int64
	group      string
	errMsg     string
	retryCount int
	failedAt   time.Time
}

type deadKey struct {
	p     *partition
	off   int64
	group string
}

const defaultDeadLetterError = "Retries exhausted" // the reason of a dead letter filed without one

// fileDeadLetter records the message for the group unless the queue drops them.
func (e *Engine) fileDeadLetter(gc *cursorState, off int64, errText string) bool {
	if !gc.p.q.deadLetterQueue && e.gen.dropsDeadLetters() {
		return false
	}
	if errText == "" {
		errText = defaultDeadLetterError
	}
	key := deadKey{gc.p, off, gc.group}
	d := e.deadBy[key]
	if d == nil {
		d = &deadLetter{id: uuid.NewString(), p: gc.p, off: off, group: gc.group}
		e.dead[d.id] = d
		e.deadBy[key] = d
		gc.p.noteDeadLetter(d)
	} else {
		e.unindexDead(d) // filed again: it moves to its new time
	}
	d.errMsg, d.retryCount, d.failedAt = errText, gc.retries, e.now()
	e.indexDead(d)
	return true
}

func (e *Engine) dropDeadLetter(d *deadLetter) {
	delete(e.dead, d.id)
	e.unindexDead(d)
	d.p.forgetDeadLetter(d)
	delete(e.deadBy, deadKey{d.p, d.off, d.group})
}

func (d *deadLetter) view() DeadLetter {
	m := &d.p.msgs[d.off]
	return DeadLetter{
		ID: d.id, MessageID: m.id, TransactionID: m.txID, PartitionID: d.p.id,
		Queue: d.p.q.name, Partition: d.p.name, ConsumerGroup: d.group,
		ErrorMessage: d.errMsg, RetryCount: d.retryCount, Data: m.data, TraceID: m.traceID,
		CreatedAt: m.createdAt, FailedAt: d.failedAt,
	}
}

// Replay pushes a dead letter back as dlq:<id>.
func (e *Engine) Replay(id string) (ReplayResult, error) {
	e.mu.Lock()
	defer e.unlock()
	d := e.dead[id]
	if d == nil {
		return ReplayResult{}, ErrDeadLetterNotFound
	}
	txID := "dlq:" + id
	off, ok := d.p.byTx[txID]
	if !ok {
		m := &d.p.msgs[d.off]
		off = e.appendMessage(d.p, newMessageID(), txID, m.traceID, m.data)
	}
	e.dropDeadLetter(d)
	return ReplayResult{ID: id, TransactionID: txID, PartitionID: d.p.id, Offset: off}, nil
}

// DeleteDeadLetter removes a dead letter.
func (e *Engine) DeleteDeadLetter(id string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	d := e.dead[id]
	if d == nil {
		return ErrDeadLetterNotFound
	}
	e.dropDeadLetter(d)
	return nil
}
