package queen

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Settling: what each handler call returned becomes the acks of its messages, and the batch's
// acks go out: one request at the end of the batch, in offset order, with a progress ack
// before that where AckEvery or a dead letter asks for one. A failed or retried message ends
// the lease of the messages above it, which come back with it unacked; its own ack waits out
// the message's backoff first. Nothing of a batch whose lease was lost is acked.
//
// The backoff holds the lease rather than nacking at once and waiting when the message comes
// back: that keeps the message, and the rest of its partition, away from every other consumer
// for the wait (a redelivered message could be taken by another loop at once), sends nothing
// while it waits, and lets a stop end the wait by acking at once with the outcome it was
// holding back, so that no budget is spent for the stop.

// settlement is one batch's acks while it is handled.
type settlement struct {
	items    []AckItem     // decided and not sent yet, in offset order
	above    []*Message    // not handled: above a failed or retried message, they come back with it
	hold     time.Duration // how long the last item, a failed or retry, waits before it is sent
	unhanded []*Message    // never handed to the handler (a stop, an expired lease, Limit): released
	lastAck  time.Time     // when the last progress ack went, for AckEvery's d
	failure  bool          // the last item, a failed or a retry, is the ack of a handler's failure
	partial  bool          // some message was not acked completed by the loop
	room     [1]AckItem    // the first item's, which spares a batch of one message an allocation
}

// settleCall decides the acks of msgs, which one handler call (from b's message i on) returned
// err for, and sends a progress ack when one is due. It reports whether the batch goes on.
func (l *consumer) settleCall(ctx context.Context, b *leasedBatch, s *settlement, i int, msgs []*Message, err error, took time.Duration) bool {
	if b.lost.Load() {
		for _, m := range msgs {
			l.handled(m, "", context.Cause(ctx), took)
		}
		s.items = nil
		return false
	}
	if err != nil {
		l.log.handlerFailed(msgs[0], err)
	} else if !l.autoAck {
		for _, m := range msgs {
			l.handled(m, "", nil, took)
		}
		s.partial = true
		return true // the handler settles its messages itself
	}
	decided := false
	for j, m := range msgs {
		if !m.markSettled() {
			l.handled(m, "", err, took)
			s.partial = true
			continue // the handler settled it already
		}
		item, hold, failure := l.decide(ctx, m, err, took)
		s.items = append(s.items, item)
		decided = true
		if item.Status != StatusCompleted {
			s.partial = true
		}
		if endsLease(item.Status) {
			s.failure = failure
			for _, rest := range msgs[j+1:] {
				status := item.Status
				if rest.settled.Load() {
					status = ""
				}
				l.handled(rest, status, err, took)
			}
			// The messages above come back with this one: ack none of them.
			s.above, s.hold = b.msgs[i+j+1:], hold
			return false
		}
	}
	if l.h.each == nil || !decided || i+len(msgs) == len(b.msgs) || !l.progressDue(s) {
		return true
	}
	// A progress ack: what is done so far, in offset order; the lease stays on the rest.
	if l.send(s.items, b.deadline) == nil {
		s.items = nil
		return false // not sent: hand out nothing more; the lease brings them back
	}
	s.items = nil
	if l.ackEveryD > 0 {
		s.lastAck = l.now()
	}
	return true
}

// progressDue reports whether the acks decided so far go out before the next message is
// handled. A dead letter always does: a completed that the next handler sends itself would
// move the cursor past it first, and a late dead letter changes nothing, leaving the message
// neither done nor filed. AckEvery's n and d say when the others do.
func (l *consumer) progressDue(s *settlement) bool {
	switch {
	case s.items[len(s.items)-1].Status == StatusDLQ:
	case l.ackEveryN > 0 && len(s.items) >= l.ackEveryN:
	case l.ackEveryD > 0 && l.now().Sub(s.lastAck) >= l.ackEveryD:
	default:
		return false
	}
	return true
}

