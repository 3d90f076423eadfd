package queen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/wire"
)

// request is one broker call, before a server is chosen.
type request struct {
	method   string
	path     string // escaped, starting with "/"
	rawQuery string
	body     []byte
	affinity string        // requests with the same key prefer the same healthy server
	poll     time.Duration // > 0: a long poll; its deadline is poll+pollMargin, not the http.Client's Timeout
	route    route.Route   // for Hooks.Request; the zero value: found from the path
	items    int           // messages or ack items carried, for Hooks.Request
	// once marks a call that changes state, whose lost answer must not read as "nothing was
	// applied": send then sets answerLost when an attempt failed after the request may have
	// reached the broker.
	once       bool
	answerLost bool
	oneTry     bool   // the transport does not retry it: the caller does, its own way
	date       string // the answer's Date header, once answered
}

const userAgent = "queen-go/" + Version

// send performs one call with auth, retries and failover. The 2xx body is read into buf; any
// other answer becomes an *APIError. It returns the HTTP status. For a call marked once whose
// answer was lost, a failure wraps ErrOutcomeUnknown, and r.answerLost tells the caller to read
// a 2xx answer's refusals the same way.
func (c *Client) send(ctx context.Context, r *request, buf *bytes.Buffer) (int, error) {
	status, err := c.sendOnce(ctx, r, buf)
	if err != nil && r.answerLost {
		return status, outcomeUnknown(r, err)
	}
	return status, err
}

func (c *Client) sendOnce(ctx context.Context, r *request, buf *bytes.Buffer) (int, error) {
	if c.isClosed() {
		return 0, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return 0, c.transportError(r, err) // never sent: nothing was applied
	}
	rc := c.http
	if r.poll > 0 {
		rc = c.poll
		if bound := c.callBound(r.poll); !endsWithin(ctx, bound) {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, bound)
			defer cancel()
		}
	}
	// The attempt holds its own copy of the call, which the caller reads back once answered:
	// the caller's stays its own, and the call costs one allocation fewer.
	a := &attempt{Context: ctx, c: c, call: *r, current: c.pickServer(r.affinity, nil)}
	caller := r
	defer func() { caller.answerLost, caller.date = a.call.answerLost, a.call.date }()
	r = &a.call
	ctx = a
	if r.once {
		a.sent.reports = c.transportReports()
		ctx = a.sent.trace(ctx)
	}

	var body any
	if r.body != nil {
		body = r.body
	}
	req, err := newTry(ctx, r, a.current, body)
	if err != nil {
		return 0, fmt.Errorf("queen: %s %s: %s", r.method, r.path, c.redact(err.Error()))
	}
	resp, err := rc.Do(req)
	if err != nil {
		if resp != nil {
			discardBody(resp.Body)
		}
		return 0, c.transportError(r, err)
	}
	defer resp.Body.Close()
	a.current.markUp()
	r.date = resp.Header.Get("Date")

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return resp.StatusCode, c.apiError(r, resp.StatusCode, raw)
	}
	if err := c.readAnswer(r, resp, buf, &a.body); err != nil {
		// The broker answered 2xx, so it applied the call; what it said is lost.
		r.answerLost = r.answerLost || r.once
		return resp.StatusCode, err
	}
	return resp.StatusCode, nil
}

// callBound is how long the transport lets a call wait for its answer: a long poll of poll
// its poll and the client's margin, any other call the http.Client's Timeout (0: unbounded).
// A ctx whose deadline is no later spares the transport a deadline of its own.
func (c *Client) callBound(poll time.Duration) time.Duration {
	if poll > 0 {
		return poll + c.pollMargin
	}
	return c.tryBound
}

// newTry is the retry client's request for r on s, carrying body.
func newTry(ctx context.Context, r *request, s *server, body any) (*retryablehttp.Request, error) {
	u, err := s.requestURL(r)
	if err != nil {
		return nil, err
	}
	hr := (&http.Request{Method: r.method, URL: u, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: make(http.Header, 4), Host: u.Host}).WithContext(ctx)
	req, err := retryablehttp.FromRequest(hr)
	if err != nil {
		return nil, err
	}
	return req, req.SetBody(body)
}

// transportReports reports whether the client's requests go through the standard transport,
// which tells an httptrace.ClientTrace when it asks for a connection and when it has written a
// request, for every request.
func (c *Client) transportReports() bool {
	t := c.http.HTTPClient.Transport
	if timed, ok := t.(tryTimeout); ok {
		t = timed.next
	}
	live, ok := t.(liveTransport)
	if !ok {
		return false
	}
	if t = live.hc.Transport; t == nil {
		t = http.DefaultTransport
	}
	_, ok = t.(*http.Transport)
	return ok
}

// apiError turns a non-2xx answer into an *APIError, accepting non-JSON bodies (a 0.15
// broker answers an unknown route with a page or plain text).
func (c *Client) apiError(r *request, status int, raw []byte) *APIError {
	e := &APIError{StatusCode: status, Method: r.method, Path: r.path}
	var body wire.ErrorAnswer
	if wire.Unmarshal(raw, &body) == nil && body.Error != "" {
		e.Message = c.redact(body.Error)
		return e
	}
	e.NotJSON = true
	text := strings.TrimSpace(string(raw))
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	if text == "" {
		text = http.StatusText(status)
	}
	e.Message = c.redact(text)
	return e
}

// transportError keeps a transport failure's type (for errors.Is/As) while making sure its
// text never holds the token.
func (c *Client) transportError(r *request, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		if ue, ok := err.(*url.Error); ok {
			err = ue.Err
		}
		return fmt.Errorf("queen: %s %s: %w", r.method, r.path, err)
	}
	if ue, ok := err.(*url.Error); ok {
		cp := *ue
		cp.URL = c.redact(ue.URL)
		if c.token != "" && strings.Contains(ue.Err.Error(), c.token) {
			cp.Err = &redactedError{msg: c.redact(ue.Err.Error()), err: ue.Err}
		}
		err = &cp
	} else if c.token != "" && strings.Contains(err.Error(), c.token) {
		err = &redactedError{msg: c.redact(err.Error()), err: err}
	}
	return fmt.Errorf("queen: %s %s: %w", r.method, r.path, err)
}

// redact removes the token from a text meant for a log line or an error.
func (c *Client) redact(s string) string {
	if c.token == "" {
		return s
	}
	return strings.ReplaceAll(s, c.token, "[redacted]")
}

// redactedError is an error whose text had the token removed; errors.Is/As still reach the cause.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

var bufferPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func getBuffer() *bytes.Buffer { return bufferPool.Get().(*bytes.Buffer) }

func putBuffer(b *bytes.Buffer) {
	if b.Cap() > 4<<20 {
		return // do not keep huge answers alive
	}
	b.Reset()
	bufferPool.Put(b)
}
