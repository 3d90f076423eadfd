package queen

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/wire"
)

// Transaction gathers acks and pushes that the broker applies all together or not at all: the
// usual use is to ack what a handler consumed and push what it produced, so a crash never
// leaves one without the other. Build it with Client.Transaction, add operations with Ack, Push
// and PushTo (they chain), and send it with Commit. A Transaction is meant for one goroutine at
// a time and one Commit.
//
// On a 0.15 broker, a transaction's failed and dlq acks file the message at once without
// spending the retry budget, and a retry ack or a duplicate push transactionId fails the whole
// transaction.
type Transaction struct {
	c   *Client
	mu  sync.Mutex
	ops []txOp
}

type txOp struct {
	isAck bool
	// ack
	msg     *Message
	status  Status
	errText string
	// push
	queue, partition string
	items            []PushItem
}

// TransactionResult is a committed transaction: the broker's id for it, and one entry per ack
// operation and per pushed item, in the order they were added.
type TransactionResult struct {
	TransactionID string
	Results       []TransactionEntry
}

// TransactionEntry is the outcome of one ack or one pushed item of a transaction.
type TransactionEntry struct {
	Type          string // "ack" or "push"
	Success       bool
	TransactionID string // the acked or pushed message's transactionId
	PartitionID   string
	Error         string
	// Push entries only.
	MessageID string
	Status    string // "queued" or "duplicate"
	Offset    int64  // -1 when the broker does not send it (0.15)
	// Ack entries only.
	DLQ, LeaseReleased bool
}

// Transaction starts an empty transaction.
func (c *Client) Transaction() *Transaction { return &Transaction{c: c} }

// Ack adds the ack of m with status. It is sent with m's leaseId and consumer group, so it is
// applied only under the lease m was delivered with.
func (tx *Transaction) Ack(m *Message, status Status, opts ...AckOption) *Transaction {
	var o ackOptions
	for _, opt := range opts {
		opt(&o)
	}
	tx.mu.Lock()
	tx.ops = append(tx.ops, txOp{isAck: true, msg: m, status: status, errText: o.errText})
	tx.mu.Unlock()
	return tx
}

// Push adds items for queue, each in its own Partition (Default when empty).
func (tx *Transaction) Push(queue string, items ...PushItem) *Transaction {
	return tx.PushTo(queue, "", items...)
}

// PushTo adds items for the named partition of queue; an item's own Partition, when set, wins.
func (tx *Transaction) PushTo(queue, partition string, items ...PushItem) *Transaction {
	tx.mu.Lock()
	tx.ops = append(tx.ops, txOp{queue: queue, partition: partition, items: items})
	tx.mu.Unlock()
	return tx
}

// Commit checks every operation (a nil or incomplete message, an unknown status, an empty
// queue, a bad trace id), then sends the transaction. A rollback returns an error wrapping
// ErrTransactionFailed with the broker's reason. When the answer was lost after the
// transaction was sent, Commit never reports ErrTransactionFailed: the error wraps
// ErrOutcomeUnknown (with the resend's answer, if any), as the broker may have applied it.
// The acked messages count as settled once
// committed; if the commit fails or is rolled back, they are unsettled again.
// A message already settled is refused with ErrAlreadySettled before anything is sent.
func (tx *Transaction) Commit(ctx context.Context) (TransactionResult, error) {
	tx.mu.Lock()
	ops := append([]txOp(nil), tx.ops...)
	tx.mu.Unlock()
	if len(ops) == 0 {
		return TransactionResult{}, invalidOption("transaction", "empty", "needs at least one Ack or Push")
	}
	body := wire.TransactionRequest{Operations: make([]wire.Operation, len(ops))}
	affinity := ""
	pushed := 0
	var acked []*Message
	for i, op := range ops {
		name := fmt.Sprintf("operations[%d]", i)
		if op.isAck {
			if err := checkAckItem(name, op.msg, op.status); err != nil {
				return TransactionResult{}, err
			}
			if err := checkText(name+".error", op.errText); err != nil {
				return TransactionResult{}, err
			}
			ack := newAckRequest(op.msg, op.status, op.errText)
			body.Operations[i] = wire.Operation{Type: "ack", AckRequest: &ack}
			if affinity == "" {
				affinity = op.msg.route
			}
			continue
		}
		if op.queue == "" {
			return TransactionResult{}, invalidOption(name+".queue", `""`, "a push needs a queue name")
		}
		items, err := pushItems(name+".items", op.queue, op.partition, op.items)
		if err != nil {
			return TransactionResult{}, err
		}
		body.Operations[i] = wire.Operation{Type: "push", Items: items}
		pushed += len(items)
		if affinity == "" {
			affinity = affinityKey(op.queue, op.partition, "")
		}
	}
	for i, op := range ops {
		if !op.isAck {
			continue
		}
		if !op.msg.markSettled() {
			unsettleAll(acked)
			return TransactionResult{}, fmt.Errorf("queen: operations[%d] (%s): %w",
				i, op.msg.TransactionID, ErrAlreadySettled)
		}
		acked = append(acked, op.msg)
	}
	res, err := tx.c.commit(ctx, &body, affinity, pushed)
	if err != nil {
		unsettleAll(acked)
	}
	if len(tx.c.hooks.acked) > 0 {
		tx.c.reportTransactionAcks(ops, res, err)
	}
	return res, err
}