// decide turns a handler's return for m into m's ack, says how long to hold that ack back,
// and whether it is the ack of a failure. It is the one place where an outcome is decided: nil
// completes, Retry retries, DeadLetter files a dead letter, another error (or a panic) fails.
// An error from a handler whose ctx the stop cancelled is a retry, not a failure: the stop is
// not the message's fault. A failure is sent as retry while a 0.15 partition's counter would
// file the message for others' failures (see groupCounters). A failed or retried message
// waits out its backoff before its ack, unless the loop is stopping.
func (l *consumer) decide(ctx context.Context, m *Message, err error, took time.Duration) (AckItem, time.Duration, bool) {
	status, text := outcome(err)
	if err != nil && status != StatusDLQ && errors.Is(context.Cause(ctx), errStopped) {
		status = StatusRetry
	}
	failure := status == StatusFailed
	if failure && countsFailure(m) && l.counters.asRetry(m) {
		status = StatusRetry
	}
	l.handled(m, status, err, took)
	item := AckItem{Message: m, Status: status, Error: text}
	if !endsLease(status) {
		l.failures.forget(m)
		return item, 0, false
	}
	if l.stopping() {
		return item, 0, failure
	}
	return item, l.backoff(err, l.failures.add(m)), failure
}

// backoff is how long the ack of a message whose handler call was the nth unsuccessful one in
// a row is held back: RetryAfter's wait, else RetryBackoff's.
func (l *consumer) backoff(err error, n int) time.Duration {
	if d, ok := retryAfter(err); ok {
		return retryAfterBackoff(d).wait(1)
	}
	return l.retry.wait(n)
}

// failureCounts counts, per message, the unsuccessful handler calls (failures and retries) of
// one loop since the message last succeeded: the exponent of its backoff. The client counts
// them itself because a broker's deliveryAttempt counts deliveries (a message behind a failed
// one comes back with a higher attempt without having been handled) and a 0.15 broker sends
// none.
type failureCounts struct {
	mu sync.Mutex
	n  map[failureKey]int
}

type failureKey struct{ partitionID, transactionID string }

// maxCountedFailures bounds the messages counted at once; beyond it the counts start over.
const maxCountedFailures = 100_000

// add records one more unsuccessful call of m and returns how many there were in a row.
func (f *failureCounts) add(m *Message) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == nil || len(f.n) >= maxCountedFailures {
		f.n = make(map[failureKey]int)
	}
	k := failureKey{m.PartitionID, m.TransactionID}
	f.n[k]++
	return f.n[k]
}

// forget drops m's count: it succeeded or was filed.
func (f *failureCounts) forget(m *Message) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.n) > 0 {
		delete(f.n, failureKey{m.PartitionID, m.TransactionID})
	}
}

// settle sends the batch's acks once its handler calls are over, unless the lease was lost. A
// last ack held back by a backoff goes once the wait is over, after what was decided before it;
// the handler slot is free for other partitions meanwhile.
func (l *consumer) settle(ctx context.Context, b *leasedBatch, s *settlement) {
	items := append(s.items, releaseItem(s.unhanded)...)
	first := b.msgs[0]
	if b.lost.Load() {
		l.log.leaseLost(first)
		return // the broker has taken the batch back; an ack would be refused
	}
	if s.hold > 0 {
		if len(items) > 1 {
			if l.send(items[:len(items)-1], b.deadline) == nil {
				return // not answered while the lease held: the broker redelivers them all
			}
			items = items[len(items)-1:]
		}
		l.freeSlot(b)
		if s.failure && countsFailure(items[0].Message) && !l.stopping() {
			l.awaitReset(b, l.now().Add(s.hold))
		}
		if !l.holdBack(ctx, b, items[0].Message, s.hold) {
			l.resets.remove(b)
			l.log.leaseLost(first)
			return
		}
	}
	var results []AckResult
	if s.failure {
		results = l.sendFailure(b, items)
	} else {
		results = l.send(items, b.deadline)
	}
	if !s.partial && len(s.unhanded) == 0 && len(results) > 0 && countsFailure(first) &&
		!slices.ContainsFunc(results, func(r AckResult) bool { return !r.Success }) {
		l.counters.reset(first.Partition) // a completed finished the whole leased batch
	}
	if len(s.above) > 0 && filedWithLeaseHeld(items, results) {
		l.send(releaseItem(s.above), b.deadline)
	}
}

