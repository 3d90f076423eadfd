package broker

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"io"
	"slices"
	"strings"

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
// slices of one string, drawn from one read of randomness, and the payload copies slices of
// one buffer; they live as long as the messages. A duplicate's share is made too, and kept
// with the others'.
func prepare(items []PushItem) []made {
	out := make([]made, len(items))
	size, ids := 0, len(items)
	for i := range items {
		size += len(items[i].Payload)
		if items[i].TransactionID == "" {
			ids++
		}
	}
	random := make([]byte, ids*16)
	if _, err := rand.Read(random); err != nil {
		random = nil // each id then reads its own
	}
	rnd := bytes.NewReader(random)
	var text strings.Builder
	text.Grow(ids * uuidLen)
	for i := range items {
		writeUUID(&text, newMessageUUID(rnd))
		if items[i].TransactionID == "" {
			writeUUID(&text, newRandomUUID(rnd))
		}
	}
	all := text.String()
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

// store stores each item unless its (partition, transactionId) exists. Items that go where
// the one before went (the usual push) reuse its partition, and the partition's log grows
// once for all of them.
func (e *Engine) store(items []PushItem, made []made) []PushResult {
	results := make([]PushResult, len(items))
	var p *partition
	for i := range items {
		it := &items[i]
		if p == nil || it.Queue != p.q.name || cmp.Or(it.Partition, defaultPartition) != p.name {
			p = e.partitionFor(e.queueFor(it.Queue), it.Partition)
			run := 1
			for run < len(items)-i && items[i+run].Queue == it.Queue && items[i+run].Partition == it.Partition {
				run++
			}
			p.msgs = growLog(p.msgs, run)
		}
		results[i] = e.storeOne(p, it, &made[i])
		results[i].Index = i
	}
	return results
}

// growLog makes room in a partition's log for n more messages. A log only grows, and each
// growth copies it whole, so it doubles: a long log is copied about twice over as it grows
// rather than about five times with append's own growth, for at most as much room again.
func growLog(msgs []storedMessage, n int) []storedMessage {
	if cap(msgs)-len(msgs) >= n {
		return msgs
	}
	return slices.Grow(msgs, max(n, len(msgs)))
}

// storeOne stores one item in p, its partition, unless its transactionId is there already.
func (e *Engine) storeOne(p *partition, it *PushItem, m *made) PushResult {
	q := p.q
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

// writeUUID writes u's canonical text.
func writeUUID(b *strings.Builder, u uuid.UUID) {
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
	b.Write(s[:])
}

// newMessageUUID is a message's id: a version 7 UUID, so that ids sort as the messages were
// stored, its random bits read from rnd (or, once rnd is spent, from the system), or a random
// one should the clock fail.
func newMessageUUID(rnd io.Reader) uuid.UUID {
	if id, err := uuid.NewV7FromReader(rnd); err == nil {
		return id
	}
	if id, err := uuid.NewV7(); err == nil {
		return id
	}
	return uuid.New()
}

// newRandomUUID is a version 4 UUID read from rnd, or from the system once rnd is spent.
func newRandomUUID(rnd io.Reader) uuid.UUID {
	if id, err := uuid.NewRandomFromReader(rnd); err == nil {
		return id
	}
	return uuid.New()
}

func newMessageID() string { return newMessageUUID(rand.Reader).String() }
