package broker

// Acks and transactions on 0.15. What differs from 2.0: every item is checked against the state
// before the request, then the items apply one by one in array order; nothing checks that a
// message was handed to the group or is in its leased batch; a completed moves the cursor to
// its message wherever it is; a lease ends once as many acks as it leased messages have come;
// a failed of a group that never read the partition, and any failed in a transaction, is filed
// at once; a transaction refuses a retry and rolls back on a push whose transactionId exists.

import "fmt"

// ack015 is one ack item checked against the state as 0.15 checks it.
type ack015 struct {
	p      *partition
	group  string
	off    int64
	status ackStatus
	errMsg string
}

// check runs 0.15's checks: an unknown status is refused with no error text, a wrong
// leaseId is refused, and nothing checks that the message was delivered or is in the batch.
func (e v015) check(it *AckItem, res *AckResult) (ack015, bool) {
	p := e.partitions[it.PartitionID]
	if p != nil {
		res.QueueName, res.PartitionName = p.q.name, p.name
	}
	status, ok := parseAckStatus(it.Status)
	if !ok {
		return ack015{}, false
	}
	off, found := int64(0), false
	if p != nil {
		off, found = p.byTx[it.TransactionID]
	}
	if !found {
		res.Error = errMessageNotFound
		return ack015{}, false
	}
	group := it.Group
	if group == "" {
		group = QueueMode
	}
	if it.LeaseID != "" {
		if live := e.liveLease(p.groups[group]); live == nil || live.id != it.LeaseID {
			res.Error = errInvalidLease
			return ack015{}, false
		}
	}
	return ack015{p: p, group: group, off: off, status: status, errMsg: it.Error}, true
}

// ack applies acks one by one in array order, as 0.15 does, once all are
// checked:
// a completed moves the cursor to its message, backwards or past a failed one; a lease ends
// once as many acks as it leased messages have come, wherever they point.
func (e v015) ack(items []AckItem) []AckResult {
	results := make([]AckResult, len(items))
	checked := make([]ack015, len(items))
	ok := make([]bool, len(items))
	for i := range items { // every item is checked against the state before the request
		results[i] = AckResult{Index: i, TransactionID: items[i].TransactionID}
		checked[i], ok[i] = e.check(&items[i], &results[i])
	}
	for i := range items {
		if ok[i] {
			e.apply(checked[i], &results[i], false)
		}
	}
	return results
}

// apply applies one checked item. In a transaction (tx) a failed files the message at once,
// without the retry budget. The budget is the (partition, group)'s: every failed spends
// from it, whichever message it names.
func (e v015) apply(a ack015, res *AckResult, tx bool) {
	res.Success = true
	gc := a.p.groups[a.group]
	neverRead := gc == nil
	if neverRead { // 0.15 makes the group's cursor row on the spot
		gc = e.placeCursor(a.p, a.group, -1)
		gc.visited = true
	}
	live := e.liveLease(gc)
	switch a.status {
	case ackCompleted:
		gc.cursor = a.off // wherever it was
		e.cursorMoved(gc)
		e.consumed015(gc, true)
		// The retry counter is the (partition, group)'s: only a completed that finishes a
		// whole leased batch resets it, so a failure in each of several batches spends one
		// budget across different messages.
		finished := live != nil && e.countAck(gc)
		if finished {
			gc.retries = 0
			gc.p.recount() // the partition's failed count reads the counter
		}
		res.LeaseReleased = live == nil || finished
		return
	case ackRetry:
		res.LeaseReleased = e.release(gc)
		return
	case ackFailed:
		// A group that never read the partition has no budget: its failed files at once.
		if !tx && !neverRead && gc.retries < gc.p.q.retryLimit {
			gc.retries++
			gc.retryOff = a.off
			res.LeaseReleased = e.release(gc)
			return
		}
	}
	// dlq, or a failed with no budget left. The counter is not reset, and 0.15 does not
	// report the release this ack may cause.
	res.DLQ = e.fileDeadLetter(gc, a.off, a.errMsg)
	if d := e.deadBy[deadKey{gc.p, a.off, gc.group}]; d != nil && a.status == ackFailed && a.errMsg == "" {
		d.errMsg = "" // 0.15 names no reason for a failed sent without one; a dlq's is the default
	}
	gc.cursor = a.off
	e.cursorMoved(gc)
	e.consumed015(gc, false)
	e.countAck(gc)
}

