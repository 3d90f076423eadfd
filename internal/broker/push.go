package broker

import (
	"github.com/google/uuid"
)

// Push stores validated items and wakes the pops they satisfy.
func (e *Engine) Push(items []PushItem) []PushResult {
	e.mu.Lock()
	defer e.unlock()
	return e.push(items)
}

func (e *Engine) push(items []PushItem) []PushResult {
	results := make([]PushResult, len(items))
	for i := range items {
		results[i] = e.pushOne(&items[i])
		results[i].Index = i
	}
	return results
}

// pushOne stores one item unless its (partition, transactionId) exists.
func (e *Engine) pushOne(it *PushItem) PushResult {
	q := e.queueFor(it.Queue)
	p := e.partitionFor(q, it.Partition)
	txID := it.TransactionID
	if txID == "" {
		txID = uuid.NewString()
	}
	if off, ok := p.byTx[txID]; ok {
		m := &p.msgs[off]
		return PushResult{
			TransactionID: txID, Status: "duplicate", MessageID: m.id,
			PartitionID: p.id, QueueName: q.name, TraceID: it.TraceID, Offset: off,
		}
	}
	off := e.store(p, txID, it.TraceID, ownPayload(it.Payload))
	return PushResult{
		TransactionID: txID, Status: "queued", MessageID: p.msgs[off].id,
		PartitionID: p.id, QueueName: q.name, TraceID: it.TraceID, Offset: off,
	}
}

// ownPayload copies the payload so the log never pins a larger request buffer; absent is {}.
func ownPayload(data []byte) []byte {
	if data == nil {
		return emptyPayload
	}
	return append(make([]byte, 0, len(data)), data...)
}