// filedWithLeaseHeld reports whether the batch's last ack was a failed that spent the last
// retry: the broker filed the message and moved the cursor to it, so the lease still holds
// the messages above it, which the loop did not handle. With retries left the failed ended
// the lease itself.
func filedWithLeaseHeld(items []AckItem, results []AckResult) bool {
	if len(items) == 0 || len(results) != len(items) {
		return false
	}
	last, res := items[len(items)-1], results[len(results)-1]
	return last.Status == StatusFailed && res.Success && res.DLQ && !res.LeaseReleased
}

// endsLease reports whether an ack status ends the lease and redelivers what is above it.
func endsLease(s Status) bool { return s == StatusFailed || s == StatusRetry }

// release gives the leased messages of several partitions back with retry at once: one item on
// the first message of each, which ends the lease and redelivers the rest with it.
func (l *consumer) release(partitions [][]*Message, deadline *leaseDeadline) {
	var items []AckItem
	for _, msgs := range partitions {
		items = append(items, releaseItem(msgs)...)
	}
	l.send(items, deadline)
}

// releaseItem gives back one partition's msgs, unhandled, with one retry on the first: that
// ends the lease and redelivers them all at once, with nothing acked above it.
func releaseItem(msgs []*Message) []AckItem {
	if len(msgs) == 0 || !msgs[0].markSettled() {
		return nil
	}
	return []AckItem{{Message: msgs[0], Status: StatusRetry}}
}

// send sends one batch ack on the loop's own ctx and reports what failed. A request that gets
// no answer is sent again, after a growing jittered wait, for as long as the batch's lease
// (deadline) holds: once it has run out the broker redelivers the messages anyway. After the
// stop it is sent again only until ackStopGrace past the stop (or past this ack's first try,
// when that was later), and never once the loop's acks were cut (ShutdownTimeout plus
// ackStopGrace after the stop), so that Close ends in bounded time however
// the broker fails. It returns the results, or nil when no answer came.
func (l *consumer) send(items []AckItem, deadline *leaseDeadline) []AckResult {
	results, _ := l.sendAcks(items, deadline)
	return results
}

// sendAcks is send, also reporting whether the results are the broker's answer to these acks
// (false when no answer came, or when the first answer was lost and the results are a
// resend's, whose refusals may be the first request's doing).
func (l *consumer) sendAcks(items []AckItem, deadline *leaseDeadline) (results []AckResult, sure bool) {
	if len(items) == 0 {
		return nil, false
	}
	var waits *backoffWaits
	began := l.now()
	for {
		ctx, cancel := l.ackRequestCtx(began)
		results, err := l.c.ackBatch(ctx, items) // the loop marked them settled
		cancel()
		if results != nil {
			// Answered. With an error too, the first answer was lost and the resend's refusals
			// may be the first request's doing: the outcome is unknown, and asking again
			// cannot tell.
			if err != nil {
				l.log.ackOutcomeUnknown(items[0].Message, err)
				return results, false
			}
			for i, r := range results {
				if !r.Success {
					l.log.ackRefused(items[i], r.Error)
				}
			}
			return results, true
		}
		if waits == nil {
			waits = loopAckBackoff.waits()
		}
		wait := waits.next()
		if !ackRetryable(err) || deadline == nil || deadline.expired(l.now().Add(wait)) ||
			l.ackCtx.Err() != nil || l.pastStopGrace(began, wait) {
			for _, it := range items {
				it.Message.unsettle()
			}
			l.log.ackFailed(items[0].Message, err)
			return nil, false
		}
		l.log.ackRetrying(items[0].Message, err)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-l.ackCtx.Done():
			t.Stop()
		}
	}
}

