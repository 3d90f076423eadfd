package queen

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/queenmq/queen-go/internal/route"
)

// queueModeGroup is the broker's name for the shared group of pops that name none.
const queueModeGroup = "__QUEUE_MODE__"

// defaultPollTimeout is the long-poll length when Timeout is not set, as on the broker.
const defaultPollTimeout = 30 * time.Second

// Pop sends one pop request and returns the leased messages: an empty slice and a nil error
// when there is nothing to deliver. Settings are validated first. Without Wait(true) it
// answers at once; with it, it waits up to Timeout (default 30s) for a message. Each message
// must then be settled (m.Ack, m.Nack, ...) before its lease expires, unless AutoAck(true).
//
// A named group in mode new keeps its start across the Pop and Consume calls of one client,
// as a Consume loop does, on a 0.15 broker too: it receives every message pushed after its
// first pop was sent. Its first Pop with Wait(true) on a client that has not yet seen the
// broker store starts at once sends one pop without wait first.
func (b QueueBuilder) Pop(ctx context.Context) ([]*Message, error) {
	if err := b.validate(forPop); err != nil {
		return nil, err
	}
	start := b.client.starts.of(b)
	p := b.popParams(forPop)
	start.apply(&p)
	if start.probes() && p.longPoll {
		first := p
		first.longPoll, first.noWait = false, true
		msgs, answer, err := b.client.doPopAnswer(ctx, &b, b.popPath(), first)
		if err != nil {
			return nil, err
		}
		start.observe(msgs, answer)
		if len(msgs) > 0 {
			return msgs, nil
		}
		start.apply(&p)
	}
	msgs, answer, err := b.client.doPopAnswer(ctx, &b, b.popPath(), p)
	if err == nil {
		start.observe(msgs, answer)
	}
	return msgs, err
}

// popPath is the escaped route of the builder's pop: one partition, the queue, or a discovery
// pop over the queues with the builder's labels.
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

// popParams are one pop's parameters, typed, from the builder (and the consume loop, for its
// own pops) to encode, which writes them into the query once.
type popParams struct {
	namespace, task string           // a discovery pop's labels
	group           string           // a named consumer group; "" for the queue-mode group
	from            time.Time        // a named group's start, when set; else mode
	mode            SubscriptionMode // a named group's start when from is zero
	longPoll        bool             // wait for a message up to timeout
	noWait          bool             // say wait=false, as the builder asked
	timeout         time.Duration    // a long poll's length, whole milliseconds
	autopilot       bool             // the broker chooses batch and partitions unless they are set
	batch           int              // 0: unsent
	partitions      int              // 0: unsent
	leaseSeconds    int64            // 0: unsent
	conflation      bool
	autoAck         bool
}

// popParams are the builder's pop parameters with the terminal's defaults. A named group
// always states where it starts (new, unless set), because a 0.15 broker's default start is
// "all". A consume loop sizes each of its pops itself (nextPop); a Pop without autopilot asks
// for one message, which both broker generations default to, but says so.
func (b QueueBuilder) popParams(t terminal) popParams {
	var p popParams
	if b.discovery() {
		p.namespace, p.task = b.namespace, b.task
	}
	if b.group != "" && b.group != queueModeGroup {
		p.group = b.group
		switch {
		case b.fromSet:
			p.from = b.from // the caller's offset is kept
		case b.modeSet:
			p.mode = b.mode
		default:
			p.mode = SubscribeNew
		}
	}

	wait := t == forConsume
	if b.wait != nil {
		wait = *b.wait
	}
	p.longPoll, p.noWait = wait, !wait && b.wait != nil
	if wait {
		// Never above the longest poll: a 0.15 broker does not cap it and drops answers
		// pending about two minutes.
		p.timeout = min(max(b.pollTimeout(), 0), maxPollTimeout).Truncate(time.Millisecond)
	}

	p.autopilot = t == forConsume
	if b.autopilot != nil {
		p.autopilot = *b.autopilot
	}
	switch {
	case t == forConsume:
	case b.batchSet:
		p.batch = b.batch
	case !p.autopilot:
		p.batch = 1
	}
	if b.partsSet {
		p.partitions = b.partitions
	}
	if b.leaseSet {
		p.leaseSeconds = int64((b.leaseTime + time.Second - 1) / time.Second)
	}
	p.conflation = b.conflation
	// Consume's AutoAck is applied by the client; only a Pop asks the broker for it.
	p.autoAck = t == forPop && b.autoAck != nil && *b.autoAck
	return p
}

