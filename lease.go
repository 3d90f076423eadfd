package queen

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// A consume loop keeps the lease of each batch it handles: it believes the lease runs out at a
// deadline (when the pop's lease began, plus the lease), and, with renewal on (the default), the
// client's renewer extends it while the batch is handled. The renewer is also the one that
// extends a lease for an ack held back by a backoff: every extend a consume loop sends goes
// through it. A refused extend loses the batch's lease: nothing more of it is handled or acked.
//
// A pop's answer does not say how long its lease is: LeaseTime when the loop set it (a 0.15
// broker ignores it), else the queue's lease. The loop starts from a guess and learns the lease
// from the first extend that answers with an expiry the extend itself cannot explain: that
// expiry is on the broker's clock, and the pop answer's Date tells how that clock stands to the
// client's, to within its second of precision, which the loop counts against itself.

// Lease defaults.
const (
	// defaultRenewExtend is how far a renewal extends a lease when LeaseTime is not set.
	defaultRenewExtend = 60 * time.Second
	// unknownLeaseRenewal is when a batch's lease is first renewed while the loop has not yet
	// learned the lease: soon enough for any lease of twice that or more.
	unknownLeaseRenewal = 10 * time.Second
	// maxLearnedLease bounds the lease the loop believes it learned: beyond it, the answer is
	// taken for a clock the loop cannot read, and the lease stays a guess.
	maxLearnedLease = time.Hour
	// longHandlerEvery is how long a handler call runs before it is logged as long-running,
	// and how often again after that.
	longHandlerEvery = 5 * time.Minute
)

// leaseDeadline is when the client believes a pop's lease runs out: when it began plus the
// lease, moved on by each successful extend. One is shared by the partitions of one
// pop, which share one lease. It also keeps what the pop's answer said of the broker's clock,
// to read the broker's expiry times with.
type leaseDeadline struct {
	mu    sync.Mutex
	until time.Time

	popSent     time.Time // the client's time when the pop left
	popDateText string    // the answer's Date, on the broker's clock, as sent; empty when unknown
	newest      time.Time // the newest createdAt the pop brought, on the broker's clock
}

// extend moves the deadline to until, never back.
func (d *leaseDeadline) extend(until time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if until.After(d.until) {
		d.until = until
	}
}

// get is the deadline.
func (d *leaseDeadline) get() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.until
}

// expired reports whether the lease has run out at now.
func (d *leaseDeadline) expired(now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return !now.Before(d.until)
}

// onClientClock turns a time on the broker's clock into a time on the client's that is never
// later: the broker's clock stood at most a second past the pop answer's Date when the pop
// was answered, and the pop left before that. ok is false when the answer said nothing of the
// broker's clock, or contradicts itself (the pop brought a message created after its Date).
func (d *leaseDeadline) onClientClock(t time.Time) (time.Time, bool) {
	popDate := parseDate(d.popDateText)
	if popDate.IsZero() || t.IsZero() || d.newest.After(popDate.Add(time.Second)) {
		return time.Time{}, false
	}
	since := t.Sub(popDate) - time.Second
	if since <= 0 || since > maxLearnedLease {
		return time.Time{}, false
	}
	return d.popSent.Add(since), true
}

// leaseGuess is the lease a loop believes its pops get: LeaseTime, else what it learned from an
// extend's answer, else the default.
type leaseGuess struct {
	mu    sync.Mutex
	d     time.Duration
	known bool
}

func (g *leaseGuess) get() (d time.Duration, known bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.d, g.known
}

// learn records the lease the broker gives, unless LeaseTime set it.
func (g *leaseGuess) learn(d time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.known || d > g.d {
		g.d, g.known = d, true
	}
}

// A batch's lease, as its loop keeps it.

// keepLease has the client's renewer extend b's lease while b is handled, until b.lease ends.
// A refused renewal cancels b's handler ctx (b.cancel) with cause ErrLeaseLost.
func (l *consumer) keepLease(b *leasedBatch) {
	b.keeper = batchLease{l: l, b: b}
	b.lease = l.c.renewer.track(b.msgs[0].LeaseID, renewPlan{
		every: l.renewEvery, extend: l.renewExtend, expires: b.deadline.get(), first: l.firstRenewal(b),
	}, &b.keeper)
}

