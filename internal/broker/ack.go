package broker

import (
	"cmp"
	"slices"
	"strings"
)

type ackStatus uint8

const (
	ackCompleted ackStatus = iota + 1
	ackFailed
	ackRetry
	ackDLQ
)

func parseAckStatus(s string) (ackStatus, bool) {
	switch s {
	case "", "completed", "success": // success is an alias
		return ackCompleted, true
	case "failed":
		return ackFailed, true
	case "retry":
		return ackRetry, true
	case "dlq":
		return ackDLQ, true
	}
	return 0, false
}

// The refusals of an ack item, in the order the item is checked.
const (
	errTransactionIDRequired = "transactionId is required"
	errPartitionIDRequired   = "partitionId is required"
	errInvalidStatus         = "Invalid status"
	errMessageNotFound       = "Message not found"
	errInvalidLease          = "Invalid or expired lease"
	errNotInLeasedBatch      = "message not in leased batch"
	errNotDelivered          = "message not delivered to this group"
)

// acceptedAck is an item that passed the checks and waits to be applied.
type acceptedAck struct {
	idx     int
	gc      *cursorState
	off     int64
	status  ackStatus
	errText string
}

// Ack applies items as one batch ack; results come back in item order.
func (e *Engine) Ack(items []AckItem) []AckResult {
	e.mu.Lock()
	defer e.unlock()
	return e.gen.ack(items)
}

// ack checks every item against the state before the request, then applies the accepted ones
// per (partition, group) from the lowest offset up.
func (e v20) ack(items []AckItem) []AckResult {
	results := make([]AckResult, len(items))
	accepted := make([]acceptedAck, 0, len(items))
	for i := range items {
		results[i] = AckResult{Index: i, TransactionID: items[i].TransactionID}
		if a, ok := e.checkAck(&items[i], &results[i]); ok {
			a.idx = i
			accepted = append(accepted, a)
		}
	}
	e.applyAcks(accepted, results)
	return results
}

// checkAck checks an item against the state before the request: ids present, a known
// status, a message that exists, the live lease when one is named, and a message handed to
// the group (in its leased batch while it holds one). It fills res for a refused item or
// one at or below the cursor (success, no change), and returns the item to apply otherwise.
func (e *Engine) checkAck(it *AckItem, res *AckResult) (acceptedAck, bool) {
	refuse := func(msg string) (acceptedAck, bool) {
		res.Success, res.Error = false, msg
		return acceptedAck{}, false
	}
	p := e.partitions[it.PartitionID]
	if p != nil { // the names follow partitionId, whatever refuses the item
		res.QueueName, res.PartitionName = p.q.name, p.name
	}
	if it.TransactionID == "" {
		return refuse(errTransactionIDRequired)
	}
	if it.PartitionID == "" {
		return refuse(errPartitionIDRequired)
	}
	status, ok := parseAckStatus(it.Status)
	if !ok {
		return refuse(errInvalidStatus)
	}
	if p == nil {
		return refuse(errMessageNotFound)
	}
	off, ok := p.byTx[it.TransactionID]
	if !ok {
		return refuse(errMessageNotFound)
	}
	group := it.Group
	if group == "" {
		group = QueueMode
	}
	gc := p.groups[group]
	live := e.liveLease(gc)
	if it.LeaseID != "" && (live == nil || live.id != it.LeaseID) {
		return refuse(errInvalidLease)
	}
	cursor := int64(-1)
	if gc != nil {
		cursor = gc.cursor
	} else if m := p.q.groups[group]; m != nil {
		cursor = m.initialCursor(p)
	}
	if off <= cursor {
		res.Success = true // done already: no change
		return acceptedAck{}, false
	}
	switch {
	case live != nil && (off < gc.first || off > gc.last):
		return refuse(errNotInLeasedBatch)
	case live == nil && !gc.deliveredTo(off):
		return refuse(errNotDelivered)
	}
	return acceptedAck{gc: gc, off: off, status: status, errText: it.Error}, true
}

func (gc *cursorState) deliveredTo(off int64) bool { return gc != nil && gc.delivered(off) }

// applyAcks applies accepted items per (partition, group) from the lowest offset up; a failed
// with retries left or a retry is the stop, above which items succeed unapplied.
func (e *Engine) applyAcks(accepted []acceptedAck, results []AckResult) {
	if len(accepted) > 1 {
		slices.SortFunc(accepted, func(a, b acceptedAck) int {
			if a.gc != b.gc {
				if c := cmp.Compare(a.gc.p.order, b.gc.p.order); c != 0 {
					return c
				}
				return strings.Compare(a.gc.group, b.gc.group)
			}
			return cmp.Or(cmp.Compare(a.off, b.off), cmp.Compare(a.idx, b.idx))
		})
	}
	var stopped *cursorState
	for _, a := range accepted {
		res := &results[a.idx]
		res.Success = true
		gc := a.gc
		if gc == stopped || a.off <= gc.cursor {
			continue
		}
		switch a.status {
		case ackCompleted:
			before := gc.cursor
			e.advance(gc, a.off)
			e.consumed(gc, before, 0)
			res.LeaseReleased = e.endIfReached(gc)
		case ackFailed:
			if gc.retries < gc.p.q.retryLimit {
				gc.retries++
				gc.retryOff = a.off
				res.LeaseReleased = e.release(gc)
				stopped = gc
				continue
			}
			res.DLQ, res.LeaseReleased = e.giveUp(gc, a.off, a.errText)
		case ackDLQ:
			res.DLQ, res.LeaseReleased = e.giveUp(gc, a.off, a.errText)
		case ackRetry:
			res.LeaseReleased = e.release(gc)
			stopped = gc
		}
	}
}

// giveUp files (or drops) the message and moves the cursor to it.
func (e *Engine) giveUp(gc *cursorState, off int64, errText string) (filed, released bool) {
	filed = e.fileDeadLetter(gc, off, errText)
	before := gc.cursor
	e.advance(gc, off)
	e.consumed(gc, before, 1)
	return filed, e.endIfReached(gc)
}
