package queen

import (
	"context"
	"sync/atomic"
	"time"
)

// leasedBatch is the messages one pop leased in one partition: handled by one goroutine, in
// offset order, and acked with one request.
type leasedBatch struct {
	msgs     []*Message
	deadline *leaseDeadline // shared by the partitions of the pop
	lost     atomic.Bool    // a renewal was refused: nothing more is handled or acked
}

// start runs b on one of the goroutine tokens taken for it.
func (l *consumer) start(b *leasedBatch) {
	l.idle.started()
	l.workers.Go(func() error {
		defer func() {
			l.held.Add(-int64(len(b.msgs)))
			l.idle.ended()
			l.giveBack(1)
			l.signalBudget()
		}()
		l.handle(b)
		return nil
	})
}

// handle calls the handler on b's messages and sends their acks, unless the lease was lost.
func (l *consumer) handle(b *leasedBatch) {
	ctx, cancel := context.WithCancelCause(l.handlerCtx)
	defer cancel(nil)
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

	var items []AckItem
	var above []*Message
	if l.h.each != nil {
		items, above = l.handleEach(ctx, b)
	} else {
		items, above = l.handleAll(ctx, b)
	}
	if b.lost.Load() {
		l.log.leaseLost(first)
		return // the broker has taken the batch back; an ack would be refused (R117)
	}
	results := l.send(items)
	if len(above) > 0 && filedWithLeaseHeld(items, results) {
		l.release(above)
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

// handleEach calls the handler once per message and returns the acks to send, and the
// messages above a failed one, which were not handled.
func (l *consumer) handleEach(ctx context.Context, b *leasedBatch) (items []AckItem, above []*Message) {
	for i, m := range b.msgs {
		if b.lost.Load() {
			return nil, nil
		}
		if !l.mayStart(b, m) || l.reserve(1) == 0 {
			return append(items, releaseItem(b.msgs[i:])...), nil
		}
		took, err := l.call(ctx, b.msgs[i:i+1], func(ctx context.Context) error { return l.h.each(ctx, m) })
		if b.lost.Load() {
			l.handled(m, "", context.Cause(ctx), took)
			return nil, nil
		}
		if err != nil {
			l.log.handlerFailed(m, err)
		} else if !l.autoAck {
			l.handled(m, "", nil, took)
			continue // the handler settles its messages itself
		}
		status, text := outcome(err)
		if !m.markSettled() {
			l.handled(m, "", err, took)
			continue // the handler settled it already
		}
		l.handled(m, status, err, took)
		items = append(items, AckItem{Message: m, Status: status, Error: text})
		if endsLease(status) {
			return items, b.msgs[i+1:] // they come back with this one; ack none of them (O18)
		}
		if status == StatusDLQ && i+1 < len(b.msgs) {
			// File it before the next message is handled: a completed the next handler sends
			// itself would move the cursor past it first (R67), and a late dlq changes nothing
			// (R68), leaving the message neither done nor filed.
			if l.send(items) == nil {
				return nil, nil // not sent: hand out nothing more; the lease brings them back
			}
			items = nil
		}
	}
	return items, nil
}

// handleAll hands the batch to the handler in one call and returns the acks to send, and the
// messages above a failed one.
func (l *consumer) handleAll(ctx context.Context, b *leasedBatch) (items []AckItem, above []*Message) {
	first := b.msgs[0]
	if !l.mayStart(b, first) {
		return releaseItem(b.msgs), nil
	}
	n := l.reserve(len(b.msgs))
	if n == 0 {
		return releaseItem(b.msgs), nil
	}
	take := b.msgs[:n:n]
	took, err := l.call(ctx, take, func(ctx context.Context) error { return l.h.batch(ctx, take) })
	if b.lost.Load() {
		for _, m := range take {
			l.handled(m, "", context.Cause(ctx), took)
		}
		return nil, nil
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
		status, text := outcome(err)
		for _, m := range take {
			if m.settled.Load() {
				l.handled(m, "", err, took)
			} else {
				l.handled(m, status, err, took)
			}
		}
		for i, m := range take {
			if !m.markSettled() {
				continue
			}
			items = append(items, AckItem{Message: m, Status: status, Error: text})
			if endsLease(status) {
				return items, b.msgs[i+1:] // the rest of the batch comes back with it (O18)
			}
		}
	}
	if n < len(b.msgs) {
		items = append(items, releaseItem(b.msgs[n:])...) // beyond Limit
	}
	return items, nil
}

// mayStart reports whether m may be handed to the handler: the loop is not stopping and m's
// lease has not run out.
func (l *consumer) mayStart(b *leasedBatch, m *Message) bool {
	if l.stopping() {
		return false
	}
	if b.deadline.expired(l.c.renewer.now()) {
		l.log.leaseRanOut(m)
		return false
	}
	return true
}

// call runs the handler inside the middleware, measuring it, and turns a panic into a
// *PanicError. It is the one place where a handler is invoked.
func (l *consumer) call(ctx context.Context, msgs []*Message, h func(context.Context) error) (took time.Duration, err error) {
	started := time.Now()
	defer func() {
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