// encode writes the query of a pop with these parameters, its keys in sorted order as
// url.Values.Encode writes them. Booleans are sent as true or false, never as another spelling
// a 0.15 broker would read as false; a start time keeps its offset, its "+" escaped.
func (p popParams) encode() string {
	var q queryWriter
	q.b.Grow(96)
	if p.autoAck {
		q.add("autoAck", "true")
	}
	if p.autopilot {
		q.add("autopilot", "true")
	}
	if p.batch > 0 {
		q.addInt("batch", int64(p.batch))
	}
	if p.conflation {
		q.add("conflation", "true")
	}
	if p.group != "" {
		q.add("consumerGroup", p.group)
	}
	if p.leaseSeconds > 0 {
		q.addInt("leaseSeconds", p.leaseSeconds)
	}
	if p.namespace != "" {
		q.add("namespace", p.namespace)
	}
	if p.partitions > 0 {
		q.addInt("partitions", int64(p.partitions))
	}
	if p.group != "" {
		if !p.from.IsZero() {
			q.add("subscriptionFrom", p.from.Format(time.RFC3339Nano))
		} else if p.mode != "" {
			q.add("subscriptionMode", string(p.mode))
		}
	}
	if p.task != "" {
		q.add("task", p.task)
	}
	switch {
	case p.longPoll:
		q.addInt("timeout", p.timeout.Milliseconds())
		q.add("wait", "true")
	case p.noWait:
		q.add("wait", "false")
	}
	return q.b.String()
}

// queryWriter writes a query string one key=value pair at a time, the value escaped.
type queryWriter struct{ b strings.Builder }

func (q *queryWriter) sep(key string) {
	if q.b.Len() > 0 {
		q.b.WriteByte('&')
	}
	q.b.WriteString(key)
	q.b.WriteByte('=')
}

func (q *queryWriter) add(key, value string) {
	q.sep(key)
	q.b.WriteString(url.QueryEscape(value))
}

func (q *queryWriter) addInt(key string, n int64) {
	q.sep(key)
	var digits [20]byte
	q.b.Write(strconv.AppendInt(digits[:0], n, 10))
}

// pollDeadline is how long the pop may wait for its answer, beyond the client's margin: the
// long poll's timeout, or 0 for a pop that answers at once.
func (p popParams) pollDeadline() time.Duration {
	if !p.longPoll {
		return 0
	}
	return max(p.timeout, time.Millisecond) // timeout=0 answers at once; still skip hc.Timeout
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
func (c *Client) doPop(ctx context.Context, b QueueBuilder, path string, p popParams) ([]*Message, error) {
	msgs, _, err := c.doPopAnswer(ctx, &b, path, p)
	return msgs, err
}

// popAnswer is what a consume loop reads from a pop's answer besides its messages.
type popAnswer struct {
	dateText string // the answer's Date header as sent, read only when needed (date)
	bodied   bool   // an empty answer came with a body (a 0.15 broker's), not as a 204
	elapsed  time.Duration
}

// date is the answer's Date header; zero when absent or unreadable. Few answers need it, so it
// is read on demand rather than on every pop.
func (a popAnswer) date() time.Time { return parseDate(a.dateText) }

// parseDate reads a Date header; zero when absent or unreadable.
func parseDate(text string) time.Time {
	if text == "" {
		return time.Time{}
	}
	t, _ := http.ParseTime(text)
	return t
}

// doPopAnswer is doPop, also returning what the answer says about the broker.
func (c *Client) doPopAnswer(ctx context.Context, b *QueueBuilder, path string, p popParams) ([]*Message, popAnswer, error) {
	var info popAnswer
	sent := time.Now()
	req := request{method: http.MethodGet, path: path, rawQuery: p.encode(), poll: p.pollDeadline(),
		affinity: affinityKey(b.queue, b.partition, b.group), route: b.popRoute()}
	buf := getBuffer()
	defer putBuffer(buf)
	status, err := c.send(ctx, &req, buf)
	info.elapsed = time.Since(sent)
	if err != nil {
		var apiErr *APIError
		if path == route.PopDiscovery.Pattern && errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusNotFound && apiErr.NotJSON {
			// A 0.15 broker has no discovery pop: it answers 404 with a page, not JSON.
			return nil, info, fmt.Errorf("queen: discovery pop (namespace/task) not supported by this broker: %w: %w",
				errors.ErrUnsupported, err)
		}
		return nil, info, err
	}
	info.dateText = req.date
	if status == http.StatusNoContent || len(bytesTrimSpace(buf.Bytes())) == 0 {
		return []*Message{}, info, nil
	}
	msgs, err := decodePopBuffer(buf, req.path, req.affinity)
	if err != nil {
		return nil, info, err
	}
	info.bodied = len(msgs) == 0
	for _, m := range msgs {
		m.client = c
	}
	c.starts.saw(msgs)
	return msgs, info, nil
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