// batchLease is a batch of a loop holding its lease while it is handled.
type batchLease struct {
	l *consumer
	b *leasedBatch
}

func (h *batchLease) renewed(sent, expiresAt time.Time) time.Time {
	return h.l.extended(h.b, sent, expiresAt)
}

func (h *batchLease) renewFailed(err error) { h.l.log.renewFailed(h.b.msgs[0], err) }

func (h *batchLease) leaseLost() {
	h.l.loseLease(h.b)
	h.b.cancel(ErrLeaseLost)
}

// firstRenewal is how long after now b's lease is first extended: RenewLease's every when set,
// else half of what is left of the lease, and no later than unknownLeaseRenewal while the loop
// has not learned the lease.
func (l *consumer) firstRenewal(b *leasedBatch) time.Duration {
	if l.renewEvery > 0 {
		return l.renewEvery
	}
	wait := b.deadline.get().Sub(l.now()) / 2
	if _, known := l.lease.get(); !known {
		wait = min(wait, unknownLeaseRenewal)
	}
	return max(wait, 0)
}

// extended records a renewal of b's lease sent at sent, which the broker answered with the
// lease's new expiry (on its clock; zero when not said), and returns when the lease now runs
// out as the client counts it. An expiry the extend cannot explain is the queue's lease,
// which the loop learns.
func (l *consumer) extended(b *leasedBatch, sent, expiresAt time.Time) time.Time {
	b.deadline.extend(sent.Add(l.renewExtend))
	if until, ok := b.deadline.onClientClock(expiresAt); ok {
		b.deadline.extend(until)
		if lease := until.Sub(b.deadline.popSent); lease > sent.Sub(b.deadline.popSent)+l.renewExtend+time.Second {
			l.lease.learn(lease)
		}
	}
	return b.deadline.get()
}

