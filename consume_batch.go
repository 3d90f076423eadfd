package queen

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// leasedBatch is the messages one pop leased in one partition: handled by one goroutine, in
// offset order, and acked with one request (or a few, with progress acks).
type leasedBatch struct {
	msgs     []*Message
	deadline *leaseDeadline // shared by the partitions of the pop
	lost     atomic.Bool    // a renewal was refused: nothing more is handled or acked

	calling   atomic.Int32 // index in msgs of the message whose handler runs; -1 between calls
	callStart atomic.Int64 // when that call began, in Unix nanoseconds
	slotFreed bool         // the batch gave its handler slot back early (a backoff wait)
}

// start runs b on one of the handler slots taken for it.
func (l *consumer) start(b *leasedBatch) {
	l.idle.started()
	b.calling.Store(-1)
	l.workers.Go(func() error {
		defer func() {
			l.held.Add(-int64(len(b.msgs)))
			l.idle.ended()
			l.freeSlot(b)
			l.signalBudget()
		}()
		l.handle(b)
		return nil
	})
}

// freeSlot gives b's handler slot back, once.
func (l *consumer) freeSlot(b *leasedBatch) {
	if !b.slotFreed {
		b.slotFreed = true
		l.giveBack(1)
	}
}

// handle calls the handler on b's messages and sends their acks, unless the lease was lost.
func (l *consumer) handle(b *leasedBatch) {
	ctx, cancel := context.WithCancelCause(l.handlerCtx)
	defer cancel(nil)
	ended := make(chan struct{})
	defer close(ended)
	defer l.watchStuck(ctx, b, ended)()
	first := b.msgs[0]
	if l.renew && first.LeaseID != "" {
		untrack := l.c.renewer.track(l.c, first.LeaseID, l.renewEvery, l.renewExtend, &leaseHolder{
			extended: b.deadline.extend,
			lost: func() {
				if !b.lost.Swap(true) {
					l.leaseLost(b)
				}
				cancel(ErrLeaseLost)
			},
			failed: func(err error) { l.log.renewFailed(first, err) },
		})
		defer untrack()
	}

	var (
		items []AckItem
		above []*Message
		wait  time.Duration
	)
	if l.h.each != nil {
		items, above, wait = l.handleEach(ctx, b)
	} else {
		items, above, wait = l.handleAll(ctx, b)
	}
	if b.lost.Load() {
		l.log.leaseLost(first)
		return // the broker has taken the batch back; an ack would be refused (R117)
	}
	if wait > 0 {
		// Hold the last ack (a failed or retry) back for its backoff. What was handled before
		// it is acked now; the handler slot is free for other partitions meanwhile.
		if len(items) > 1 {
			if l.send(items[:len(items)-1], b.deadline) == nil {
				return // not answered while the lease held: the broker redelivers them all
			}
			items = items[len(items)-1:]
		}
		l.freeSlot(b)
		if !l.holdBack(ctx, b, items[0].Message, wait) {
			l.log.leaseLost(first)
			return
		}
	}
	results := l.send(items, b.deadline)
	if len(above) > 0 && filedWithLeaseHeld(items, results) {
		l.release(above, b.deadline)
	}
}

// filedWithLeaseHeld reports whether the batch's last ack was a failed that spent the last
// retry: the broker filed the message and moved the cursor to it (R70), so the lease still
// holds the messages above it, which the loop did not handle. With retries left the failed
// ended the lease itself (R69).
func filedWithLeaseHeld(items []AckItem, results []AckResult) bool {
	if len(items) == 0 || len(results) != len(items) {
		return false
	}
	last, res := items[len(items)-1], results[len(results)-1]
	return last.Status == StatusFailed && res.Success && res.DLQ && !res.LeaseReleased
}

