package queen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
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
	// once marks a call that is not safe to repeat; send then sets answerLost when an attempt
	// failed after the request may have reached the broker.
	once       bool
	answerLost bool
	date       string // the answer's Date header, once answered
}

// attempt is the per-call state the retry hooks share, carried in the request context.
type attempt struct {
	c       *Client
	req     *request
	current *server
	failed  bool      // the last try failed in a way that counts against the server
	try     int       // 1-based number of the try in flight (only with a Request hook)
	started time.Time // when it was sent (only with a Request hook)
	sent    sendProgress
}

type attemptKey struct{}

func (c *Client) newRetryClient(hc *http.Client, cfg clientConfig) *retryablehttp.Client {
	rc := &retryablehttp.Client{
		HTTPClient:   hc,
		RetryMax:     cfg.retryMax,
		RetryWaitMin: cfg.minWait,
		RetryWaitMax: cfg.maxWait,
		CheckRetry:   checkRetry,
		Backoff:      retryWait,
		PrepareRetry: prepareRetry,
		// The last answer is returned as is, so a 5xx after the final retry is an *APIError.
		ErrorHandler: retryablehttp.PassthroughErrorHandler,
	}
	if len(cfg.hooks.request) > 0 {
		rc.RequestLogHook = attemptStarted // without Request hooks, attempts are not timed
	}
	return rc
}

// checkRetry retries connection errors, 429 and 5xx; never another 4xx, and never once the
// caller's context (or a long poll's own deadline) is done.
func checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	a, _ := ctx.Value(attemptKey{}).(*attempt)
	if a != nil && len(a.c.hooks.request) > 0 {
		a.ended(resp, err) // retryablehttp asks after every attempt, answered or not
	}
	if a != nil && a.req.once && (err != nil && a.sent.mayHaveApplied(err) || resp != nil && answeredMaybeApplied(resp.StatusCode)) {
		a.req.answerLost = true
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return false, ctxErr
	}
	if err != nil {
		if permanentTransportError(err) {
			return false, err
		}
		if a != nil {
			a.failed = true
			a.c.logger.Debug("queen: request failed, retrying", "method", a.req.method,
				"path", a.req.path, "server", a.current.host, "error", a.c.redact(err.Error()))
		}
		return true, nil
	}
	code := resp.StatusCode
	if code == http.StatusTooManyRequests || code >= 500 {
		if a != nil {
			// A busy broker is still healthy; one that is down or overloaded is not.
			a.failed = code == http.StatusBadGateway || code == http.StatusServiceUnavailable ||
				code == http.StatusGatewayTimeout
			a.c.logger.Debug("queen: broker answered an error, retrying", "method", a.req.method,
				"path", a.req.path, "server", a.current.host, "status", code)
		}
		return true, nil
	}
	return false, nil
}

// permanentTransportError reports transport failures a retry cannot fix.
func permanentTransportError(err error) bool {
	var ue *url.Error
	if errors.As(err, &ue) {
		msg := ue.Err.Error()
		return strings.Contains(msg, "unsupported protocol scheme") ||
			strings.Contains(msg, "certificate")
	}
	return false
}

// prepareRetry moves a retry to another healthy server when the last one failed.
func prepareRetry(req *http.Request) error {
	a, _ := req.Context().Value(attemptKey{}).(*attempt)
	if a == nil || !a.failed || len(a.c.servers) < 2 {
		return nil
	}
	a.failed = false
	a.current.markDown()
	next := a.c.pickServer(a.req.affinity, a.current)
	if next == a.current {
		return nil
	}
	a.c.logger.Warn("queen: failing over", "from", a.current.host, "to", next.host,
		"method", a.req.method, "path", a.req.path)
	u, err := url.Parse(next.url(a.req))
	if err != nil {
		return err
	}
	req.URL, req.Host = u, u.Host
	a.current = next
	return nil
}

// retryWait is the transport's wait before retry number attempt (0-based) of a request: what a
// 429 or 503 answer's Retry-After asks, else the transport's backoff; within [minWait,
// maxWait] either way.
func retryWait(minWait, maxWait time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
			return min(max(time.Duration(s)*time.Second, minWait), maxWait)
		}
	}
	return transportBackoff(minWait, maxWait).wait(attempt + 1)
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
	rc := c.http
	if r.poll > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.poll+c.pollMargin)
		defer cancel()
		rc = c.poll
	}
	a := &attempt{c: c, req: r, current: c.pickServer(r.affinity, nil)}
	ctx = context.WithValue(ctx, attemptKey{}, a)
	if r.once {
		ctx = a.sent.trace(ctx)
	}

	var body any
	if r.body != nil {
		body = r.body
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, r.method, a.current.url(r), body)
	if err != nil {
		return 0, fmt.Errorf("queen: %s %s: %s", r.method, r.path, c.redact(err.Error()))
	}
	// The keys are already canonical: set them directly, with one backing array for the values.
	vals := [...]string{userAgent, "application/json", "application/json", c.auth}
	h := req.Header
	h["User-Agent"], h["Accept"] = vals[0:1:1], vals[1:2:2]
	if r.body != nil {
		h["Content-Type"] = vals[2:3:3]
	}
	if c.auth != "" {
		h["Authorization"] = vals[3:4:4]
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
	if err := c.readAnswer(r, resp, buf); err != nil {
		// The broker answered 2xx, so it applied the call; what it said is lost.
		r.answerLost = r.answerLost || r.once
		return resp.StatusCode, err
	}
	return resp.StatusCode, nil
}

// apiError turns a non-2xx answer into an *APIError, accepting non-JSON bodies (O4).
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
