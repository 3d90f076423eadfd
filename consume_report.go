package queen

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"
)

// PanicError is what a consume handler's panic becomes: the message is acked failed with the
// text "panic: <value>", and OnError receives the *PanicError.
type PanicError struct {
	Value any    // what the handler panicked with
	Stack string // the handler's goroutine stack at the panic, without the loop's own frames
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

func newPanicError(v any) *PanicError {
	return &PanicError{Value: v, Stack: trimStack(debug.Stack())}
}

// Stack trimming: keep the frames from the panicking call down to the handler, at most
// maxStackLines lines (two per frame).
const (
	maxStackLines = 40
	loopFrame     = "github.com/queenmq/queen-go.(*consumer)."
)

// trimStack drops the goroutine header, the recovery frames above the panic, and the consume
// loop's frames below the handler.
func trimStack(stack []byte) string {
	lines := strings.Split(strings.TrimSpace(string(stack)), "\n")
	start := 0
	for i, line := range lines {
		if strings.HasPrefix(line, "panic(") {
			start = i + 2 // the panic call and its file line
			break
		}
	}
	var kept []string
	for _, line := range lines[min(start, len(lines)):] {
		if strings.HasPrefix(line, loopFrame) || len(kept) == maxStackLines {
			break
		}
		kept = append(kept, line)
	}
	return strings.Join(kept, "\n")
}

// consumeLog reports a consume loop's troubles to the client's logger and to OnError.
type consumeLog struct {
	logger  *slog.Logger
	onError func(m *Message, err error)
}

func (r *consumeLog) report(m *Message, err error) {
	if r.onError != nil {
		r.onError(m, err)
	}
}

func messageAttrs(m *Message) []any {
	return []any{"queue", m.Queue, "partition", m.Partition, "transactionId", m.TransactionID,
		"attempt", m.DeliveryAttempt}
}

// panicked logs a handler's panic with its stack; handlerFailed reports it.
func (r *consumeLog) panicked(m *Message, p *PanicError) {
	r.logger.Error("queen: consume handler panicked",
		append(messageAttrs(m), "panic", fmt.Sprint(p.Value), "stack", p.Stack)...)
}

func (r *consumeLog) handlerFailed(m *Message, err error) {
	var p *PanicError
	if !errors.As(err, &p) {
		r.logger.Debug("queen: consume handler failed", append(messageAttrs(m), "error", err)...)
	}
	r.report(m, err)
}

// popFailed reports a failed pop: at warn level when it begins an outage (the loop's first
// failed pop, or the first after the broker answered again), at debug level after that.
func (r *consumeLog) popFailed(err error, began bool) {
	if began {
		r.logger.Warn("queen: consume pop failed; retrying until the broker answers", "error", err)
	} else {
		r.logger.Debug("queen: consume pop failed again; retrying", "error", err)
	}
	r.report(nil, err)
}

// outageEnded says the broker answers again after failing pops.
func (r *consumeLog) outageEnded(lasted time.Duration, failures int) {
	r.logger.Warn("queen: consume pops succeed again", "after", lasted.Round(time.Millisecond),
		"failedPops", failures)
}

func (r *consumeLog) fatal(err error) {
	r.logger.Error("queen: consume stopped", "error", err)
}

func (r *consumeLog) ackFailed(m *Message, err error) {
	r.logger.Warn("queen: consume ack got no answer; the messages will be delivered again",
		append(messageAttrs(m), "error", err)...)
	r.report(nil, err)
}

func (r *consumeLog) ackRefused(it AckItem, reason string) {
	err := &ackRefusedError{transactionID: it.Message.TransactionID, reason: reason}
	r.logger.Warn("queen: consume ack refused",
		append(messageAttrs(it.Message), "status", it.Status, "error", reason)...)
	r.report(it.Message, err)
}

func (r *consumeLog) renewFailed(m *Message, err error) {
	r.logger.Warn("queen: lease renewal failed; retrying", "leaseId", m.LeaseID, "error", err)
	r.report(nil, err)
}

// leaseLost reports a batch whose lease a renewal found gone: nothing of it is acked.
func (r *consumeLog) leaseLost(m *Message) {
	r.logger.Warn("queen: lease lost; the batch was not acked and will be delivered again",
		append(messageAttrs(m), "leaseId", m.LeaseID)...)
	r.report(m, errorfLeaseLost(m))
}

// ackOutcomeUnknown reports an ack whose answer was lost and whose resend was refused: the
// first request may have been applied.
func (r *consumeLog) ackOutcomeUnknown(m *Message, err error) {
	r.logger.Warn("queen: consume ack outcome unknown; the messages may be delivered again",
		append(messageAttrs(m), "error", err)...)
	r.report(nil, err)
}

// ackRetrying reports an ack that got no answer and is sent again while the lease holds.
func (r *consumeLog) ackRetrying(m *Message, err error) {
	r.logger.Debug("queen: consume ack failed; sending it again while the lease holds",
		append(messageAttrs(m), "error", err)...)
	r.report(nil, err)
}

// stuck reports a handler still running after its ctx was cancelled.
func (r *consumeLog) stuck(m *Message, running time.Duration, cause error) {
	r.logger.Error("queen: consume handler still running after its ctx was cancelled",
		"queue", m.Queue, "partition", m.Partition, "transactionId", m.TransactionID,
		"running", running.Round(time.Millisecond), "cause", cause)
}

func (r *consumeLog) leaseRanOut(m *Message) {
	r.logger.Warn("queen: lease ran out before the message was handled; releasing it",
		append(messageAttrs(m), "leaseId", m.LeaseID)...)
}