// handleEach calls the handler once per message and returns the acks to send, the messages
// above a failed one, which were not handled, and how long to hold the last ack back.
func (l *consumer) handleEach(ctx context.Context, b *leasedBatch) (items []AckItem, above []*Message, wait time.Duration) {
	lastAck := time.Time{}
	if l.ackEveryD > 0 {
		lastAck = l.now()
	}
	for i, m := range b.msgs {
		if b.lost.Load() {
			return nil, nil, 0
		}
		if !l.mayStart(b, m) || l.reserve(1) == 0 {
			return append(items, releaseItem(b.msgs[i:])...), nil, 0
		}
		took, err := l.call(ctx, b, i, b.msgs[i:i+1], func(ctx context.Context) error { return l.h.each(ctx, m) })
		if b.lost.Load() {
			l.handled(m, "", context.Cause(ctx), took)
			return nil, nil, 0
		}
		if err != nil {
			l.log.handlerFailed(m, err)
		} else if !l.autoAck {
			l.handled(m, "", nil, took)
			continue // the handler settles its messages itself
		}
		if !m.markSettled() {
			l.handled(m, "", err, took)
			continue // the handler settled it already
		}
		item, hold := l.decide(ctx, m, err, took)
		items = append(items, item)
		if endsLease(item.Status) {
			return items, b.msgs[i+1:], hold // they come back with this one; ack none of them (O18)
		}
		if i+1 == len(b.msgs) {
			break
		}
		switch {
		case item.Status == StatusDLQ:
			// File it before the next message is handled: a completed the next handler sends
			// itself would move the cursor past it first (R67), and a late dlq changes nothing
			// (R68), leaving the message neither done nor filed.
		case l.ackEveryN > 0 && len(items) >= l.ackEveryN:
		case l.ackEveryD > 0 && l.now().Sub(lastAck) >= l.ackEveryD:
		default:
			continue
		}
		// A progress ack: what is done so far, in offset order; the lease stays on the rest.
		if l.send(items, b.deadline) == nil {
			return nil, nil, 0 // not sent: hand out nothing more; the lease brings them back
		}
		items = nil
		if l.ackEveryD > 0 {
			lastAck = l.now()
		}
	}
	return items, nil, 0
}

// handleAll hands the batch to the handler in one call and returns the acks to send, the
// messages above a failed one, and how long to hold the last ack back.
func (l *consumer) handleAll(ctx context.Context, b *leasedBatch) (items []AckItem, above []*Message, wait time.Duration) {
	first := b.msgs[0]
	if !l.mayStart(b, first) {
		return releaseItem(b.msgs), nil, 0
	}
	n := l.reserve(len(b.msgs))
	if n == 0 {
		return releaseItem(b.msgs), nil, 0
	}
	take := b.msgs[:n:n]
	took, err := l.call(ctx, b, 0, take, func(ctx context.Context) error { return l.h.batch(ctx, take) })
	if b.lost.Load() {
		for _, m := range take {
			l.handled(m, "", context.Cause(ctx), took)
		}
		return nil, nil, 0
	}
	if err != nil {
		l.log.handlerFailed(first, err)
	}
	if err == nil && !l.autoAck {
		for _, m := range take {
			l.handled(m, "", nil, took)
		}
	}
	if err != nil || l.autoAck {
		for i, m := range take {
			if !m.markSettled() {
				l.handled(m, "", err, took)
				continue
			}
			item, hold := l.decide(ctx, m, err, took)
			items = append(items, item)
			if endsLease(item.Status) {
				for _, rest := range take[i+1:] {
					if rest.settled.Load() {
						l.handled(rest, "", err, took)
					} else {
						l.handled(rest, item.Status, err, took)
					}
				}
				return items, b.msgs[i+1:], hold // the rest of the batch comes back with it (O18)
			}
		}
	}
	if n < len(b.msgs) {
		items = append(items, releaseItem(b.msgs[n:])...) // beyond Limit
	}
	return items, nil, 0
}

// decide turns a handler's return for m into m's ack, and says how long to hold that ack
// back. It is the one place where an outcome is decided: nil completes, Retry retries,
// DeadLetter files a dead letter, another error (or a panic) fails. An error from a handler
// whose ctx the stop cancelled is a retry, not a failure: the stop is not the message's
// fault. A failed or retried message waits out its backoff before its ack, unless the loop is
// stopping.
func (l *consumer) decide(ctx context.Context, m *Message, err error, took time.Duration) (AckItem, time.Duration) {
	status, text := outcome(err)
	if err != nil && status != StatusDLQ && errors.Is(context.Cause(ctx), errStopped) {
		status = StatusRetry
	}
	l.handled(m, status, err, took)
	item := AckItem{Message: m, Status: status, Error: text}
	if !endsLease(status) {
		l.failures.forget(m)
		return item, 0
	}
	if l.stopping() {
		return item, 0
	}
	return item, l.backoff(err, l.failures.add(m))
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

// call runs the handler on msgs (from index i of b) inside the middleware, measuring it, and
// turns a panic into a *PanicError. It is the one place where a handler is invoked.
func (l *consumer) call(ctx context.Context, b *leasedBatch, i int, msgs []*Message, h func(context.Context) error) (took time.Duration, err error) {
	started := time.Now()
	b.callStart.Store(started.UnixNano())
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
		return 0, h(ctx)
	}
	return 0, invokeChain(ctx, l.middleware, msgs, func(ctx context.Context) error {
		return l.guard(ctx, msgs[0], h)
	})
}