// ackRequestCtx is the ctx of one request of an ack first tried at began: it ends after
// ackTimeout, once the loop's acks were cut, or, once the loop stops, at ackStopGrace past the
// stop (or past began, when that was later). An ack begun before the stop shares the loop's
// grace, which the stop's watch ends; only one begun after it needs a watch of its own.
func (l *consumer) ackRequestCtx(began time.Time) (context.Context, context.CancelFunc) {
	if !l.stopping() {
		return context.WithTimeout(l.ackGraceCtx, ackTimeout)
	}
	l.stoppedAt.CompareAndSwap(0, l.now().UnixNano())
	if !began.After(time.Unix(0, l.stoppedAt.Load())) {
		return context.WithTimeout(l.ackGraceCtx, ackTimeout)
	}
	ctx, cancel := context.WithTimeout(l.ackCtx, ackTimeout)
	t := time.AfterFunc(began.Add(ackStopGrace).Sub(l.now()), cancel)
	return ctx, func() {
		t.Stop()
		cancel()
	}
}

// pastStopGrace reports whether an ack first tried at began, sent again after wait, would go
// later than the stop allows.
func (l *consumer) pastStopGrace(began time.Time, wait time.Duration) bool {
	if !l.stopping() {
		return false
	}
	l.stoppedAt.CompareAndSwap(0, l.now().UnixNano())
	from := time.Unix(0, l.stoppedAt.Load())
	if began.After(from) {
		from = began
	}
	return l.now().Add(wait).After(from.Add(ackStopGrace))
}

// ackRetryable reports whether an ack that failed with err may be answered if sent again: not
// after Close, an invalid item or a refusal (a 4xx other than 408 and 429).
func ackRetryable(err error) bool {
	if errors.Is(err, ErrClosed) || errors.Is(err, ErrInvalidOption) {
		return false
	}
	var api *APIError
	if errors.As(err, &api) && api.StatusCode >= 400 && api.StatusCode < 500 {
		return api.Temporary() || api.StatusCode == http.StatusRequestTimeout
	}
	return true
}

// handled tells the Handled hooks the outcome of one message a loop handed to its handler.
func (l *consumer) handled(m *Message, outcome Status, err error, took time.Duration) {
	if len(l.c.hooks.handled) == 0 {
		return
	}
	l.c.hooks.onHandled(HandledEvent{Message: m, Outcome: outcome, Err: err, Duration: took,
		Panicked: err != nil && isPanic(err)})
}

func isPanic(err error) bool {
	var p *PanicError
	return errors.As(err, &p)
}

// consumeLog reports a consume loop's troubles to the client's logger and to OnError.
type consumeLog struct {
	logger  *slog.Logger
	onError func(m *Message, err error) // OnError's, or one that does nothing
}

func (r *consumeLog) handlerFailed(m *Message, err error) {
	var p *PanicError
	if !errors.As(err, &p) {
		r.logger.Debug("queen: consume handler failed", append(m.logAttrs(), "error", err)...)
	}
	r.onError(m, err)
}

// ackFailed reports an ack the loop gave up on: no answer while the lease held (or, after the
// stop, within its grace), or a refusal of the request.
func (r *consumeLog) ackFailed(m *Message, err error) {
	r.logger.Error("queen: consume ack given up; the messages will be delivered again once their lease has run out",
		append(m.logAttrs(), "error", err)...)
	r.onError(nil, err)
}

func (r *consumeLog) ackRefused(it AckItem, reason string) {
	err := &ackRefusedError{transactionID: it.Message.TransactionID, reason: reason}
	r.logger.Warn("queen: consume ack refused",
		append(it.Message.logAttrs(), "status", it.Status, "error", reason)...)
	r.onError(it.Message, err)
}

// ackOutcomeUnknown reports an ack whose answer was lost and whose resend was refused: the
// first request may have been applied.
func (r *consumeLog) ackOutcomeUnknown(m *Message, err error) {
	r.logger.Warn("queen: consume ack outcome unknown; the messages may be delivered again",
		append(m.logAttrs(), "error", err)...)
	r.onError(nil, err)
}

// ackRetrying reports an ack that got no answer and is sent again while the lease holds.
func (r *consumeLog) ackRetrying(m *Message, err error) {
	r.logger.Debug("queen: consume ack failed; sending it again while the lease holds",
		append(m.logAttrs(), "error", err)...)
	r.onError(nil, err)
}
