package queen

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Handling: each partition a pop leased is handled on a goroutine of its own, which calls the
// handler on its messages in offset order (once per message for a Handler, once for the batch
// for a BatchHandler), inside the middleware, with panics recovered, and hands what each call
// returned to the batch's settling, which decides the acks.

// leasedBatch is the messages one pop leased in one partition: handled by one goroutine, in
// offset order, and acked with one request (or a few, with progress acks).
type leasedBatch struct {
	msgs     []*Message
	bytes    int64          // the data of msgs, held against MaxInFlightBytes until the batch ends
	deadline *leaseDeadline // shared by the partitions of the pop
	lost     atomic.Bool    // a renewal was refused: nothing more is handled or acked

	calling   atomic.Int32 // index in msgs of the message whose handler runs; -1 between calls
	callStart atomic.Int64 // when that call began, on the client's clock, in Unix nanoseconds
	slotFreed atomic.Bool  // its handler slot was given back: at its end, or for a backoff
	handed    int64        // how many of msgs were handed to the handler under a Limit
	onLoop    bool         // it runs on the fetch loop's goroutine (Concurrency 1)

	// What it holds while it is handled: its handler's ctx (with lease renewal) and its
	// lease's renewal, and what its handler calls decided.
	cancel     context.CancelCauseFunc
	keeper     batchLease
	lease      leaseHold
	settlement settlement

	// Its place in the loop's running batches, and what the loop's watch saw of it, which
	// only the watch reads and writes, under the list's lock.
	prev, next   *leasedBatch
	watchedCall  int64 // the call (its start and index) the warnings below are about
	longWarnings int   // long-running warnings given for that call
	lostSeen     bool  // the watch has seen the lease lost once: the next look logs it stuck
}

// start runs b on one of the handler slots taken for it. With Concurrency 1 no other batch
// can run meanwhile and the fetch loop would only wait for this one, so b runs on the loop's
// own goroutine, sparing two hand-offs per batch; should its last ack have to wait out a
// backoff, which frees the slot for other partitions, the batch moves to a goroutine of its
// own for that wait (handle).
func (l *consumer) start(b *leasedBatch) {
	l.begin(b)
	if l.concurrency == 1 {
		b.onLoop = true
		if l.handle(b) {
			l.ended(b)
		}
		return
	}
	l.goroutines.Go(func() {
		l.handle(b)
		if r := l.endedHere(l.pops, b); r != nil {
			l.goOn(l.pops, r)
		}
	})
}

// begin counts b as running, before it is handled here or on a goroutine of its own.
func (l *consumer) begin(b *leasedBatch) {
	l.idle.started()
	b.calling.Store(-1)
}

// ended releases what b held once it is over: its messages and data against the bounds, and
// its handler slot.
func (l *consumer) ended(b *leasedBatch) {
	l.let(b)
	if !l.freeSlot(b) {
		l.signalBudget() // the slot went earlier; what it held is released now
	}
}

// let releases b's messages and data against the bounds, once b is over.
func (l *consumer) let(b *leasedBatch) {
	l.handedHeld.Add(-b.handed) // before held, for the same reason as in handOut
	l.held.Add(-int64(len(b.msgs)))
	l.heldBytes.Add(-b.bytes)
	l.idle.ended()
}

// freeSlot gives b's handler slot back, once: at the batch's end, or when its last ack waits
// out a backoff; it wakes the fetch loop, which may send a pop for it. It reports whether this
// call gave the slot back.
func (l *consumer) freeSlot(b *leasedBatch) bool {
	if !b.slotFreed.CompareAndSwap(false, true) {
		return false
	}
	l.giveBack(1)
	l.signalBudget()
	return true
}

// handle calls the handler on b's messages, one call after the other, settling what each call
// returned before the next, then settles the batch: its acks, unless the lease was lost. It
// reports whether b is over; false when b runs on the fetch loop's goroutine and its last ack
// waits out a backoff: the rest of it then goes on a goroutine of its own, which ends it.
func (l *consumer) handle(b *leasedBatch) (over bool) {
	ctx := l.handlerCtx // a lost lease is the only cause a batch's own ctx could add
	if l.renew {
		ctx, b.cancel = context.WithCancelCause(l.handlerCtx)
		l.keepLease(b)
	}
	l.running.add(b)
	s := &b.settlement
	s.items = s.room[:0]
	if l.ackEveryD > 0 {
		s.lastAck = l.now()
	}
	for i := 0; i < len(b.msgs) && !b.lost.Load(); {
		msgs := l.handOut(b, i)
		if len(msgs) == 0 {
			s.unhanded = b.msgs[i:]
			break
		}
		took, err := l.call(ctx, b, i, msgs)
		if !l.settleCall(ctx, b, s, i, msgs, err, took) {
			break
		}
		i += len(msgs)
	}
	if b.onLoop && (s.hold > 0 || l.acksBehind(b, s)) {
		if s.hold == 0 {
			l.freeSlot(b) // the loop pops the next batch while this one's acks are on their way
		}
		l.goroutines.Go(func() {
			l.settle(ctx, b, s)
			l.unhold(b)
			l.ended(b)
		})
		return false
	}
	l.settle(ctx, b, s)
	l.unhold(b)
	return true
}

