package queen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Message is one leased message as a pop handed it out.
//
// A message is settled once: Ack, Nack, Retry and DeadLetter each send one ack, and any later
// settle returns ErrAlreadySettled without sending anything. When the broker answered (even
// with a refusal, such as an expired lease), the message stays settled. When the request got
// no usable answer (a network failure, a 5xx after the retries, a cancelled ctx), it becomes
// unsettled again, so the call can be repeated, and a consume loop still nacks it if the
// handler then fails. Such an ack may still have been applied; a repeat is then refused.
type Message struct {
	ID, TransactionID, TraceID    string
	Queue, Partition, PartitionID string
	ConsumerGroup, LeaseID        string
	Offset                        int64 // -1 when the broker does not send it (0.15)
	DeliveryAttempt               int   // 0 when the broker does not send it (0.15)
	CreatedAt                     time.Time
	Data                          json.RawMessage

	client  *Client
	route   string      // the affinity key of the pop that leased it, so acks reach the same broker
	settled atomic.Bool // set by the first settle; a second one returns ErrAlreadySettled
}

// Decode unmarshals the message's data into v.
func (m *Message) Decode(v any) error {
	if err := json.Unmarshal(m.Data, v); err != nil {
		return fmt.Errorf("queen: decode message %s: %w", m.TransactionID, err)
	}
	return nil
}

// Ack completes the message: the group's cursor moves to it and it is not delivered again.
func (m *Message) Ack(ctx context.Context) error { return m.settle(ctx, StatusCompleted, "") }

// Nack fails the message: it spends one retry of its partition's budget and comes back at once
// (with the rest of its batch); once the budget is spent it is dead-lettered. reason's text is
// stored with the dead letter.
func (m *Message) Nack(ctx context.Context, reason error) error {
	return m.settle(ctx, StatusFailed, errorText(reason))
}

// Retry releases the message to be delivered again at once, without spending a retry.
func (m *Message) Retry(ctx context.Context) error { return m.settle(ctx, StatusRetry, "") }

// DeadLetter files the message as a dead letter at once, whatever its retry budget, with
// reason's text.
func (m *Message) DeadLetter(ctx context.Context, reason error) error {
	return m.settle(ctx, StatusDLQ, errorText(reason))
}

// Renew extends the lease the message was delivered under (and so that of its whole batch)
// to at least now+extend. A refused renewal wraps ErrLeaseExpired.
func (m *Message) Renew(ctx context.Context, extend time.Duration) (time.Time, error) {
	if m.client == nil {
		return time.Time{}, errNoClient
	}
	return m.client.Renew(ctx, m.LeaseID, extend)
}

var errNoClient = fmt.Errorf("%w: message: was not delivered by a Client", ErrInvalidOption)

// settle sends the message's one ack. A second settle returns ErrAlreadySettled and sends
// nothing. When the ack cannot be delivered (a transport failure or a broker error, rather
// than an answer refusing the item), the message becomes unsettled again so the caller, or
// the consume loop's nack of what was left unsettled, can try again.
func (m *Message) settle(ctx context.Context, status Status, errText string) error {
	if m.client == nil {
		return errNoClient
	}
	if err := checkAckItem("message", m, status); err != nil {
		return err
	}
	if err := checkText("reason", errText); err != nil {
		return err
	}
	if !m.markSettled() {
		return ErrAlreadySettled
	}
	_, err := m.client.ack(ctx, m, status, errText)
	if err != nil && !errors.Is(err, errAckRefused) {
		m.unsettle()
	}
	return err
}

// markSettled reports true for the first caller only; every settle path calls it.
func (m *Message) markSettled() bool { return m.settled.CompareAndSwap(false, true) }

// unsettle undoes markSettled after a settle that did not reach the broker.
func (m *Message) unsettle() { m.settled.Store(false) }

// logAttrs are the message's attributes in the loop's log lines.
func (m *Message) logAttrs() []any {
	return []any{"queue", m.Queue, "partition", m.Partition, "transactionId", m.TransactionID,
		"attempt", m.DeliveryAttempt}
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
