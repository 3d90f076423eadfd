package queen

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/queenmq/queen-go/internal/route"
)

// The tries of one request. The retry client (go-retryablehttp) sends a request again after a
// connection error, a 429 or a 5xx, waiting the transport's backoff between tries; around each
// try the client keeps its own books in the call's attempt: the Request hooks hear of every
// try, a call that is not safe to repeat learns when its answer may have been lost, and a
// retry after a failing server goes to another one.

// attempt is one call's tries, carried in the request's context for the retry client's hooks:
// it is that context, the call's own with the attempt as the value of attemptKey, so that
// carrying it costs no context of its own.
type attempt struct {
	context.Context // the call's
	c               *Client
	call            request // the caller's, copied: the caller reads its outcome back
	current         *server
	body            io.LimitedReader // the answer's body, read up to the client's limit
	headers         [4]string        // the values of the headers every try carries
	failed          bool             // the last try failed in a way that counts against the server
	try             int              // 1-based number of the try in flight (only with a Request hook)
	started         time.Time        // when it was sent (only with a Request hook)
	sent            sendProgress
}

type attemptKey struct{}

// Value is the attempt itself for attemptKey, else the call's ctx's value.
func (a *attempt) Value(key any) any {
	if _, ok := key.(attemptKey); ok {
		return a
	}
	return a.Context.Value(key)
}

// attemptOf is the attempt ctx carries, or nil.
func attemptOf(ctx context.Context) *attempt {
	a, _ := ctx.Value(attemptKey{}).(*attempt)
	return a
}

// newRetryClient sends through hc, the client's own copy of the http.Client it was given.
func (c *Client) newRetryClient(hc *http.Client, cfg clientConfig) *retryablehttp.Client {
	if hc.Timeout > 0 {
		// http.Client bounds a request with a timer and a goroutine of its own; a deadline on
		// each try's context bounds it the same way, for less.
		hc.Transport, hc.Timeout = tryTimeout{next: hc.Transport, timeout: hc.Timeout}, 0
	}
	rc := &retryablehttp.Client{
		HTTPClient:   hc,
		RetryMax:     cfg.retryMax,
		RetryWaitMin: cfg.minWait,
		RetryWaitMax: cfg.maxWait,
		CheckRetry:   afterTry,
		Backoff:      retryWait,
		PrepareRetry: prepareRetry,
		// The last answer is returned as is, so a 5xx after the final retry is an *APIError.
		ErrorHandler: retryablehttp.PassthroughErrorHandler,
	}
	if len(cfg.hooks.request) > 0 {
		rc.RequestLogHook = tryStarted // without Request hooks, tries are not timed
	}
	return rc
}

// tryStarted is the retry client's RequestLogHook: it numbers and times each try.
func tryStarted(_ retryablehttp.Logger, req *http.Request, retry int) {
	if a := attemptOf(req.Context()); a != nil {
		a.try, a.started = retry+1, time.Now()
	}
}

// afterTry is the retry client's CheckRetry, which it asks after every try, answered or not:
// checkRetry decides, and the attempt records the try.
func afterTry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	retry, stop := checkRetry(ctx, resp, err)
	if a := attemptOf(ctx); a != nil {
		retry = retry && !a.call.oneTry
		a.ended(resp, err, retry)
	}
	return retry, stop
}

// checkRetry decides whether a try is worth repeating: after a connection error that a retry
// may fix, a 429 or a 5xx; never after another answer, and never once the caller's context (or
// a long poll's own deadline) is done.
func checkRetry(ctx context.Context, resp *http.Response, err error) (retry bool, stop error) {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return false, ctxErr
	}
	if err != nil {
		if permanentTransportError(err) {
			return false, err
		}
		return true, nil
	}
	return resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500, nil
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