// acksBehind reports whether b, handled on the fetch loop's goroutine, may hand its handler
// slot back before its acks are answered, so that the next pop travels while they do rather
// than after them: its messages stay held against the in-flight bound until they are acked.
// That needs a pop that waits, which a broker answers once the partition these acks free is
// leasable again, rather than empty; a broker that numbers its messages, on which the order
// of an ack and the next pop changes no retry counter; and acks of handled messages only, not
// a failure, whose ack the loop sends with no pop in flight.
func (l *consumer) acksBehind(b *leasedBatch, s *settlement) bool {
	return l.longPolls() && !s.failure && !b.lost.Load() && !countsFailure(b.msgs[0])
}

// unhold lets go of what b held while it was handled: its place among the running batches,
// its lease's renewal and its handler's ctx.
func (l *consumer) unhold(b *leasedBatch) {
	l.running.remove(b)
	if b.cancel != nil {
		b.lease.end()
		b.cancel(nil)
	}
}

// handOut is what the next handler call gets, from b's message i on: that message for a
// Handler, the rest of the batch for a BatchHandler (which is called once), as far as Limit
// allows; nothing when the loop is stopping or the lease has run out.
func (l *consumer) handOut(b *leasedBatch, i int) []*Message {
	if l.h.batch != nil && i > 0 {
		return nil // what Limit left out of the one call is released
	}
	if !l.mayStart(b, b.msgs[i]) {
		return nil
	}
	want := 1
	if l.h.batch != nil {
		want = len(b.msgs)
	}
	n := l.reserve(want)
	if l.limit > 0 {
		b.handed += int64(n)
		l.handedHeld.Add(int64(n)) // after reserved: Limit counts it twice meanwhile, never not at all
	}
	return b.msgs[i : i+n : i+n]
}

// mayStart reports whether m may be handed to the handler: the loop is not stopping and m's
// lease has not run out.
func (l *consumer) mayStart(b *leasedBatch, m *Message) bool {
	if l.stopping() {
		return false
	}
	if b.deadline.expired(l.now()) {
		l.log.leaseRanOut(m)
		return false
	}
	return true
}

// reserve takes up to n of Limit's remaining messages (all n without a Limit). The taker of
// the last one stops the loop.
func (l *consumer) reserve(n int) int {
	if l.limit == 0 {
		return n
	}
	for {
		cur := l.reserved.Load()
		if cur >= l.limit {
			return 0
		}
		take := min(int64(n), l.limit-cur)
		if l.reserved.CompareAndSwap(cur, cur+take) {
			if cur+take == l.limit {
				l.stopNow()
			}
			return int(take)
		}
	}
}

// call runs the handler on msgs (from index i of b) inside the middleware, measuring it, and
// turns a panic into a *PanicError. It is the one place where a handler is invoked.
func (l *consumer) call(ctx context.Context, b *leasedBatch, i int, msgs []*Message) (took time.Duration, err error) {
	if l.handlerTimeout > 0 {
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
		defer l.c.clock.AfterFunc(l.handlerTimeout, func() { cancel(ErrHandlerTimeout) })()
	}
	started := time.Now()
	b.callStart.Store(l.now().UnixNano())
	b.calling.Store(int32(i))
	defer func() {
		b.calling.Store(-1)
		took = time.Since(started)
		l.pace.observe(len(msgs), took)
		if v := recover(); v != nil { // a handler without middleware, or a middleware
			err = l.panicked(msgs[0], v)
		}
	}()
	if len(l.middleware) == 0 {
		return 0, l.h.run(ctx, msgs)
	}
	return 0, invokeChain(ctx, l.middleware, msgs, func(ctx context.Context) error {
		return l.guard(ctx, msgs)
	})
}

// run is the call of the user's code on msgs: the Handler on the one message, or the
// BatchHandler on them all.
func (h handling) run(ctx context.Context, msgs []*Message) error {
	if h.each != nil {
		return h.each(ctx, msgs[0])
	}
	return h.batch(ctx, msgs)
}

// invokeChain calls mws in order around call, which runs the handler itself.
func invokeChain(ctx context.Context, mws []Middleware, msgs []*Message, call func(context.Context) error) error {
	if len(mws) == 0 {
		return call(ctx)
	}
	return mws[0](ctx, msgs, func(ctx context.Context) error {
		return invokeChain(ctx, mws[1:], msgs, call)
	})
}

