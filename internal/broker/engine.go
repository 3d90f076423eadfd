package broker

import (
	"context"
	"time"
)

// Clock is where the engine reads time and schedules lease expiries.
type Clock interface {
	Now() time.Time
	// AfterFunc runs f once the clock has moved d past now (a manual clock: inside Advance).
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a scheduled AfterFunc.
type Timer interface{ Stop() bool }

// Engine is the broker's state. Every method is safe for concurrent use and applies as one
// atomic step (R124).
type Engine struct{}

// New returns an empty broker that reads time from clock.
func New(clock Clock) *Engine { return &Engine{} }

// Close answers every waiting pop with its empty result at once; later pops do not wait.
func (e *Engine) Close() {}

// Configure creates or reconfigures a queue (R5).
func (e *Engine) Configure(r ConfigureRequest) ConfigureResult { return ConfigureResult{} }

// Push stores validated items (R1–R13, R17) and wakes the pops they satisfy.
func (e *Engine) Push(items []PushItem) []PushResult { return nil }

// Pop leases messages (R20–R45), waiting on real time when r.Wait. A ctx done before the answer
// abandons the pop and leases nothing (R142). A *BadRequest refuses it (R37).
func (e *Engine) Pop(ctx context.Context, r PopRequest) (PopResult, error) { return PopResult{}, nil }

// Ack applies items as one batch ack (R66–R89); results come back in item order.
func (e *Engine) Ack(items []AckItem) []AckResult { return nil }

// Extend renews a lease (R61–R65); seconds is positive.
func (e *Engine) Extend(leaseID string, seconds int) ExtendResult { return ExtendResult{} }

// Transaction applies ack and push operations all or nothing (R126–R130).
func (e *Engine) Transaction(ops []TxOp) TxResult { return TxResult{} }

// DeadLetters lists dead letters (R98) and the count of matches before Limit/Offset.
func (e *Engine) DeadLetters(q DLQQuery) (list []DeadLetter, total int) { return nil, 0 }

// Replay pushes a dead letter back as dlq:<id> (R99, R100).
func (e *Engine) Replay(id string) (ReplayResult, error) {
	return ReplayResult{}, ErrDeadLetterNotFound
}

// DeleteDeadLetter removes a dead letter (R101).
func (e *Engine) DeleteDeadLetter(id string) error { return ErrDeadLetterNotFound }

// Seek moves a group's cursors on a queue to ts, or to the end (R110–R115).
func (e *Engine) Seek(group, queue string, toEnd bool, ts time.Time) (SeekResult, error) {
	return SeekResult{}, ErrQueueNotFound
}

// DeleteGroup forgets a group on one queue, or on every queue when queue is "" (R143).
func (e *Engine) DeleteGroup(group, queue string, deleteMetadata bool) (deletedPartitions int, err error) {
	return 0, ErrGroupNotFound
}

// DeleteQueue removes a queue and all its state (R141).
func (e *Engine) DeleteQueue(queue string) error { return ErrQueueNotFound }