// reportTransactionAcks tells the Acked hooks how the broker answered a transaction's acks:
// each as its entry says when committed, all refused with the reason when rolled back.
func (c *Client) reportTransactionAcks(ops []txOp, res TransactionResult, err error) {
	if err != nil && !errors.Is(err, ErrTransactionFailed) {
		return // no answer: nothing to report
	}
	reason := ""
	if err != nil {
		reason = strings.TrimPrefix(err.Error(), ErrTransactionFailed.Error()+": ")
	}
	entry := 0
	for _, op := range ops {
		if !op.isAck {
			entry += len(op.items)
			continue
		}
		e := AckedEvent{Message: op.msg, Status: op.status, Success: err == nil, Error: reason}
		if e.Status == "" {
			e.Status = StatusCompleted
		}
		if err == nil && entry < len(res.Results) {
			e.Success, e.Error = res.Results[entry].Success, res.Results[entry].Error
		}
		entry++
		c.hooks.onAcked(e)
	}
}

func unsettleAll(msgs []*Message) {
	for _, m := range msgs {
		m.unsettle()
	}
}

func (c *Client) commit(ctx context.Context, body *wire.TransactionRequest, affinity string, pushed int) (TransactionResult, error) {
	raw, err := wire.Marshal(body)
	if err != nil {
		return TransactionResult{}, fmt.Errorf("queen: encode transaction: %w", err)
	}
	req := request{method: http.MethodPost, path: route.Transaction.Path(), body: raw, affinity: affinity,
		route: route.Transaction, items: pushed, once: true}
	buf := getBuffer()
	defer putBuffer(buf)
	if _, err := c.send(ctx, &req, buf); err != nil {
		return TransactionResult{}, err
	}
	return transactionAnswer(buf.Bytes(), &req)
}

// transactionAnswer reads a transaction's answer: its entries when committed; a rollback as
// an error wrapping ErrTransactionFailed, unless the first answer was lost, when the rollback
// of the resend most likely means the first request was applied.
func transactionAnswer(body []byte, req *request) (TransactionResult, error) {
	var w wire.TransactionAnswer
	if err := wire.Unmarshal(body, &w); err != nil {
		return TransactionResult{}, &APIError{StatusCode: http.StatusOK, Method: req.method, Path: req.path,
			Message: "transaction answer is not a JSON object: " + err.Error(), NotJSON: true}
	}
	if !w.Success {
		reason := deref(w.Error)
		if reason == "" {
			reason = "rolled back"
		}
		if req.answerLost {
			return TransactionResult{TransactionID: w.TransactionID},
				outcomeUnknown(req, fmt.Errorf("the resend was rolled back: %s", reason))
		}
		return TransactionResult{TransactionID: w.TransactionID},
			fmt.Errorf("%w: %s", ErrTransactionFailed, reason)
	}
	res := TransactionResult{TransactionID: w.TransactionID, Results: make([]TransactionEntry, len(w.Results))}
	for i, r := range w.Results {
		e := TransactionEntry{Type: r.Type, Success: r.Success, TransactionID: r.TransactionID,
			PartitionID: r.PartitionID, Offset: -1}
		if a := r.AckEntry; a != nil {
			e.Error, e.DLQ, e.LeaseReleased = deref(a.Error), a.DLQ, a.LeaseReleased
		}
		if p := r.PushEntry; p != nil {
			e.MessageID, e.Status = p.MessageID, p.Status
			if p.Offset != nil {
				e.Offset = *p.Offset
			}
		}
		if e.Type == "push" && e.Success && e.Status == "" {
			e.Status = "queued" // a 0.15 broker fails the transaction on a duplicate instead
		}
		res.Results[i] = e
	}
	return res, nil
}
