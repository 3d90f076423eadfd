package queen

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/wire"
)

// AckOption adjusts one ack.
type AckOption func(*ackOptions)

type ackOptions struct{ errText string }

// WithError sets the error text stored with a failed or dlq ack (the dead letter's errorMessage).
func WithError(msg string) AckOption { return func(o *ackOptions) { o.errText = msg } }

// Ack settles one message with status (completed, failed, retry or dlq) in one request. The
// message is sent back with its leaseId, so the ack is applied only under the lease it was
// delivered with; a refused ack is returned as an error too (errors.Is(err, ErrLeaseExpired)
// when the lease was expired, released or taken over). A message settled before (by Ack, its
// own methods, AckBatch or a committed Transaction) returns ErrAlreadySettled and sends
// nothing. When no answer came back (a transport failure), the message is unsettled again so
// the call can be repeated. When the answer was lost after the request was sent and the resend
// was refused too, the error wraps ErrOutcomeUnknown: the first ack may have been applied.
func (c *Client) Ack(ctx context.Context, m *Message, status Status, opts ...AckOption) (AckResult, error) {
	if err := checkAckItem("message", m, status); err != nil {
		return AckResult{}, err
	}
	var o ackOptions
	for _, opt := range opts {
		opt(&o)
	}
	if err := checkText("WithError", o.errText); err != nil {
		return AckResult{}, err
	}
	if !m.markSettled() {
		return AckResult{}, ErrAlreadySettled
	}
	res, err := c.ack(ctx, m, status, o.errText)
	if err != nil && !errors.Is(err, errAckRefused) {
		m.unsettle()
	}
	return res, err
}

// AckBatch settles several messages in one request. Results come back in the order of items;
// a refused item has Success false and its reason in Error, and does not fail the call. err is
// only for a request that failed as a whole (or an invalid item, refused before sending), and
// for a request whose first answer was lost and whose resend had items refused: then err wraps
// ErrOutcomeUnknown beside the results, as the first request may have applied them. An
// empty Status means completed. An empty list sends nothing. It is the low-level form: it sends
// messages settled before too (the broker then answers for them: a completed one succeeds
// again, one whose lease ended is refused), and marks every message settled once the broker
// answered.
//
// Send the messages of one partition in offset order: a 0.15 broker that sees a completed above
// a failed or retry of the same batch moves past the failed message and loses it.
func (c *Client) AckBatch(ctx context.Context, items []AckItem) ([]AckResult, error) {
	for i, it := range items {
		if err := checkAckItem(fmt.Sprintf("items[%d]", i), it.Message, it.Status); err != nil {
			return nil, err
		}
		if err := checkText(fmt.Sprintf("items[%d].error", i), it.Error); err != nil {
			return nil, err
		}
	}
	results, err := c.ackBatch(ctx, items)
	if err == nil {
		for _, it := range items {
			it.Message.settled.Store(true)
		}
	}
	return results, err
}

// ackBatch sends valid items as one batch ack; it leaves their settled state alone.
func (c *Client) ackBatch(ctx context.Context, items []AckItem) ([]AckResult, error) {
	if len(items) == 0 {
		return nil, nil // a 0.15 broker never answers an empty batch
	}
	raw, err := encodeAckBatch(items)
	if err != nil {
		return nil, fmt.Errorf("queen: encode ack batch: %w", err)
	}
	req := request{method: http.MethodPost, path: route.AckBatch.Path(), body: raw,
		affinity: items[0].Message.route, route: route.AckBatch, items: len(items), once: true}
	return c.postAcks(ctx, &req, items)
}

