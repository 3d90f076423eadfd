package broker

import (
	"fmt"

	"github.com/google/uuid"
)

// Transaction applies ack and push operations all or nothing: every operation is
// checked against the state first, and only then is anything applied.
func (e *Engine) Transaction(ops []TxOp) TxResult {
	e.mu.Lock()
	defer e.unlock()
	return e.gen.transaction(uuid.NewString(), ops)
}

// transaction applies the acks together like one batch ack, then the pushes in order.
func (e v20) transaction(txID string, ops []TxOp) TxResult {
	plan, failed, reason := e.checkTransaction(ops)
	if failed >= 0 {
		return rollback(txID, failed, reason)
	}
	acks, accepted := plan.acks, plan.accepted
	// Acks apply together like one batch ack, then the pushes in order.
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

// RefuseTransaction answers a transaction whose operation op could not be read (malformed push
// items): it rolls back at the first operation before op that the state refuses, else at op
// with reason, so the error names the first failure in request order. Nothing is
// applied.
func (e *Engine) RefuseTransaction(ops []TxOp, op int, reason string) TxResult {
	e.mu.Lock()
	defer e.unlock()
	failed, why := e.gen.refusal(ops[:op])
	if failed < 0 {
		failed, why = op, reason
	}
	return rollback(uuid.NewString(), failed, why)
}

func (e v20) refusal(ops []TxOp) (failed int, reason string) {
	_, failed, reason = e.checkTransaction(ops)
	return failed, reason
}

// rollback is the answer of a transaction that failed at operation op.
func rollback(txID string, op int, reason string) TxResult {
	return TxResult{TransactionID: txID, Error: fmt.Sprintf("operation %d: %s", op, reason), Results: []TxEntry{}}
}

// txPlan is a checked transaction's acks, ready to apply.
type txPlan struct {
	acks     []AckResult
	accepted []acceptedAck
}

// checkTransaction checks every operation against the state, applying nothing. failed is the
// first operation refused, with its reason, or -1.
func (e *Engine) checkTransaction(ops []TxOp) (plan txPlan, failed int, reason string) {
	plan.acks = make([]AckResult, 0, len(ops))
	for i := range ops {
		op := &ops[i]
		switch op.Type {
		case "ack":
			res := AckResult{Index: len(plan.acks), TransactionID: op.Ack.TransactionID}
			a, ok := e.checkAck(&op.Ack, &res)
			if res.Error != "" {
				return plan, i, res.Error
			}
			if ok {
				a.idx = len(plan.acks)
				plan.accepted = append(plan.accepted, a)
			}
			plan.acks = append(plan.acks, res)
		case "push":
			for j := range op.Push {
				if op.Push[j].Queue == "" {
					return plan, i, fmt.Sprintf("item %d: queue is required", j)
				}
			}
		default:
			return plan, i, fmt.Sprintf("unknown operation type %q", op.Type)
		}
	}
	return plan, -1, ""
}
