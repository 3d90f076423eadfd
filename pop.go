package queen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/wire"
)

// queueModeGroup is the broker's name for the shared group of pops that name none (R23).
const queueModeGroup = "__QUEUE_MODE__"

// defaultPollTimeout is the long-poll length when Timeout is not set (R25).
const defaultPollTimeout = 30 * time.Second

// Pop sends one pop request and returns the leased messages: an empty slice and a nil error
// when there is nothing to deliver. Settings are validated first. Without Wait(true) it
// answers at once; with it, it waits up to Timeout (default 30s) for a message. Each message
// must then be settled (m.Ack, m.Nack, ...) before its lease expires, unless AutoAck(true).
func (b QueueBuilder) Pop(ctx context.Context) ([]*Message, error) {
	if err := b.validate(forPop); err != nil {
		return nil, err
	}
	return b.client.doPop(ctx, b, b.popPath(), b.popQuery(forPop))
}

// popPath is the escaped route of the builder's pop: partition, queue, or discovery (R20–R22).
func (b QueueBuilder) popPath() string {
	switch r := b.popRoute(); r {
	case route.PopPartition:
		return r.Path(b.queue, b.partition)
	case route.PopQueue:
		return r.Path(b.queue)
	default:
		return r.Path()
	}
}

// popQuery holds every pop parameter with the terminal's defaults. Booleans are sent as
// true/false and consumerGroup only for a named group (O13); a named group always states its
// start (O14); timeout never exceeds 60000 ms (O11, enforced by validate).
func (b QueueBuilder) popQuery(t terminal) url.Values {
	q := url.Values{}
	if b.discovery() {
		if b.namespace != "" {
			q.Set("namespace", b.namespace)
		}
		if b.task != "" {
			q.Set("task", b.task)
		}
	}
	if b.group != "" && b.group != queueModeGroup {
		q.Set("consumerGroup", b.group)
		switch {
		case b.fromSet:
			// The caller's offset is kept; its "+" is sent as %2B (O15).
			q.Set("subscriptionFrom", b.from.Format(time.RFC3339Nano))
		case b.modeSet:
			q.Set("subscriptionMode", string(b.mode))
		default:
			q.Set("subscriptionMode", string(SubscribeNew))
		}
	}

	wait := t == forConsume
	if b.wait != nil {
		wait = *b.wait
	}
	if wait {
		q.Set("wait", "true")
		// A 0.15 broker does not cap the timeout and drops answers pending ~120s (O11).
		timeout := min(max(b.pollTimeout(), 0), maxPollTimeout)
		q.Set("timeout", strconv.FormatInt(timeout.Milliseconds(), 10))
	} else if b.wait != nil {
		q.Set("wait", "false")
	}

	autopilot := t == forConsume
	if b.autopilot != nil {
		autopilot = *b.autopilot
	}
	if autopilot {
		q.Set("autopilot", "true") // batch and partitions then only as set (R137)
	}
	if b.batchSet {
		q.Set("batch", strconv.Itoa(b.batch))
	} else if t == forPop && !autopilot {
		q.Set("batch", "1") // 0.15 and 2.0 agree on 1, but say it (O9)
	}
	if b.partsSet {
		q.Set("partitions", strconv.Itoa(b.partitions))
	}
	if b.leaseSet {
		secs := (b.leaseTime + time.Second - 1) / time.Second
		q.Set("leaseSeconds", strconv.FormatInt(int64(secs), 10))
	}
	if b.conflation {
		q.Set("conflation", "true")
	}
	// Consume's AutoAck is applied by the client; only a Pop asks the broker for it.
	if t == forPop && b.autoAck != nil && *b.autoAck {
		q.Set("autoAck", "true")
	}
	return q
}

// pollTimeout is the long-poll length the builder asks for.
func (b QueueBuilder) pollTimeout() time.Duration {
	if b.timeoutSet {
		return b.timeout
	}
	return defaultPollTimeout
}

// doPop sends one pop and decodes its answer. A long poll's deadline is its timeout plus a
// margin, never the http.Client's Timeout. Nothing to deliver is an empty slice and nil error.
func (c *Client) doPop(ctx context.Context, b QueueBuilder, path string, q url.Values) ([]*Message, error) {
	msgs, _, err := c.doPopAnswer(ctx, b, path, q)
	return msgs, err
}

// popAnswer is what a consume loop reads from a pop's answer besides its messages.
type popAnswer struct {
	date    time.Time // the answer's Date header; zero when absent or unreadable
	bodied  bool      // an empty answer came with a body (a 0.15 broker's), not as a 204
	elapsed time.Duration
}

