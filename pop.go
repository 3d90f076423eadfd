package queen

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
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
	switch {
	case b.discovery():
		return "/api/v1/pop"
	case b.partition != "":
		return "/api/v1/pop/queue/" + url.PathEscape(b.queue) + "/partition/" + url.PathEscape(b.partition)
	default:
		return "/api/v1/pop/queue/" + url.PathEscape(b.queue)
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

// emptyPopErrors are the 0.15 "nothing to deliver" answers (O2).
var emptyPopErrors = map[string]bool{
	"no_available_partition": true,
	"lease_held":             true,
	"partition_not_found":    true,
}

// doPop sends one pop and decodes its answer. A long poll's deadline is its timeout plus a
// margin, never the http.Client's Timeout. Nothing to deliver is an empty slice and nil error.
func (c *Client) doPop(ctx context.Context, b QueueBuilder, path string, q url.Values) ([]*Message, error) {
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
	if err != nil {
		var apiErr *APIError
		if path == "/api/v1/pop" && errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusNotFound && apiErr.NotJSON {
			// A 0.15 broker has no discovery pop (O10).
			return nil, fmt.Errorf("queen: discovery pop (namespace/task) not supported by this broker: %w: %w",
				errors.ErrUnsupported, err)
		}
		return nil, err
	}
	if status == http.StatusNoContent || len(bytesTrimSpace(buf.Bytes())) == 0 {
		return []*Message{}, nil
	}
	msgs, err := decodePop(buf.Bytes(), req.path, req.affinity)
	if err != nil {
		return nil, err
	}
	for _, m := range msgs {
		m.client = c
	}
	return msgs, nil
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
