package broker

import (
	"fmt"

	"github.com/google/uuid"
)

// Transaction applies ack and push operations all or nothing (R126–R130): every operation is
// checked against the state first, and only then is anything applied.
func (e *Engine) Transaction(ops []TxOp) TxResult {
	e.mu.Lock()
	defer e.unlock()
	if e.is015() {
		return e.transaction015(ops)
	}
	txID := uuid.NewString()
	rollback := func(op int, reason string) TxResult {
		return TxResult{TransactionID: txID, Error: fmt.Sprintf("operation %d: %s", op, reason), Results: []TxEntry{}}
	}

	acks := make([]AckResult, 0, len(ops))
	var accepted []acceptedAck
	for i := range ops {
		op := &ops[i]
		switch op.Type {
		case "ack":
			res := AckResult{Index: len(acks), TransactionID: op.Ack.TransactionID}
			a, ok := e.checkAck(&op.Ack, &res)
			if res.Error != nil {
				return rollback(i, *res.Error)
			}
			if ok {
				a.idx = len(acks)
				accepted = append(accepted, a)
			}
			acks = append(acks, res)
		case "push":
			if op.Invalid != "" {
				return rollback(i, op.Invalid)
			}
			for j := range op.Push {
				if op.Push[j].Queue == "" {
					return rollback(i, fmt.Sprintf("item %d: queue is required", j))
				}
			}
		default:
			return rollback(i, fmt.Sprintf("unknown operation type %q", op.Type))
		}
	}

	// Acks apply together like one batch ack (R128), then the pushes in order.
	e.applyAcks(accepted, acks)
	entries := make([]TxEntry, 0, len(ops))
	ackN := 0
	for i := range ops {
		op := &ops[i]
		if op.Type == "ack" {
			a := acks[ackN]
			ackN++
			entries = append(entries, TxEntry{
				Index: len(entries), Type: "ack", Success: a.Success, TransactionID: a.TransactionID,
				PartitionID: op.Ack.PartitionID, Error: a.Error, DLQ: a.DLQ, LeaseReleased: a.LeaseReleased,
			})
			continue
		}
		for _, p := range e.push(op.Push) {
			entries = append(entries, TxEntry{
				Index: len(entries), Type: "push", Success: true, Status: p.Status,
				TransactionID: p.TransactionID, MessageID: p.MessageID, PartitionID: p.PartitionID,
				QueueName: p.QueueName, Offset: p.Offset,
			})
		}
	}
	return TxResult{TransactionID: txID, Success: true, Results: entries}
}
