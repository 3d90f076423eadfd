package queen

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
)

// sendProgress is how far one attempt of a call that is not safe to repeat got, as the
// transport reports it.
type sendProgress struct {
	reports bool        // the transport tells its progress for every request (the standard one does)
	traced  atomic.Bool // the transport reports its progress (it asked for a connection)
	written atomic.Bool // the whole request was written: the broker may have applied it
	hooks   httptrace.ClientTrace
}

// trace returns ctx with hooks that record the attempt's progress.
func (p *sendProgress) trace(ctx context.Context) context.Context {
	p.hooks = httptrace.ClientTrace{
		GetConn: func(string) { p.traced.Store(true) },
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			if info.Err == nil {
				p.written.Store(true)
			}
		},
	}
	return httptrace.WithClientTrace(ctx, &p.hooks)
}

// mayHaveApplied reports whether the attempt that failed with err may have reached the broker,
// and resets the record for the next attempt. An attempt of a transport that reports its
// progress and never asked for a connection was not sent (its ctx was done first); one that
// reports nothing is trusted only for failures to connect.
func (p *sendProgress) mayHaveApplied(err error) bool {
	written, traced := p.written.Swap(false), p.traced.Swap(false)
	if written {
		return true
	}
	if traced || p.reports {
		return false
	}
	var dns *net.DNSError
	var op *net.OpError
	return !errors.As(err, &dns) && !(errors.As(err, &op) && op.Op == "dial")
}

// answeredMaybeApplied reports the answers that do not prove the call was not applied: any
// 5xx. The reference broker applies nothing before a 5xx of its own, but a proxy's 502
// or 504 may follow a request it passed on, and another broker may fail after committing.
// Such calls are still retried; only the way a refused resend is reported changes.
func answeredMaybeApplied(status int) bool { return status >= http.StatusInternalServerError }

// outcomeUnknownError is a call that is not safe to repeat whose first answer was lost: it
// matches ErrOutcomeUnknown and, through err, what the resend got (nil when none was made).
type outcomeUnknownError struct {
	method, path string
	err          error
}

func (e *outcomeUnknownError) Error() string {
	msg := fmt.Sprintf("queen: %s %s: outcome unknown: the answer was lost after the request was sent, so it may have been applied", e.method, e.path)
	if e.err != nil {
		msg += "; then: " + unprefixed(e.err)
	}
	return msg
}

func (e *outcomeUnknownError) Unwrap() []error {
	if e.err == nil {
		return []error{ErrOutcomeUnknown}
	}
	return []error{ErrOutcomeUnknown, e.err}
}

// outcomeUnknown wraps err, the last answer to a call whose first answer was lost.
func outcomeUnknown(r *request, err error) error {
	return &outcomeUnknownError{method: r.method, path: r.path, err: err}
}

// wrapped is an error with a text of its own that matches each of errs.
type wrapped struct {
	msg  string
	errs []error
}

func (e *wrapped) Error() string   { return e.msg }
func (e *wrapped) Unwrap() []error { return e.errs }

// unprefixed is err's text without the "queen: " it starts with, for the text of an error
// that wraps it and says "queen: " once.
func unprefixed(err error) string { return strings.TrimPrefix(err.Error(), "queen: ") }

// resentAcksRefused is the error of an ack request whose first answer was lost: nil when the
// resend applied every item, else ErrOutcomeUnknown naming the refusals, which the first
// request may have caused by applying them.
func resentAcksRefused(r *request, results []AckResult) error {
	refused, reason := 0, ""
	for _, res := range results {
		if !res.Success {
			if refused == 0 {
				reason = res.Error
			}
			refused++
		}
	}
	if refused == 0 {
		return nil
	}
	return outcomeUnknown(r, fmt.Errorf("the resend had %d of %d items refused (first: %s)", refused, len(results), reason))
}
