package broker

import (
	"encoding/hex"

	"github.com/google/uuid"
)

// Push stores validated items and wakes the pops they satisfy. What each item needs made
// (a transactionId when it has none, its message id, a copy of its payload) is made before the
// engine's lock is taken, so that a large push holds the lock only to store.
func (e *Engine) Push(items []PushItem) []PushResult {
	made := prepare(items)
	e.mu.Lock()
	defer e.unlock()
	return e.store(items, made)
}

// push stores items under the lock the caller holds (a transaction's pushes).
func (e *Engine) push(items []PushItem) []PushResult { return e.store(items, prepare(items)) }

// made is what one push item needs made before it is stored.
type made struct {
	txID string // the item's transactionId, or a new UUID
	id   string // the id its message gets if it is stored
	data []byte // its payload, owned by the push; {} when absent
}

// prepare makes what the items need, in a few allocations however many they are: the ids are
// slices of one string and the payload copies of one buffer, which live as long as the
// messages. A duplicate's share is made too, and kept with the others'.
func prepare(items []PushItem) []made {
	out := make([]made, len(items))
	size, ids := 0, len(items)
	for i := range items {
		size += len(items[i].Payload)
		if items[i].TransactionID == "" {
			ids++
		}
	}
	text := make([]byte, 0, ids*uuidLen)
	for i := range items {
		text = appendUUID(text, newMessageUUID())
		if items[i].TransactionID == "" {
			text = appendUUID(text, uuid.New())
		}
	}
	all := string(text)
	data := make([]byte, 0, size)
	for i := range items {
		it, m := &items[i], &out[i]
		m.id, all = all[:uuidLen], all[uuidLen:]
		if m.txID = it.TransactionID; m.txID == "" {
			m.txID, all = all[:uuidLen], all[uuidLen:]
		}
		if it.Payload == nil {
			m.data = emptyPayload
			continue
		}
		start := len(data)
		data = append(data, it.Payload...)
		m.data = data[start:len(data):len(data)]
	}
	return out
}

// store stores each item unless its (partition, transactionId) exists.
func (e *Engine) store(items []PushItem, made []made) []PushResult {
	results := make([]PushResult, len(items))
	for i := range items {
		results[i] = e.storeOne(&items[i], &made[i])
		results[i].Index = i
	}
	return results
}

// storeOne stores one item unless its (partition, transactionId) exists.
func (e *Engine) storeOne(it *PushItem, m *made) PushResult {
	q := e.queueFor(it.Queue)
	p := e.partitionFor(q, it.Partition)
	if off, ok := p.byTx[m.txID]; ok {
		return PushResult{
			TransactionID: m.txID, Status: "duplicate", MessageID: p.msgs[off].id,
			PartitionID: p.id, QueueName: q.name, TraceID: it.TraceID, Offset: off,
		}
	}
	off := e.appendMessage(p, m.id, m.txID, it.TraceID, m.data)
	return PushResult{
		TransactionID: m.txID, Status: "queued", MessageID: m.id,
		PartitionID: p.id, QueueName: q.name, TraceID: it.TraceID, Offset: off,
	}
}

const uuidLen = 36 // a UUID's canonical text

// appendUUID appends u's canonical text.
func appendUUID(dst []byte, u uuid.UUID) []byte {
	var s [uuidLen]byte
	hex.Encode(s[0:8], u[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], u[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], u[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], u[8:10])
	s[23] = '-'
	hex.Encode(s[24:], u[10:])
	return append(dst, s[:]...)
}

// newMessageUUID is a message's id: a version 7 UUID, so that ids sort as the messages were
// stored, or a random one should the clock fail.
func newMessageUUID() uuid.UUID {
	if id, err := uuid.NewV7(); err == nil {
		return id
	}
	return uuid.New()
}

func newMessageID() string { return newMessageUUID().String() }