// encodeAckBatch writes the body of a batch ack of valid items, straight into one buffer: the
// bytes the wire codec would write for the same wire.AckBatchRequest.
func encodeAckBatch(items []AckItem) ([]byte, error) {
	group, uniform := groupOf(items[0].Message), true
	size := 64
	for _, it := range items {
		m := it.Message
		if groupOf(m) != group {
			uniform = false
		}
		size += 96 + len(m.TransactionID) + len(m.PartitionID) + len(m.LeaseID) + len(m.ConsumerGroup) + len(it.Error)
	}
	dst := make([]byte, 0, size)
	dst = append(dst, `{"acknowledgments":[`...)
	for i, it := range items {
		if i > 0 {
			dst = append(dst, ',')
		}
		req := newAckRequest(it.Message, it.Status, it.Error)
		if uniform {
			req.ConsumerGroup = "" // said once for every item
		}
		dst = appendAckRequest(dst, &req)
	}
	dst = append(dst, ']')
	if uniform && group != "" {
		// One group for every item: say it once, as both broker versions read it.
		dst = append(dst, `,"consumerGroup":`...)
		dst = appendQuoted(dst, group)
	}
	return append(dst, '}'), nil
}

// appendAckRequest appends one ack item's JSON object, its members in the order and with the
// omissions of wire.AckRequest.
func appendAckRequest(dst []byte, r *wire.AckRequest) []byte {
	dst = append(dst, `{"transactionId":`...)
	dst = appendQuoted(dst, r.TransactionID)
	dst = append(dst, `,"partitionId":`...)
	dst = appendQuoted(dst, r.PartitionID)
	for _, f := range [...]struct{ name, value string }{
		{`,"leaseId":`, r.LeaseID}, {`,"status":`, r.Status},
		{`,"consumerGroup":`, r.ConsumerGroup}, {`,"error":`, r.Error},
	} {
		if f.value != "" {
			dst = append(dst, f.name...)
			dst = appendQuoted(dst, f.value)
		}
	}
	return append(dst, '}')
}

// appendQuoted appends s as a JSON string, invalid UTF-8 replaced by U+FFFD as the wire codec
// writes it.
func appendQuoted(dst []byte, s string) []byte {
	dst, _ = jsontext.AppendQuote(dst, s) // on invalid UTF-8 it still writes, replaced
	return dst
}

// ack sends one message's ack; a refused item is returned as an error wrapping errAckRefused.
func (c *Client) ack(ctx context.Context, m *Message, status Status, errText string) (AckResult, error) {
	body := newAckRequest(m, status, errText)
	raw := appendAckRequest(make([]byte, 0, 128+len(m.TransactionID)+len(m.PartitionID)+len(m.LeaseID)+len(errText)), &body)
	req := request{method: http.MethodPost, path: route.Ack.Path(), body: raw, affinity: m.route,
		route: route.Ack, items: 1, once: true}
	items := [1]AckItem{{Message: m, Status: status, Error: errText}}
	results, err := c.postAcks(ctx, &req, items[:])
	if err != nil {
		return AckResult{}, err
	}
	res := results[0]
	if !res.Success {
		return res, &ackRefusedError{transactionID: m.TransactionID, reason: res.Error}
	}
	return res, nil
}

// postAcks sends an ack request and matches the answer's array to items by position.
func (c *Client) postAcks(ctx context.Context, req *request, items []AckItem) ([]AckResult, error) {
	buf := getBuffer()
	defer putBuffer(buf)
	if _, err := c.send(ctx, req, buf); err != nil {
		return nil, err
	}
	results, err := ackResults(buf.Bytes(), req, items)
	if err != nil {
		return nil, err
	}
	if len(c.hooks.acked) > 0 {
		for i, it := range items {
			status := it.Status
			if status == "" {
				status = StatusCompleted
			}
			c.hooks.onAcked(AckedEvent{Message: it.Message, Status: status,
				Success: results[i].Success, Error: results[i].Error})
		}
	}
	if req.answerLost {
		return results, resentAcksRefused(req, results)
	}
	return results, nil
}

// ackResults reads an ack answer into one result per item, matched by position.
func ackResults(body []byte, req *request, items []AckItem) ([]AckResult, error) {
	trimmed := bytesTrimSpace(body)
	if err := objectForArray(trimmed, req); err != nil {
		return nil, err
	}
	// Matched to items by position, so nothing else is read; most answers have one result.
	var one [1]wire.AckOutcome
	answer, err := readAckOutcomes(trimmed, one[:0])
	if err != nil {
		return nil, notAnArray(req, err)
	}
	results := make([]AckResult, len(items))
	for i, it := range items {
		r := &results[i]
		r.TransactionID = it.Message.TransactionID // the broker echoes it; position decides
		if i >= len(answer) {
			r.Error = "the broker sent no result for this item"
			continue
		}
		a := &answer[i]
		r.Success, r.Error, r.DLQ, r.LeaseReleased = a.Success, deref(a.Error), a.DLQ, a.LeaseReleased
		if !r.Success && r.Error == "" {
			r.Error = "refused" // a 0.15 broker refuses an unknown status without a reason
		}
	}
	return results, nil
}