// ended records one try that got resp or err: the Request hooks hear of it; a call that is not
// safe to repeat learns whether its answer may have been lost; and a try that is to be
// repeated says whether its server failed, for the failover, and is logged.
func (a *attempt) ended(resp *http.Response, err error, retry bool) {
	if len(a.c.hooks.request) > 0 {
		a.report(resp, err)
	}
	if a.call.once && (err != nil && a.sent.mayHaveApplied(err) || resp != nil && answeredMaybeApplied(resp.StatusCode)) {
		a.call.answerLost = true
	}
	if !retry {
		return
	}
	if err != nil {
		a.failed = true
		a.c.logger.Debug("queen: request failed, retrying", "method", a.call.method,
			"path", a.call.path, "server", a.current.host, "error", a.c.redact(err.Error()))
		return
	}
	code := resp.StatusCode
	// A busy broker is still healthy; one that is down or overloaded is not.
	a.failed = code == http.StatusBadGateway || code == http.StatusServiceUnavailable ||
		code == http.StatusGatewayTimeout
	a.c.logger.Debug("queen: broker answered an error, retrying", "method", a.call.method,
		"path", a.call.path, "server", a.current.host, "status", code)
}

// report tells the Request hooks of the try that got resp or err.
func (a *attempt) report(resp *http.Response, err error) {
	r := a.call.route
	if r.Pattern == "" {
		r, _ = route.Match(a.call.method, a.call.path)
	}
	e := RequestEvent{Method: a.call.method, Route: r.Pattern, Operation: string(r.Op), Server: a.current.base,
		Attempt: a.try, Duration: time.Since(a.started), Items: a.call.items}
	if err != nil {
		e.Err = a.c.transportError(&a.call, err)
	} else {
		e.Status = resp.StatusCode
	}
	a.c.hooks.onRequest(e)
}

// prepareRetry moves a retry to another healthy server when the last one failed.
func prepareRetry(req *http.Request) error {
	a := attemptOf(req.Context())
	if a == nil || !a.failed || len(a.c.servers) < 2 {
		return nil
	}
	a.failed = false
	a.current.markDown()
	next := a.c.pickServer(a.call.affinity, a.current)
	if next == a.current {
		return nil
	}
	a.c.logger.Warn("queen: failing over", "from", a.current.host, "to", next.host,
		"method", a.call.method, "path", a.call.path)
	u, err := next.requestURL(&a.call)
	if err != nil {
		return err
	}
	req.URL, req.Host = u, u.Host
	a.current = next
	return nil
}

// retryWait is the transport's wait before retry number n (0-based) of a request: what a 429
// or 503 answer's Retry-After asks, else the transport's backoff; within [minWait, maxWait]
// either way.
func retryWait(minWait, maxWait time.Duration, n int, resp *http.Response) time.Duration {
	if resp != nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
			return min(max(time.Duration(s)*time.Second, minWait), maxWait)
		}
	}
	return transportBackoff(minWait, maxWait).wait(n + 1)
}

// tryTimeout ends each try sent through next once timeout has passed, reading the answer's
// body included, as http.Client's Timeout does.
type tryTimeout struct {
	next    http.RoundTripper
	timeout time.Duration
}

func (t tryTimeout) RoundTrip(r *http.Request) (*http.Response, error) {
	if endsWithin(r.Context(), t.timeout) {
		// The call's own deadline ends the try first (an ack's, a renewal's): a timer of the
		// try's own would never fire.
		return t.next.RoundTrip(r)
	}
	ctx, cancel := context.WithTimeout(r.Context(), t.timeout)
	resp, err := t.next.RoundTrip(r.WithContext(ctx))
	if err != nil {
		cancel()
		return resp, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// endsWithin reports whether ctx ends within d from now anyway, so that a deadline of d of its
// own would never be the first to fire.
func endsWithin(ctx context.Context, d time.Duration) bool {
	deadline, ok := ctx.Deadline()
	return ok && !deadline.After(time.Now().Add(d))
}

// cancelOnClose is an answer's body whose try ends when it is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
