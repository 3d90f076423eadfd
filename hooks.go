package queen

import (
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"
)

// Hooks are callbacks the SDK calls as it works, for metrics, tracing and logs. Every field
// may be nil. Set them with WithHooks; several WithHooks compose, called in the order given.
//
// Hooks run synchronously on the SDK's own goroutines (a transport attempt's, a handler
// goroutine's, the lease renewer's), so they must be quick and must not block. A hook that
// panics is recovered and logged at error level with its stack; the SDK carries on as if it
// had returned. Hooks must not change the values they are given.
type Hooks struct {
	// Request is called once per HTTP attempt, when it was answered (whatever the status) or
	// failed, including each retry.
	Request func(RequestEvent)
	// Handled is called for every message a consume loop handed to a handler, once its
	// outcome is known (for a BatchHandler, once per message of the batch).
	Handled func(HandledEvent)
	// Acked is called for every ack item the broker answered, accepted or refused: the acks
	// a consume loop sends, Client.Ack and the Message methods, AckBatch, and the acks of a
	// transaction (a rolled-back transaction reports its acks as not accepted).
	Acked func(AckedEvent)
	// LeaseLost is called when a renewal of a lease a consume loop held was refused: the
	// broker has taken the messages back, and the loop sends no ack for them.
	LeaseLost func(LeaseLostEvent)
}

// RequestEvent is one HTTP attempt.
type RequestEvent struct {
	Method string
	// Route is the route pattern, such as "/api/v1/pop/queue/{queue}", never a concrete path:
	// names of queues, partitions, groups and leases are placeholders. A path sent through
	// Client.Do that matches no known route is reported as "/api/v1/{unknown}".
	Route string
	// Operation is what the request does: "pop", "ack" (both ack routes), "push", "renew",
	// "transaction", or "admin" for every other route (Ping, the admin package, Client.Do).
	Operation string
	// Server is the base URL of the broker the attempt went to.
	Server string
	// Status is the HTTP status answered, 0 when the attempt got no answer.
	Status int
	// Attempt counts the tries of one call: 1 for the first, 2 for the first retry, ...
	Attempt int
	// Duration runs from sending the request to receiving the answer's headers (or failing).
	Duration time.Duration
	// Err is why the attempt got no answer (a connection error, a timeout, a cancelled ctx);
	// nil when the broker answered, whatever the Status.
	Err error
	// Items is how many messages the request carried: the items pushed by a push or a
	// transaction, the items of an ack or a batch ack; 0 for other requests.
	Items int
}

// HandledEvent is the outcome of one message a consume loop handed to a handler.
type HandledEvent struct {
	Message *Message
	// Outcome is the ack the loop decided for the message: completed, failed, retry or dlq.
	// It is empty when no ack follows: the handler settles messages itself (AutoAck off) and
	// returned nil, or the lease was lost (Err then matches ErrLeaseLost).
	Outcome Status
	// Err is what the handler (after its middleware) returned; a panic is a *PanicError.
	Err error
	// Duration is how long the handler call took (for a BatchHandler, the whole batch's).
	Duration time.Duration
	// Panicked reports that Err is a panic (the handler's, or a middleware's) recovered by
	// the loop; the message is then acked failed, unless a middleware chose otherwise.
	Panicked bool
}

// AckedEvent is one ack item the broker answered.
type AckedEvent struct {
	Message *Message
	Status  Status
	Success bool   // the broker applied it
	Error   string // why it was refused, when Success is false
}

// LeaseLostEvent is a lease the broker refused to renew.
type LeaseLostEvent struct {
	LeaseID, Queue string
	// Messages are those of the lost batch the loop had not yet acked.
	Messages []*Message
}

// WithHooks adds hooks to the client. Several WithHooks compose: each hook of every set is
// called, in the order the options were given. Default: none.
func WithHooks(h Hooks) Option {
	return func(c *clientConfig) { c.hooks.add(h) }
}

// hookSet is every hook a client was given, one list per kind; an empty list costs a length
// check at each call site.
type hookSet struct {
	request   []func(RequestEvent)
	handled   []func(HandledEvent)
	acked     []func(AckedEvent)
	leaseLost []func(LeaseLostEvent)
	logger    *slog.Logger
}

func (s *hookSet) add(h Hooks) {
	if h.Request != nil {
		s.request = append(s.request, h.Request)
	}
	if h.Handled != nil {
		s.handled = append(s.handled, h.Handled)
	}
	if h.Acked != nil {
		s.acked = append(s.acked, h.Acked)
	}
	if h.LeaseLost != nil {
		s.leaseLost = append(s.leaseLost, h.LeaseLost)
	}
}

func (s *hookSet) onRequest(e RequestEvent) {
	callHooks(s.logger, "Request", s.request, e)
}

func (s *hookSet) onHandled(e HandledEvent) {
	callHooks(s.logger, "Handled", s.handled, e)
}

func (s *hookSet) onAcked(e AckedEvent) {
	callHooks(s.logger, "Acked", s.acked, e)
}

func (s *hookSet) onLeaseLost(e LeaseLostEvent) {
	callHooks(s.logger, "LeaseLost", s.leaseLost, e)
}

// callHooks calls the hooks of one kind in order.
func callHooks[E any](logger *slog.Logger, kind string, hooks []func(E), e E) {
	for _, f := range hooks {
		callHook(logger, kind, f, e)
	}
}

// callHook calls one hook, turning its panic into a log line: a broken metrics callback must
// not take a consume loop or a request down with it.
func callHook[E any](logger *slog.Logger, kind string, f func(E), e E) {
	defer func() {
		if v := recover(); v != nil {
			logger.Error("queen: "+kind+" hook panicked", "panic", fmt.Sprint(v),
				"stack", string(debug.Stack()))
		}
	}()
	f(e)
}