// guard runs the handler under middleware, so that middleware sees its panic as a *PanicError.
func (l *consumer) guard(ctx context.Context, m *Message, h func(context.Context) error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = l.panicked(m, v)
		}
	}()
	return h(ctx)
}

func (l *consumer) panicked(m *Message, v any) *PanicError {
	p := newPanicError(v)
	l.log.panicked(m, p)
	return p
}

// stuckLogEvery is how often a handler still running after its ctx was cancelled is logged.
const stuckLogEvery = 10 * time.Second

// watchStuck logs, every stuckLogEvery after ctx is cancelled (by the stop, or a lost lease)
// and until ended closes, the message whose handler is still running. It returns the func
// that stops watching.
func (l *consumer) watchStuck(ctx context.Context, b *leasedBatch, ended <-chan struct{}) func() {
	stop := context.AfterFunc(ctx, func() {
		clock := l.c.renewer.clockOrReal()
		for {
			fired, cancel := clock.After(stuckLogEvery)
			select {
			case <-ended:
				cancel()
				return
			case <-fired:
			}
			if i := b.calling.Load(); i >= 0 {
				running := time.Since(time.Unix(0, b.callStart.Load()))
				l.log.stuck(b.msgs[i], running, context.Cause(ctx))
			}
		}
	})
	return func() { stop() }
}

// holdBack waits out a backoff of m's before its ack is sent, keeping the lease meanwhile:
// when the wait may outlast it, the lease is extended to cover the wait. A wait of a second or
// more is always covered so, because the client only believes it knows the lease (a 0.15
// broker ignores LeaseTime), and an extend never shortens a lease. A stop, or the end of the
// batch's ctx, cuts the wait short. It returns false when the lease was lost.
func (l *consumer) holdBack(ctx context.Context, b *leasedBatch, m *Message, wait time.Duration) bool {
	margin := min(5*time.Second, l.leaseTime/2)
	if m.LeaseID != "" && (wait >= time.Second || b.deadline.expired(l.now().Add(wait+margin))) {
		rctx, cancel := context.WithTimeout(l.ackCtx, renewRequestTimeout)
		sent := l.now()
		_, err := l.c.Renew(rctx, m.LeaseID, wait+margin)
		cancel()
		switch {
		case errors.Is(err, ErrLeaseExpired):
			if !b.lost.Swap(true) {
				l.leaseLost(b)
			}
			return false
		case err != nil:
			// The lease could not be extended: let go of the message now rather than lose
			// it to an expired lease; it comes back sooner than its backoff.
			l.log.renewFailed(m, err)
			return true
		}
		b.deadline.extend(sent.Add(wait + margin))
	}
	fired, cancel := l.c.renewer.clockOrReal().After(wait)
	defer cancel()
	select {
	case <-fired:
	case <-l.stopCtx.Done():
	case <-l.userCtx.Done():
	case <-l.closed:
	case <-ctx.Done():
	}
	return !b.lost.Load()
}

// releaseItem gives back msgs, unhandled, with one retry on the first: that ends the lease and
// redelivers them all at once (R71), with nothing acked above it (O18).
func releaseItem(msgs []*Message) []AckItem {
	if len(msgs) == 0 || !msgs[0].markSettled() {
		return nil
	}
	return []AckItem{{Message: msgs[0], Status: StatusRetry}}
}

// endsLease reports whether an ack status ends the lease and redelivers what is above it.
func endsLease(s Status) bool { return s == StatusFailed || s == StatusRetry }

// errorfLeaseLost is the error OnError receives for a batch whose lease was lost.
func errorfLeaseLost(m *Message) error {
	return fmt.Errorf("%w: lease %s of %s/%s was refused on renewal; the batch is delivered again",
		ErrLeaseLost, m.LeaseID, m.Queue, m.Partition)
}