// guard runs the handler under middleware, so that middleware sees its panic as a *PanicError.
func (l *consumer) guard(ctx context.Context, msgs []*Message) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = l.panicked(msgs[0], v)
		}
	}()
	return l.h.run(ctx, msgs)
}

func (l *consumer) panicked(m *Message, v any) *PanicError {
	p := newPanicError(v)
	l.log.panicked(m, p)
	return p
}

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

// stuckLogEvery is how often a handler still running after its ctx was cancelled is logged.
const stuckLogEvery = 10 * time.Second

// batchWatchEvery is how often the loop's watch looks at its running handler calls, on the
// client's clock: the long-running and stuck warnings need no finer time, and one timer for
// the loop costs nothing per batch.
const batchWatchEvery = 10 * time.Second

// runningBatches is the batches a loop is handling, which its watch looks at.
type runningBatches struct {
	mu   sync.Mutex
	head *leasedBatch
}

func (r *runningBatches) add(b *leasedBatch) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b.prev, b.next = nil, r.head
	if r.head != nil {
		r.head.prev = b
	}
	r.head = b
}

func (r *runningBatches) remove(b *leasedBatch) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if b.prev != nil {
		b.prev.next = b.next
	} else {
		r.head = b.next
	}
	if b.next != nil {
		b.next.prev = b.prev
	}
	b.prev, b.next = nil, nil
}

// each calls fn on every running batch, under the list's lock.
func (r *runningBatches) each(fn func(*leasedBatch)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for b := r.head; b != nil; b = b.next {
		fn(b)
	}
}

// watchBatches looks at the loop's running handler calls every batchWatchEvery (see
// checkRunning) until the func it returns is called.
func (l *consumer) watchBatches() (stop func()) {
	var mu sync.Mutex
	stopped := false
	var cancel func()
	var check func()
	check = func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		l.checkRunning()
		cancel = l.c.clock.AfterFunc(batchWatchEvery, check)
	}
	mu.Lock()
	cancel = l.c.clock.AfterFunc(batchWatchEvery, check)
	mu.Unlock()
	return func() {
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		cancel()
	}
}

// checkRunning logs at warn level a handler call that has run for longHandlerEvery, and again
// each time it has run that much longer, so that a hung handler holding a partition is
// visible; and, every look after the one that saw its lease lost, a handler still running
// after the lost lease cancelled its ctx. Handlers still running after the stop cancelled
// them are the stop's watch's (logStuck).
func (l *consumer) checkRunning() {
	now := l.now()
	stopped := l.handlerCtx.Err() != nil
	l.running.each(func(b *leasedBatch) {
		i := b.calling.Load()
		if i < 0 {
			return
		}
		start := b.callStart.Load()
		if call := start ^ int64(i)<<48; call != b.watchedCall {
			b.watchedCall, b.longWarnings = call, 0
		}
		running := now.Sub(time.Unix(0, start))
		if running >= time.Duration(b.longWarnings+1)*longHandlerEvery {
			b.longWarnings = int(running / longHandlerEvery)
			l.log.longRunning(b.msgs[i], running)
		}
		if b.lost.Load() && !stopped {
			if b.lostSeen {
				l.log.stuck(b.msgs[i], running, ErrLeaseLost)
			}
			b.lostSeen = true
		}
	})
}

// logStuck logs every handler call still running after the stop cancelled its ctx.
func (l *consumer) logStuck() {
	now := l.now()
	cause := context.Cause(l.handlerCtx)
	l.running.each(func(b *leasedBatch) {
		if i := b.calling.Load(); i >= 0 {
			l.log.stuck(b.msgs[i], now.Sub(time.Unix(0, b.callStart.Load())), cause)
		}
	})
}

func (r *consumeLog) longRunning(m *Message, running time.Duration) {
	r.logger.Warn("queen: consume handler still running; it holds its partition meanwhile",
		"queue", m.Queue, "partition", m.Partition, "transactionId", m.TransactionID,
		"running", running.Round(time.Second))
}

func (r *consumeLog) panicked(m *Message, p *PanicError) {
	r.logger.Error("queen: consume handler panicked",
		append(m.logAttrs(), "panic", fmt.Sprint(p.Value), "stack", p.Stack)...)
}

func (r *consumeLog) leaseRanOut(m *Message) {
	r.logger.Warn("queen: lease ran out before the message was handled; releasing it",
		append(m.logAttrs(), "leaseId", m.LeaseID)...)
}

// stuck reports a handler still running after its ctx was cancelled.
func (r *consumeLog) stuck(m *Message, running time.Duration, cause error) {
	r.logger.Error("queen: consume handler still running after its ctx was cancelled",
		"queue", m.Queue, "partition", m.Partition, "transactionId", m.TransactionID,
		"running", running.Round(time.Millisecond), "cause", cause)
}