// doPopAnswer is doPop, also returning what the answer says about the broker.
func (c *Client) doPopAnswer(ctx context.Context, b QueueBuilder, path string, q url.Values) ([]*Message, popAnswer, error) {
	var info popAnswer
	sent := time.Now()
	req := request{method: http.MethodGet, path: path, rawQuery: q.Encode(),
		affinity: affinityKey(b.queue, b.partition, b.group), route: b.popRoute()}
	if q.Get("wait") == "true" {
		req.poll = defaultPollTimeout
		if ms, err := strconv.ParseInt(q.Get("timeout"), 10, 64); err == nil && ms >= 0 {
			req.poll = time.Duration(ms) * time.Millisecond
		}
		if req.poll == 0 {
			req.poll = time.Millisecond // timeout=0 answers at once; still skip hc.Timeout
		}
	}
	buf := getBuffer()
	defer putBuffer(buf)
	status, err := c.send(ctx, &req, buf)
	info.elapsed = time.Since(sent)
	if err != nil {
		var apiErr *APIError
		if path == route.PopDiscovery.Pattern && errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusNotFound && apiErr.NotJSON {
			// A 0.15 broker has no discovery pop (O10).
			return nil, info, fmt.Errorf("queen: discovery pop (namespace/task) not supported by this broker: %w: %w",
				errors.ErrUnsupported, err)
		}
		return nil, info, err
	}
	info.date, _ = http.ParseTime(req.date)
	if status == http.StatusNoContent || len(bytesTrimSpace(buf.Bytes())) == 0 {
		return []*Message{}, info, nil
	}
	msgs, err := decodePop(buf.Bytes(), req.path, req.affinity)
	if err != nil {
		return nil, info, err
	}
	info.bodied = len(msgs) == 0
	for _, m := range msgs {
		m.client = c
	}
	return msgs, info, nil
}

// decodePop reads a 2xx pop body: messages, an empty variant, or a 0.15 error answered as 200
// (O2, O3).
func decodePop(body []byte, path, route string) ([]*Message, error) {
	var a wire.PopAnswer
	if err := wire.Unmarshal(body, &a); err != nil {
		return nil, &APIError{StatusCode: http.StatusOK, Method: http.MethodGet, Path: path,
			Message: "pop answer is not a JSON object: " + err.Error(), NotJSON: true}
	}
	if a.Success != nil && !*a.Success && a.Error != nil && !wire.EmptyPopErrors[*a.Error] {
		return nil, &APIError{StatusCode: http.StatusOK, Method: http.MethodGet, Path: path, Message: *a.Error}
	}
	if a.Messages == nil {
		msg := "pop answer has no messages"
		if a.Error != nil {
			msg = *a.Error
		}
		return nil, &APIError{StatusCode: http.StatusOK, Method: http.MethodGet, Path: path, Message: msg}
	}
	msgs := make([]*Message, len(a.Messages))
	backing := make([]Message, len(a.Messages)) // one allocation for the whole batch
	partitionID, leaseID := deref(a.PartitionID), deref(a.LeaseID)
	for i := range a.Messages {
		w, m := &a.Messages[i], &backing[i]
		m.ID, m.TransactionID, m.TraceID = w.ID, w.TransactionID, deref(w.TraceID)
		// A message carries its own queue, partition, lease and group, or leaves them to the answer.
		m.Queue = firstNonEmpty(w.Queue, a.Queue)
		m.Partition = firstNonEmpty(w.Partition, a.Partition)
		m.PartitionID = firstNonEmpty(w.PartitionID, partitionID)
		m.LeaseID = firstNonEmpty(w.LeaseID, leaseID)
		m.ConsumerGroup = firstNonEmpty(w.ConsumerGroup, a.ConsumerGroup)
		m.Offset, m.DeliveryAttempt = -1, 0 // unknown on 0.15 (O5)
		if w.Offset != nil {
			m.Offset = *w.Offset
		}
		if w.DeliveryAttempt != nil {
			m.DeliveryAttempt = *w.DeliveryAttempt
		}
		// An unreadable time must not lose a leased batch: it is left zero.
		m.CreatedAt, _ = time.Parse(time.RFC3339Nano, w.CreatedAt)
		m.Data = json.RawMessage(w.Data)
		m.route = route
		msgs[i] = m
	}
	return msgs, nil
}

// deref is *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func bytesTrimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\n' || b[0] == '\r' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}
