package broker

import "time"

// Mode is the broker generation the engine behaves as.
type Mode uint8

const (
	// Mode20 is the 2.0 design, the default.
	Mode20 Mode = iota
	// Mode015 is a 0.15 broker as it behaves on the wire, its data-losing bugs
	// included: the SDK's tests use it to prove the client is careful where 0.15 is not.
	Mode015
)

// String is the mode's Queen version: "2.0" or "0.15".
func (m Mode) String() string {
	if m == Mode015 {
		return "0.15"
	}
	return "2.0"
}

// ModeOf is the mode of a Queen version: "2.0" (or "") or "0.15"; ok is false for any other.
func ModeOf(version string) (m Mode, ok bool) {
	switch version {
	case "", "2.0":
		return Mode20, true
	case "0.15":
		return Mode015, true
	}
	return Mode20, false
}

// Option configures an Engine.
type Option func(*Engine)

// WithMode makes the engine behave as the given broker generation.
func WithMode(m Mode) Option { return func(e *Engine) { e.mode = m } }

// Mode is the generation the engine behaves as.
func (e *Engine) Mode() Mode { return e.mode }

// generation is what differs between the broker generations the engine behaves as. New picks
// one by the mode, so that no method of the engine asks which generation it runs: the 2.0
// design is v20, a 0.15 broker v015 (compat015.go). Its pop methods take and return values,
// so that a pop's request and answer stay off the heap.
type generation interface {
	// defaultLease is the leaseTime, in seconds, of a queue a push creates or a configure
	// leaves without one.
	defaultLease() int
	// deadLetterDefault is the deadLetterQueue of a queue a push creates or a configure leaves
	// without one.
	deadLetterDefault() bool
	// createdNamespace is the namespace of the named queue when a push creates it.
	createdNamespace(queue string) string
	// dropsDeadLetters reports whether a queue configured with deadLetterQueue false drops
	// the messages its groups give up on instead of filing them.
	dropsDeadLetters() bool

	// arrival is the store step a pop's new start counts from; w is the pop's waiter, nil for
	// a pop that never waits.
	arrival(w *waiter) int64
	// noQueue is why a pop of a queue that does not exist finds nothing; its start, if any,
	// counts from arrival.
	noQueue(r PopRequest, arrival int64, w *waiter) EmptyReason
	// waitsBlind reports whether w, a pop about to wait, is served by nothing pushed while it
	// waits and looks again only once its timeout passes.
	waitsBlind(w *waiter) bool
	// noPartition is why a pop of a partition that does not exist finds nothing.
	noPartition() EmptyReason
	// claimed completes the answer of a pop of q (of its partition p alone, when not nil) once
	// it has claimed what it could: m is the group's start, hadStart whether it was decided
	// before this pop.
	claimed(res PopResult, m *groupMeta, q *queue, p *partition, hadStart bool) PopResult

	// ack applies items as one request's acks.
	ack(items []AckItem) []AckResult
	// seek moves a group's cursors on a queue to ts, or to the end.
	seek(group, queue string, toEnd bool, ts time.Time) (SeekResult, error)
	// transaction applies ops all or nothing, under the transaction id txID.
	transaction(txID string, ops []TxOp) TxResult
	// refusal checks ops against the state, applying nothing: failed is the first operation
	// refused, with its reason, or -1.
	refusal(ops []TxOp) (failed int, reason string)
}

// generationOf is the generation of mode m, for e.
func generationOf(e *Engine, m Mode) generation {
	if m == Mode015 {
		return v015{e}
	}
	return v20{e}
}

// v20 is the 2.0 design.
type v20 struct{ *Engine }

func (v20) defaultLease() int       { return defaultLeaseSeconds }
func (v20) dropsDeadLetters() bool  { return true }
func (v20) deadLetterDefault() bool { return true }

func (v20) createdNamespace(string) string { return "" }

// arrival: a waiting pop's start counts from when it arrived, not from when it is served, so
// that nothing pushed while it waited is skipped.
func (e v20) arrival(w *waiter) int64 {
	if w != nil {
		return w.arrival
	}
	return e.seq
}

// noQueue keeps the start a pop decides on a queue not created yet, for the queue to adopt.
func (e v20) noQueue(r PopRequest, arrival int64, w *waiter) EmptyReason {
	e.decidePending(r.Queue, r.Group, &r, arrival, w)
	return EmptyNone
}

func (v20) noPartition() EmptyReason { return EmptyNone }

// waitsBlind: a 2.0 waiting pop is served as soon as something it can take arrives.
func (v20) waitsBlind(*waiter) bool { return false }

func (v20) claimed(res PopResult, _ *groupMeta, _ *queue, _ *partition, _ bool) PopResult {
	return res
}
