package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"sync/atomic"
	"syscall"
	"time"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
)

// remote is the broker as a command sees it: a client, its Admin, and the bound every request
// gets from --timeout.
type remote struct {
	app    *app
	client *queen.Client
	adm    *admin.Admin
	server string
	// confirmed: the server answered its health route as a Queen broker does.
	confirmed bool
	// lost: since the change in progress began, an attempt of it may have reached the broker
	// and got no answer (or a 5xx, which may follow a change applied).
	lost atomic.Bool
}

// connect builds the client for the broker that --server, QUEEN_URL or the context names.
func (a *app) connect() (*remote, error) {
	server, token, err := a.target()
	if err != nil {
		return nil, err
	}
	r := &remote{app: a, server: server}
	// A client of its own, without a per-attempt timeout: each call is bounded by --timeout.
	transport := http.DefaultTransport
	if t, ok := transport.(*http.Transport); ok {
		transport = t.Clone()
	}
	hc := &http.Client{Transport: transport}
	opts := []queen.Option{
		queen.WithLogger(slog.New(slog.DiscardHandler)),                // errors are reported once, by run
		queen.WithRetry(1, 100*time.Millisecond, 500*time.Millisecond), // a person is waiting: fail fast
		queen.WithHTTPClient(hc),
		queen.WithHooks(queen.Hooks{Request: r.attempted}),
	}
	if token != "" {
		opts = append(opts, queen.WithToken(token))
	}
	client, err := queen.New(server, opts...)
	if err != nil {
		return nil, usageError{msg: fmt.Sprintf("invalid server %q: %v", server, err)}
	}
	a.closers = append(a.closers, func() {
		_ = client.Close()
		hc.CloseIdleConnections()
	})
	r.client, r.adm = client, admin.New(client)
	return r, nil
}

// attempted hears of every HTTP attempt: one of a change that may have reached the broker and
// got no answer, or got a 5xx, makes what a resend is told say nothing about the change.
func (r *remote) attempted(e queen.RequestEvent) {
	if e.Method != http.MethodGet && (e.Err != nil && !neverSent(e.Err) || e.Status >= 500) {
		r.lost.Store(true)
	}
}

// neverSent reports a failure to reach the broker at all: no request left.
func neverSent(err error) bool {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	return errors.As(err, &dnsErr) || errors.As(err, &opErr) && opErr.Op == "dial"
}

// errNoAnswer is the cause of a request that --timeout ended.
var errNoAnswer = errors.New("no answer")

// noAnswerError is a request that got no answer within --timeout.
type noAnswerError struct {
	server  string
	timeout time.Duration
	err     error
}

func (e *noAnswerError) Error() string {
	return fmt.Sprintf("%s gave no answer within %s (--timeout): %v", e.server, e.timeout, e.err)
}

func (e *noAnswerError) Unwrap() []error { return []error{errNoAnswer, e.err} }

// ask runs one call to the broker bounded by --timeout (retries included), and reports a call
// that the bound ended as one that got no answer.
func ask[T any](r *remote, call func(context.Context) (T, error)) (T, error) {
	timeout := r.app.global.timeout
	if timeout == 0 {
		return call(r.app.ctx)
	}
	ctx, cancel := context.WithTimeoutCause(r.app.ctx, timeout, errNoAnswer)
	defer cancel()
	v, err := call(ctx)
	if err != nil && errors.Is(context.Cause(ctx), errNoAnswer) && r.app.ctx.Err() == nil {
		err = &noAnswerError{server: r.server, timeout: timeout, err: err}
	}
	return v, err
}

// confirmBroker is asked when a list came back empty. A Queen broker also answers "nothing"
// with an empty body, so the body alone cannot tell an empty broker from a server that is no
// broker at all (a proxy's or a web server's 200); a broker's health route says which.
func (r *remote) confirmBroker(what string) error {
	if r.confirmed {
		return nil
	}
	h, err := ask(r, r.adm.Health)
	switch {
	case err == nil && h.Status != "":
		r.confirmed = true
		return nil
	case err != nil && isUnreachable(err):
		return err
	case err != nil:
		return fmt.Errorf("%s: %s answered with no %s, and its health route with no Queen broker's answer: is it a Queen broker? (%v)",
			what, r.server, what, err)
	}
	return fmt.Errorf("%s: %s answered with no %s, and its health route without a status: is it a Queen broker?", what, r.server, what)
}

// notQueen adds a hint to a read whose route the server does not have at all: every Queen
// broker serves the introspection routes, so the server is likely something else.
func (r *remote) notQueen(err error) error {
	var apiErr *queen.APIError
	if errors.Is(err, admin.ErrUnsupported) && errors.As(err, &apiErr) && apiErr.StatusCode == 404 && apiErr.NotJSON {
		return fmt.Errorf("%w (is QUEEN_URL a Queen broker? %s answered 404 to %s)", err, r.server, apiErr.Path)
	}
	return err
}

// isUnreachable reports an error that means no broker answered at all: refused, unresolvable,
// timed out, or dropped before any HTTP answer.
func isUnreachable(err error) bool {
	if errors.Is(err, errNoAnswer) {
		return true
	}
	if errors.As(err, new(*queen.APIError)) {
		return false
	}
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var netErr net.Error
	return errors.As(err, &dnsErr) || errors.As(err, &opErr) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.As(err, &netErr) && netErr.Timeout() || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// mayHaveApplied is a change whose answer was lost: the broker may have applied it or not.
// Its text never repeats what a resend was told (a delete resent after it was applied finds
// nothing, which says nothing about the first request).
type mayHaveApplied struct {
	what string // "queue delete \"orders\""
	err  error
}

func (e *mayHaveApplied) Error() string {
	return e.what + ": may have been applied: the broker's answer was lost, so whether it was is unknown (look before repeating it)"
}

func (e *mayHaveApplied) Unwrap() error { return e.err }

// modify runs one call that changes the broker, named what ("queue delete \"orders\""),
// bounded as ask bounds it. A failure after a lost answer is reported as a change that may
// have been applied, whatever a resend was told: a delete resent after the first one was
// applied finds nothing, and a broker that answers it 200 "deleted nothing" (0.15) does not
// know that the first one was its own.
func modify[T any](r *remote, what string, call func(context.Context) (T, error)) (T, error) {
	r.lost.Store(false)
	v, err := ask(r, call)
	if err != nil {
		return v, r.changeFailed(what, err)
	}
	return v, nil
}

// changeFailed describes the failure of a change named what, begun when r.lost was last reset.
func (r *remote) changeFailed(what string, err error) error {
	if errors.Is(err, queen.ErrOutcomeUnknown) || r.lost.Load() && errors.Is(err, admin.ErrNotFound) {
		return &mayHaveApplied{what: what, err: err}
	}
	return fmt.Errorf("%s: %w", what, err)
}

// modifyDo is modify for a call that returns only an error.
func (r *remote) modifyDo(what string, call func(context.Context) error) error {
	_, err := modify(r, what, func(ctx context.Context) (struct{}, error) { return struct{}{}, call(ctx) })
	return err
}

// isMayHaveApplied reports a change whose answer was lost.
func isMayHaveApplied(err error) bool {
	return errors.As(err, new(*mayHaveApplied)) || errors.Is(err, queen.ErrOutcomeUnknown)
}

// clientVersion is the version of the queen-go module queenctl was built from.
func clientVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok || info.Main.Version == "" {
		return "(devel)"
	}
	return info.Main.Version
}