// holdBack waits out a backoff of m's before its ack is sent, keeping the lease meanwhile:
// when the wait may outlast it, the renewer extends the lease to cover the wait. A wait of a
// second or more is always covered so, because the client only believes it knows the lease (a
// 0.15 broker ignores LeaseTime), and an extend never shortens a lease. A stop, or the end of
// the batch's ctx, cuts the wait short. It returns false when the lease was lost.
func (l *consumer) holdBack(ctx context.Context, b *leasedBatch, m *Message, wait time.Duration) bool {
	lease, _ := l.lease.get()
	margin := min(5*time.Second, lease/2)
	if m.LeaseID != "" && (wait >= time.Second || b.deadline.expired(l.now().Add(wait+margin))) {
		sent, _, err := l.c.renewer.extend(l.ackCtx, m.LeaseID, wait+margin)
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
	r.onError(nil, err)
}

// The client's renewer.

// leaseRenewer extends the leases of in-flight batches for one client. It keeps the leases in
// order of their next renewal and arms one timer, on the client's clock, for the soonest: no
// goroutine waits while no renewal is due, so a batch that starts and ends between two
// renewals costs the registry an entry and a timer, whatever the number of consume loops and
// messages. When renewals are due it sends each in a goroutine of its own, as many at once as
// are due: however many leases the client holds and however slow the broker answers, no
// renewal waits for another. New sets its client.
type leaseRenewer struct {
	client *Client
	// observe, when set, sees the outcome of every periodic renewal. Tests set it before use.
	observe func(leaseID string, err error)

	mu      sync.Mutex
	leases  map[string]*renewedLease
	due     renewalQueue // the leases not being renewed, soonest due first
	ctx     context.Context
	cancel  context.CancelFunc // ends the renewals in flight, at stop
	stopped bool
	// The armed wake-up, if any: it fires at wakeAt, and disarm stops it. wakeGen tells a
	// wake-up that fired from one armed after it.
	disarm  func()
	wakeAt  time.Time
	wakeGen uint64
	done    sync.WaitGroup // the renewals in flight
}

// renewRequestTimeout bounds one extend request.
const renewRequestTimeout = 10 * time.Second

// renewPlan says how one lease is renewed.
type renewPlan struct {
	every   time.Duration // the period; 0: halfway to the lease's expiry each time
	extend  time.Duration // how far each renewal extends it
	expires time.Time     // when the lease runs out, as the client counts it
	first   time.Duration // how long after now the first renewal goes
}

// renewedLease is one leaseId under renewal, with the batches that hold it: the partitions of
// a multi-partition pop share one leaseId, and one extend covers them all.
type renewedLease struct {
	id      string
	every   time.Duration
	extend  time.Duration
	expires time.Time
	due     time.Time
	index   int // in the renewer's queue; -1 while a renewal is in flight
	holders []leaseKeeper
	first   [1]leaseKeeper // the holders' first room: most leases have one
}

// leaseKeeper is one in-flight batch that needs its lease kept alive, told of every renewal.
type leaseKeeper interface {
	// renewed is told of a renewal sent at sent that succeeded, with the expiry the broker
	// answered (zero when not said), and returns when the lease now runs out.
	renewed(sent, expiresAt time.Time) time.Time
	renewFailed(err error) // a renewal could not be sent; it is tried again soon
	leaseLost()            // a renewal was refused: the lease is gone
}

func (r *leaseRenewer) clock() clock { return r.client.clock }

// extend sends one extend of leaseID by d, on ctx, and returns when the request left and the
// expiry the broker answered: the lease then lasts until that time plus d as the client
// counts it, never later than the broker's count.
func (r *leaseRenewer) extend(ctx context.Context, leaseID string, d time.Duration) (sent, expiresAt time.Time, err error) {
	sent = r.clock().Now()
	ctx, cancel := context.WithTimeout(ctx, renewRequestTimeout)
	defer cancel()
	expiresAt, err = r.client.Renew(ctx, leaseID, d)
	return sent, expiresAt, err
}

// leaseHold is one holder's hold on a lease under renewal; its end ends it. The zero value
// holds nothing.
type leaseHold struct {
	r      *leaseRenewer
	lease  *renewedLease
	holder leaseKeeper
}

// track renews leaseID as plan says for as long as h holds it, and returns h's hold. A lease
// with several holders is renewed once per period.
func (r *leaseRenewer) track(leaseID string, plan renewPlan, h leaseKeeper) leaseHold {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped || leaseID == "" {
		return leaseHold{}
	}
	if r.leases == nil {
		r.leases = make(map[string]*renewedLease)
		r.ctx, r.cancel = context.WithCancel(context.Background())
	}
	l := r.leases[leaseID]
	if l == nil {
		l = &renewedLease{id: leaseID, every: plan.every, extend: plan.extend, expires: plan.expires,
			due: r.clock().Now().Add(plan.first)}
		l.holders = l.first[:0]
		r.leases[leaseID] = l
		heap.Push(&r.due, l)
		r.scheduleLocked()
	}
	l.holders = append(l.holders, h)
	return leaseHold{r: r, lease: l, holder: h}
}

// end ends the hold: a lease nobody holds any more is no longer renewed.
func (h leaseHold) end() {
	if h.r == nil {
		return
	}
	r, l := h.r, h.lease
	r.mu.Lock()
	defer r.mu.Unlock()
	if cur := r.leases[l.id]; cur == l {
		if i := slices.Index(l.holders, h.holder); i >= 0 {
			l.holders = slices.Delete(l.holders, i, i+1)
		}
		if len(l.holders) == 0 {
			delete(r.leases, l.id)
			if l.index >= 0 {
				heap.Remove(&r.due, l.index)
			}
		}
	}
	// A wake-up left armed with nothing due does nothing when it fires; the next lease
	// tracked, due later, keeps it rather than arming one of its own.
}

// scheduleLocked starts every renewal that is due and arms the wake-up for the next one, unless
// one armed before fires no later; r.mu is held.
func (r *leaseRenewer) scheduleLocked() {
	if r.stopped {
		return
	}
	now := r.clock().Now()
	r.renewDueLocked(now)
	if len(r.due) == 0 {
		r.disarmLocked()
		return
	}
	next := r.due[0].due
	if r.disarm != nil && !r.wakeAt.After(next) {
		return // the wake-up armed fires in time
	}
	r.disarmLocked()
	r.wakeGen++
	gen := r.wakeGen
	r.wakeAt = next
	r.disarm = r.clock().AfterFunc(next.Sub(now), func() { r.woke(gen) })
}

// disarmLocked stops the armed wake-up, if any; r.mu is held.
func (r *leaseRenewer) disarmLocked() {
	if r.disarm != nil {
		r.disarm()
		r.disarm = nil
	}
}

// woke is the wake-up armed as number gen: renewals may be due.
func (r *leaseRenewer) woke(gen uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if gen == r.wakeGen {
		r.disarm = nil // it fired: no longer armed
	}
	r.scheduleLocked()
}

// stop ends the renewals in flight and waits for them; Close calls it. Leases tracked
// afterwards are not renewed.
func (r *leaseRenewer) stop() {
	r.mu.Lock()
	r.stopped = true
	if r.cancel != nil {
		r.cancel()
	}
	r.disarmLocked()
	r.mu.Unlock()
	r.done.Wait()
}

// renewDueLocked starts every renewal due at now, one request per leaseId, each in a goroutine
// of its own; r.mu is held.
func (r *leaseRenewer) renewDueLocked(now time.Time) {
	for len(r.due) > 0 && !r.due[0].due.After(now) {
		l := heap.Pop(&r.due).(*renewedLease)
		if !now.Before(l.expires) {
			r.client.logger.Warn("queen: lease renewal sent after the lease ran out; the broker may have handed the messages to another consumer",
				"leaseId", l.id, "late", now.Sub(l.expires).Round(time.Millisecond))
		}
		ctx := r.ctx
		r.done.Go(func() {
			sent, expiresAt, err := r.extend(ctx, l.id, l.extend)
			r.settle(sent, expiresAt, l, err)
			if r.observe != nil {
				r.observe(l.id, err)
			}
		})
	}
}

// settle applies the outcome of the renewal sent at sent to the lease's holders, and plans the
// next one: halfway to the lease's new expiry (or after its period), or soon again when the
// broker was not reached.
func (r *leaseRenewer) settle(sent, expiresAt time.Time, l *renewedLease, err error) {
	lost := errors.Is(err, ErrLeaseExpired)
	r.mu.Lock()
	holders := slices.Clone(l.holders)
	r.mu.Unlock()

	expires := l.expires
	for _, h := range holders {
		switch {
		case err == nil:
			if until := h.renewed(sent, expiresAt); until.After(expires) {
				expires = until
			}
		case lost:
			h.leaseLost()
		default:
			h.renewFailed(err)
		}
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.leases[l.id] != l {
		return // untracked meanwhile
	}
	switch {
	case lost:
		delete(r.leases, l.id)
		return
	case err == nil:
		l.expires = expires
		l.due = sent.Add(l.period(sent))
	default:
		// The broker was not reached: try again soon, well before the lease runs out.
		l.due = sent.Add(renewRetryBackoff(l.period(sent)).wait(1))
	}
	heap.Push(&r.due, l)
	r.scheduleLocked()
}

// period is how long after at the lease is renewed next: its every, else half of what is
// left of it.
func (l *renewedLease) period(at time.Time) time.Duration {
	if l.every > 0 {
		return l.every
	}
	return max(l.expires.Sub(at)/2, time.Millisecond)
}

// renewalQueue orders leases by their next renewal (container/heap).
type renewalQueue []*renewedLease

func (q renewalQueue) Len() int           { return len(q) }
func (q renewalQueue) Less(i, j int) bool { return q[i].due.Before(q[j].due) }
func (q renewalQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}

func (q *renewalQueue) Push(x any) {
	l := x.(*renewedLease)
	l.index = len(*q)
	*q = append(*q, l)
}

func (q *renewalQueue) Pop() any {
	old := *q
	l := old[len(old)-1]
	old[len(old)-1] = nil
	l.index = -1
	*q = old[:len(old)-1]
	return l
}

// leaseLost reports a batch whose lease a renewal found gone: nothing of it is acked.
func (r *consumeLog) leaseLost(m *Message) {
	r.logger.Warn("queen: lease lost; the batch was not acked and will be delivered again",
		append(m.logAttrs(), "leaseId", m.LeaseID)...)
	r.onError(m, errorfLeaseLost(m))
}

// errorfLeaseLost is the error OnError receives for a batch whose lease was lost.
func errorfLeaseLost(m *Message) error {
	return fmt.Errorf("%w: lease %s of %s/%s was refused on renewal; the batch is delivered again",
		ErrLeaseLost, m.LeaseID, m.Queue, m.Partition)
}