// countAck counts one more ack against the group's live lease on the partition and ends
// the hold once the count reaches the leased batch's size.
func (e v015) countAck(gc *cursorState) bool {
	l := e.liveLease(gc)
	if l == nil {
		return false
	}
	if gc.ackedLease != l {
		gc.ackedLease, gc.acked = l, 0
	}
	gc.acked++
	if int64(gc.acked) < gc.last-gc.first+1 {
		return false
	}
	e.endHold(gc, endReached)
	return true
}

// transaction is a 0.15 transaction: every operation is checked first; a retry, an
// unknown status or a push whose transactionId exists rolls everything back; a failed or a
// dlq files the message at once; then the operations apply in order.
func (e v015) transaction(txID string, ops []TxOp) TxResult {
	acks, failed, reason := e.checkTransaction(ops)
	if failed >= 0 {
		return rollback(txID, failed, reason)
	}
	entries := make([]TxEntry, 0, len(ops))
	for i := range ops {
		op := &ops[i]
		if op.Type == "ack" {
			res := AckResult{TransactionID: op.Ack.TransactionID}
			e.apply(acks[i], &res, true)
			entries = append(entries, TxEntry{
				Index: len(entries), Type: "ack", Success: res.Success, TransactionID: res.TransactionID,
				PartitionID: op.Ack.PartitionID, DLQ: res.DLQ, LeaseReleased: res.LeaseReleased,
			})
			continue
		}
		for _, p := range e.push(op.Push) {
			entries = append(entries, TxEntry{
				Index: len(entries), Type: "push", Success: true, Status: p.Status,
				TransactionID: p.TransactionID, MessageID: p.MessageID, PartitionID: p.PartitionID,
				QueueName: p.QueueName, Offset: -1,
			})
		}
	}
	return TxResult{TransactionID: txID, Success: true, Results: entries}
}

// checkTransaction checks a 0.15 transaction's operations, applying nothing. failed is
// the first operation refused, with its reason, or -1.
func (e v015) checkTransaction(ops []TxOp) (acks []ack015, failed int, reason string) {
	acks = make([]ack015, len(ops))
	for i := range ops {
		op := &ops[i]
		switch op.Type {
		case "ack":
			var res AckResult
			a, ok := e.check(&op.Ack, &res)
			switch {
			case !ok && res.Error != "":
				return acks, i, res.Error
			case !ok:
				return acks, i, fmt.Sprintf("invalid status %q", op.Ack.Status)
			case a.status == ackRetry:
				return acks, i, "status retry is not supported in a transaction"
			}
			acks[i] = a
		case "push":
			for j := range op.Push {
				if reason := e.pushRefusal(&op.Push[j]); reason != "" {
					return acks, i, fmt.Sprintf("item %d: %s", j, reason)
				}
			}
		default:
			return acks, i, fmt.Sprintf("unknown operation type %q", op.Type)
		}
	}
	return acks, -1, ""
}

// pushRefusal is why a transaction's push item fails on 0.15: a missing queue, or a
// transactionId its partition already holds.
func (e v015) pushRefusal(it *PushItem) string {
	if it.Queue == "" {
		return "queue is required"
	}
	if it.TransactionID == "" {
		return ""
	}
	name := it.Partition
	if name == "" {
		name = defaultPartition
	}
	if q := e.queues[it.Queue]; q != nil {
		if p := q.byName[name]; p != nil {
			if _, dup := p.byTx[it.TransactionID]; dup {
				return fmt.Sprintf("duplicate key value violates unique constraint: transactionId %q exists", it.TransactionID)
			}
		}
	}
	return ""
}

func (e v015) refusal(ops []TxOp) (failed int, reason string) {
	_, failed, reason = e.checkTransaction(ops)
	return failed, reason
}
