package queen

import (
	"context"
	"errors"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// leaseRenewer extends the leases of in-flight batches for one client. One goroutine serves
// every lease of the client, whatever the number of consume loops and messages: it starts
// with the first tracked lease and ends when none is left (or at stop). The zero value is
// ready.
type leaseRenewer struct {
	// clock tells time and makes timers; nil means the real clock. Tests set it before use.
	clock renewClock
	// observe, when set, sees the outcome of every renewal. Tests set it before use.
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

// renewClock is the renewer's view of time: the real clock, or a test's.
type renewClock interface {
	Now() time.Time
	// After returns a channel that receives once d has passed, and a func that stops it.
	After(d time.Duration) (<-chan time.Time, func())
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) After(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }
}

// renewedLease is one leaseId under renewal, with the batches that hold it: the partitions of
// a multi-partition pop share one leaseId (R32), and one extend covers them all (R62).
type renewedLease struct {
	client  *Client
	every   time.Duration
	extend  time.Duration
	due     time.Time
	sending bool // a renewal of this lease is in flight
	holders map[*leaseHolder]struct{}
}

// leaseHolder is one in-flight batch that needs its lease kept alive.
type leaseHolder struct {
	extended func(until time.Time) // a renewal succeeded: the lease lasts until then
	lost     func()                // a renewal was refused: the lease is gone
	failed   func(err error)       // a renewal could not be sent; it is tried again soon
}

// renewRequestTimeout bounds one extend request.
const renewRequestTimeout = 10 * time.Second

// now is the renewer's current time.
func (r *leaseRenewer) now() time.Time { return r.clockOrReal().Now() }

func (r *leaseRenewer) clockOrReal() renewClock {
	if r.clock == nil {
		return realClock{}
	}
	return r.clock
}

// track renews leaseID every `every` by extend for as long as h holds it, and returns the func
// that ends h's hold. A lease with several holders is renewed once per period.
func (r *leaseRenewer) track(c *Client, leaseID string, every, extend time.Duration, h *leaseHolder) (untrack func()) {
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
		l = &renewedLease{client: c, every: every, extend: extend,
			due: r.clockOrReal().Now().Add(every), holders: make(map[*leaseHolder]struct{})}
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
	clock := r.clockOrReal()
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
		r.renewDue(clock, &inFlight)
	}
}

// renewDue starts every renewal that is due, one request per leaseId, each in a goroutine of
// its own (up to maxConcurrentRenewals at once).
func (r *leaseRenewer) renewDue(clock renewClock, inFlight *errgroup.Group) {
	now := clock.Now()
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
			sent := clock.Now()
			ctx, cancel := context.WithTimeout(context.Background(), renewRequestTimeout)
			_, err := j.l.client.Renew(ctx, j.id, j.l.extend)
			cancel()
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
	now := sent
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
		l.due = now.Add(l.every)
	case lost:
		if r.leases[id] == l {
			delete(r.leases, id)
		}
	default:
		// The broker was not reached: try again soon, well before the lease runs out.
		l.due = now.Add(min(l.every/4+time.Millisecond, time.Second))
	}
	r.mu.Unlock()

	for _, h := range holders {
		switch {
		case err == nil:
			h.extended(now.Add(l.extend))
		case lost:
			h.lost()
		default:
			h.failed(err)
		}
	}
}