// decodeArray decodes a 2xx body that should be a JSON array. A 0.15 broker answers a database
// failure with a 200 {"success":false,"error":...} object instead: that is an *APIError.
func decodeArray(body []byte, req *request, out any) error {
	trimmed := bytesTrimSpace(body)
	if err := objectForArray(trimmed, req); err != nil {
		return err
	}
	if err := wire.Unmarshal(trimmed, out); err != nil {
		return notAnArray(req, err)
	}
	return nil
}

// notAnArray is the *APIError for a 2xx answer that could not be read as the array it should be.
func notAnArray(req *request, err error) *APIError {
	return &APIError{StatusCode: http.StatusOK, Method: req.method, Path: req.path,
		Message: "answer is not a JSON array: " + err.Error(), NotJSON: true}
}

// objectForArray is the *APIError for an object answered where an array was expected (a 0.15
// broker's database failure).
func objectForArray(trimmed []byte, req *request) error {
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil
	}
	var e wire.ErrorAnswer
	if wire.Unmarshal(trimmed, &e) != nil || e.Error == "" {
		e.Error = "unexpected object where an array was expected"
	}
	return &APIError{StatusCode: http.StatusOK, Method: req.method, Path: req.path, Message: e.Error}
}

// newAckRequest echoes the identifiers the message was delivered with, never identifiers of
// its own (a 0.15 broker fails a whole merged call on a partitionId it cannot read, and applies
// an ack of a partition the group never popped); the group is left out in queue mode, where a
// 0.15 broker would read an empty one as the group "".
func newAckRequest(m *Message, status Status, errText string) wire.AckRequest {
	if status == "" {
		status = StatusCompleted
	}
	return wire.AckRequest{TransactionID: m.TransactionID, PartitionID: m.PartitionID, LeaseID: m.LeaseID,
		Status: string(status), ConsumerGroup: groupOf(m), Error: errText}
}

// groupOf is the message's consumer group as acks send it: "" in queue mode.
func groupOf(m *Message) string {
	if m.ConsumerGroup == queueModeGroup {
		return ""
	}
	return m.ConsumerGroup
}

// checkAckItem refuses what a broker would reject for the whole request (a 0.15 broker refuses
// every item of a request with one missing its transactionId or partitionId), naming the field.
func checkAckItem(name string, m *Message, status Status) error {
	switch {
	case m == nil:
		return invalidOption(name, "nil", "needs a message")
	case m.TransactionID == "":
		return invalidOption(name+".transactionId", `""`, "the message has no transactionId")
	case m.PartitionID == "":
		return invalidOption(name+".partitionId", `""`, "the message has no partitionId")
	}
	switch status {
	case "", StatusCompleted, StatusFailed, StatusRetry, StatusDLQ:
		return nil
	}
	return invalidOption(name+".status", status, "must be completed, failed, retry or dlq")
}

// errAckRefused is matched by every ack the broker answered with success:false.
var errAckRefused = errors.New("queen: ack refused")

// ackRefusedError is an ack the broker refused; it matches ErrLeaseExpired when the lease was
// the reason: an ack under a lease that is no longer the live one (expired, released, taken
// over) is refused.
type ackRefusedError struct {
	transactionID, reason string
}

func (e *ackRefusedError) Error() string {
	return fmt.Sprintf("queen: ack of %s refused: %s", e.transactionID, e.reason)
}

func (e *ackRefusedError) Is(target error) bool {
	return target == errAckRefused || (target == ErrLeaseExpired && wire.AckRefusalMeaning(e.reason) == wire.MeansLeaseGone)
}
