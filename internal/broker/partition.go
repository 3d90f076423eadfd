package broker

import (
	"sort"
	"time"
)

// storedMessage is one message in its partition's log; its offset is its index.
type storedMessage struct {
	id        string
	txID      string
	traceID   string
	data      []byte // JSON text
	createdAt time.Time
	seq       int64 // engine-wide store order, for "new" starts
}

// partition is an append-only log with a transactionId index and one cursor per group.
type partition struct {
	id, name string
	q        *queue
	order    int64 // creation order, the tie-break between ready partitions
	msgs     []storedMessage
	byTx     map[string]int64
	groups   map[string]*cursorState
	dead     deadIndex      // its dead letters (deadletter_index.go)
	stats    partitionStats // introspection's counters

	slow     slowHeap      // the cursors of groups that do not conflate, furthest back first
	held     groupView     // its slowest view, as if every lease it holds were live (introspect_tally.go)
	tally    tally         // the counts read from held
	lagNodes partitionLags // held's lags in the overview's trees (introspect_lagstats.go)
}

func (p *partition) lastOffset() int64 { return int64(len(p.msgs)) - 1 }

// firstAtOrAfter is the offset of the first message created at or after t; createdAt never
// decreases with offset, so the answer splits the log in two.
func (p *partition) firstAtOrAfter(t time.Time) int64 {
	return int64(sort.Search(len(p.msgs), func(i int) bool { return !p.msgs[i].createdAt.Before(t) }))
}

// firstAfterSeq is the offset of the first message stored after the engine-wide step seq.
func (p *partition) firstAfterSeq(seq int64) int64 {
	return int64(sort.Search(len(p.msgs), func(i int) bool { return p.msgs[i].seq > seq }))
}

var emptyPayload = []byte("{}")

// appendMessage stores a message in p under the given id; offset and createdAt are assigned in this
// step. data is the push's own, never a caller's buffer.
func (e *Engine) appendMessage(p *partition, id, txID, traceID string, data []byte) int64 {
	now := e.now()
	if n := len(p.msgs); n > 0 && now.Before(p.msgs[n-1].createdAt) {
		now = p.msgs[n-1].createdAt
	}
	e.seq++
	off := int64(len(p.msgs))
	p.msgs = append(p.msgs, storedMessage{
		id: id, txID: txID, traceID: traceID, data: data, createdAt: now, seq: e.seq,
	})
	p.byTx[txID] = off
	e.rates.ingested.add(now, 1)
	for _, gc := range p.groups {
		e.refreshReady(gc)
		gc.relag()
	}
	p.relagShadows()
	p.recount()
	if off == 0 {
		e.wakeUnplaced(p)
	}
	return off
}

// wakeUnplaced has the pops waiting on p's queue for a group with no cursor in p look again,
// once p holds its first message: no cursor of theirs becomes ready to tell them (a group
// whose start is not stored, as on a queue configure made and no push has reached).
func (e *Engine) wakeUnplaced(p *partition) {
	for group := range e.waiting[p.q.name] {
		if p.groups[group] == nil {
			e.wakeGroup(p.q.name, group)
		}
	}
}

// handedOut builds the wire view of the message at off.
func (p *partition) handedOut(off int64, leaseID, group string, attempt int) Message {
	m := &p.msgs[off]
	return Message{
		ID: m.id, TransactionID: m.txID, TraceID: m.traceID, Data: m.data, CreatedAt: m.createdAt,
		PartitionID: p.id, Partition: p.name, LeaseID: leaseID, ConsumerGroup: group,
		Offset: off, DeliveryAttempt: attempt,
	}
}
