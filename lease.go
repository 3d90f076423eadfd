package queen

import (
	"context"
	"errors"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// A consume loop keeps the lease of each batch it handles: it believes the lease runs out at a
// deadline (the pop's time plus the lease), and with RenewLease the client's renewer extends
// it while the batch is handled. The renewer is also the one that extends a lease for an ack
// held back by a backoff: every extend a consume loop sends goes through it. A refused extend
// loses the batch's lease: nothing more of it is handled or acked.

// leaseDeadline is when the client believes a pop's lease runs out: the pop's time plus the
// lease, moved on by each successful extend. One is shared by the partitions of one pop, which
// share one lease.
type leaseDeadline struct {
	mu    sync.Mutex
	until time.Time
}

func newLeaseDeadline(until time.Time) *leaseDeadline { return &leaseDeadline{until: until} }

// extend moves the deadline to until, never back.
func (d *leaseDeadline) extend(until time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if until.After(d.until) {
		d.until = until
	}
}

// expired reports whether the lease has run out at now.
func (d *leaseDeadline) expired(now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return !now.Before(d.until)
}

// A batch's lease, as its loop keeps it.

// keepLease has the client's renewer extend b's lease while b is handled, and returns the func
// that stops it. A refused renewal cancels the handler's ctx with cause ErrLeaseLost.
func (l *consumer) keepLease(b *leasedBatch, cancel context.CancelCauseFunc) (stop func()) {
	first := b.msgs[0]
	return l.c.renewer.track(first.LeaseID, l.renewEvery, l.renewExtend, &leaseHolder{
		extended: b.deadline.extend,
		failed:   func(err error) { l.log.renewFailed(first, err) },
		lost: func() {
			l.loseLease(b)
			cancel(ErrLeaseLost)
		},
	})
}

// holdBack waits out a backoff of m's before its ack is sent, keeping the lease meanwhile:
// when the wait may outlast it, the renewer extends the lease to cover the wait. A wait of a
// second or more is always covered so, because the client only believes it knows the lease (a
// 0.15 broker ignores LeaseTime), and an extend never shortens a lease. A stop, or the end of
// the batch's ctx, cuts the wait short. It returns false when the lease was lost.
func (l *consumer) holdBack(ctx context.Context, b *leasedBatch, m *Message, wait time.Duration) bool {
	margin := min(5*time.Second, l.leaseTime/2)
	if m.LeaseID != "" && (wait >= time.Second || b.deadline.expired(l.now().Add(wait+margin))) {
		sent, err := l.c.renewer.extend(l.ackCtx, m.LeaseID, wait+margin)
		switch {
		case errors.Is(err, ErrLeaseExpired):
			l.loseLease(b)
			return false
		case err != nil:
			// The lease could not be extended: let go of the message now rather than lose
			// it to an expired lease; it comes back sooner than its backoff.
			l.log.renewFailed(m, err)
			return true
		}
		b.deadline.extend(sent.Add(wait + margin))
	}
	fired, cancel := l.c.clock.After(wait)
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

// loseLease marks b's lease lost, once, and tells the LeaseLost hooks: nothing more of b is
// handled or acked.
func (l *consumer) loseLease(b *leasedBatch) {
	if b.lost.Swap(true) || len(l.c.hooks.leaseLost) == 0 {
		return
	}
	first := b.msgs[0]
	l.c.hooks.onLeaseLost(LeaseLostEvent{LeaseID: first.LeaseID, Queue: first.Queue, Messages: b.msgs})
}

func (r *consumeLog) renewFailed(m *Message, err error) {
	r.logger.Warn("queen: lease renewal failed; retrying", "leaseId", m.LeaseID, "error", err)
	r.report(nil, err)
}

// The client's renewer.

// leaseRenewer extends the leases of in-flight batches for one client. One goroutine serves
// every lease of the client, whatever the number of consume loops and messages: it starts
// with the first tracked lease and ends when none is left (or at stop). New sets its client.
type leaseRenewer struct {
	client *Client
	// observe, when set, sees the outcome of every periodic renewal. Tests set it before use.
	observe func(leaseID string, err error)

	mu      sync.Mutex
	leases  map[string]*renewedLease
	wake    chan struct{} // buffered(1): the registry changed, or a renewal was answered
	running bool
	stopped bool
	done    sync.WaitGroup
}

// maxConcurrentRenewals bounds the extends one client has in flight. Renewals run side by
// side, so a slow answer for one lease does not delay the others past their expiry.
const maxConcurrentRenewals = 16

// renewRequestTimeout bounds one extend request.
const renewRequestTimeout = 10 * time.Second

// renewedLease is one leaseId under renewal, with the batches that hold it: the partitions of
// a multi-partition pop share one leaseId, and one extend covers them all.
type renewedLease struct {
	every   time.Duration
	extend  time.Duration
	due     time.Time
	sending bool // a renewal of this lease is in flight
	holders map[*leaseHolder]struct{}
}

// leaseHolder is one in-flight batch that needs its lease kept alive.
type leaseHolder struct {
	extended func(until time.Time) // a renewal succeeded: the lease lasts until then
	failed   func(err error)       // a renewal could not be sent; it is tried again soon
	lost     func()                // a renewal was refused: the lease is gone
}

func (r *leaseRenewer) clock() clock { return r.client.clock }

// extend sends one extend of leaseID by d, on ctx, and returns when the request left: the
// lease then lasts until that time plus d as the client counts it, never later than the
// broker's count.
func (r *leaseRenewer) extend(ctx context.Context, leaseID string, d time.Duration) (sent time.Time, err error) {
	sent = r.clock().Now()
	ctx, cancel := context.WithTimeout(ctx, renewRequestTimeout)
	defer cancel()
	_, err = r.client.Renew(ctx, leaseID, d)
	return sent, err
}

// track renews leaseID every `every` by extend for as long as h holds it, and returns the func
// that ends h's hold. A lease with several holders is renewed once per period.
func (r *leaseRenewer) track(leaseID string, every, extend time.Duration, h *leaseHolder) (untrack func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped || leaseID == "" {
		return func() {}
	}
	if r.leases == nil {
		r.leases = make(map[string]*renewedLease)
		r.wake = make(chan struct{}, 1)
	}
	l := r.leases[leaseID]
	if l == nil {
		l = &renewedLease{every: every, extend: extend, due: r.clock().Now().Add(every),
			holders: make(map[*leaseHolder]struct{})}
		r.leases[leaseID] = l
	}
	l.holders[h] = struct{}{}
	if !r.running {
		r.running = true
		r.done.Add(1)
		go r.loop()
	}
	r.signal()
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if cur := r.leases[leaseID]; cur != nil {
			delete(cur.holders, h)
			if len(cur.holders) == 0 {
				delete(r.leases, leaseID)
			}
		}
		r.signal()
	}
}

// signal wakes the loop, if any; r.mu is held.
func (r *leaseRenewer) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// stop ends the renewer's goroutine, if any, and waits for it; Close calls it. Leases tracked
// afterwards are not renewed.
func (r *leaseRenewer) stop() {
	r.mu.Lock()
	r.stopped = true
	r.signal()
	r.mu.Unlock()
	r.done.Wait()
}

// loop waits for the earliest due renewal and starts it, until no lease is left or stop.
// It waits for the renewals it started before it returns.
func (r *leaseRenewer) loop() {
	defer r.done.Done()
	var inFlight errgroup.Group // the renewals this loop started
	inFlight.SetLimit(maxConcurrentRenewals)
	defer func() { _ = inFlight.Wait() }()
	clock := r.clock()
	for {
		r.mu.Lock()
		if r.stopped || len(r.leases) == 0 {
			r.running = false
			r.mu.Unlock()
			return
		}
		next := time.Time{}
		for _, l := range r.leases {
			if !l.sending && (next.IsZero() || l.due.Before(next)) {
				next = l.due
			}
		}
		wake := r.wake
		r.mu.Unlock()

		if next.IsZero() {
			<-wake // every lease is being renewed: wait for an answer or a change
			continue
		}
		if wait := next.Sub(clock.Now()); wait > 0 {
			fired, cancel := clock.After(wait)
			select {
			case <-fired:
			case <-wake:
			}
			cancel()
			continue // the registry may have changed; look again
		}
		r.renewDue(&inFlight)
	}
}

// renewDue starts every renewal that is due, one request per leaseId, each in a goroutine of
// its own (up to maxConcurrentRenewals at once).
func (r *leaseRenewer) renewDue(inFlight *errgroup.Group) {
	now := r.clock().Now()
	type job struct {
		id string
		l  *renewedLease
	}
	var jobs []job
	r.mu.Lock()
	for id, l := range r.leases {
		if !l.sending && !l.due.After(now) {
			l.sending = true
			jobs = append(jobs, job{id, l})
		}
	}
	r.mu.Unlock()

	for _, j := range jobs {
		inFlight.Go(func() error {
			sent, err := r.extend(context.Background(), j.id, j.l.extend)
			r.settle(sent, j.id, j.l, err)
			if r.observe != nil {
				r.observe(j.id, err)
			}
			return nil
		})
	}
}

// settle applies the outcome of the renewal sent at `sent` to the lease's holders. The new
// expiry counts from the time the request left, never later than the broker's.
func (r *leaseRenewer) settle(sent time.Time, id string, l *renewedLease, err error) {
	r.mu.Lock()
	holders := make([]*leaseHolder, 0, len(l.holders))
	for h := range l.holders {
		holders = append(holders, h)
	}
	lost := errors.Is(err, ErrLeaseExpired)
	l.sending = false
	r.signal()
	switch {
	case err == nil:
		l.due = sent.Add(l.every)
	case lost:
		if r.leases[id] == l {
			delete(r.leases, id)
		}
	default:
		// The broker was not reached: try again soon, well before the lease runs out.
		l.due = sent.Add(renewRetryBackoff(l.every).wait(1))
	}
	r.mu.Unlock()

	for _, h := range holders {
		switch {
		case err == nil:
			h.extended(sent.Add(l.extend))
		case lost:
			h.lost()
		default:
			h.failed(err)
		}
	}
}
