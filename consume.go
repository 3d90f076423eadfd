package queen

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"
)

// Consume long-polls the queue and calls h with the leased messages of one partition at a
// time, in offset order, acking them when h returns (see EachBuilder.Consume for the rules,
// which are the same with "the batch" in place of "the message"). When h returns nil every
// message it did not settle itself is completed; when it returns an error, the first message
// it did not settle is acked with the error's outcome (failed, retry) and the rest come back
// with it, except for DeadLetter(err), which files every message it did not settle. AckEvery
// is refused with ErrInvalidOption: a batch is acked when h returns.
func (b QueueBuilder) Consume(ctx context.Context, h BatchHandler) error {
	if h == nil {
		return invalidOption("handler", "nil", "Consume needs a handler")
	}
	return b.consume(ctx, batchHandling(h))
}

// Consume long-polls the queue and calls h once per message until ctx is done, Limit or
// IdleTimeout is reached, the Client is closed, or a fatal error occurs. Every graceful stop
// returns nil; a fatal error (an invalid option, 401 or 403, a 404 from a broker that lacks
// the route, another 4xx the broker gives a pop) is returned at once, and not logged as an
// error too. Transient errors (network, 5xx, 429) go to OnError and are retried with jittered
// backoff.
//
// Messages of one partition are handled one at a time in offset order; up to Concurrency
// partitions are handled at once, each by its own goroutine. Pops ask for work for the idle
// goroutines: while pops bring messages, as many are in flight as it takes to fill them (at most
// Concurrency), and once one comes back empty a single pop waits for more. A pop's batch bounds
// what it leases across all its partitions.
// The loop holds at most 2 × Batch × Concurrency leased messages at any time (with no Batch,
// the batch it asks for), those whose ack waits out a backoff included: at the bound it sends
// no pop until one is released. MaxInFlightBytes bounds their data as well. With autopilot on
// and no Batch or Partitions, a pop sends autopilot=true and leaves both to the broker;
// without autopilot it asks for one partition per idle goroutine. Partitions a pop brings
// beyond the idle goroutines wait for one. With Concurrency 1 the next pop leaves as soon as
// the handler returns, while the batch's acks are on their way, and their messages count
// against that bound until the acks are answered; it waits for their answer on a 0.15 broker,
// after a failure, and without long polls (Wait(false) or a zero Timeout).
//
// With AutoAck (the default) h's return decides the ack: nil completes, an error fails (its
// text is stored), Retry(err) retries, DeadLetter(err) dead-letters; a panic is recovered,
// logged with its stack, reported to OnError and acked failed as "panic: <value>". The acks of
// one partition's batch go out as one request, in offset order, except that a dead letter is
// sent before the next message is handled, so that an ack the handler sends itself cannot
// overtake it; after a failed or retry the loop stops handling that batch, and the later
// messages come back with it. With AutoAck(false), h settles messages itself; whatever it left
// unsettled is acked with its error's outcome when it returns an error or panics, and left
// alone when it returns nil (its lease then runs out and the message comes back, unless h
// settled it). A message is dead-lettered by its own failures only: with the queue's
// retryLimit n, a message that always fails is handed to h n+1 times, on a 0.15 broker too
// (whose retry counter is the partition's: there the loop pops a failed message alone next).
//
// A failed or retried message waits out its backoff (RetryBackoff, or RetryAfter's wait)
// before its ack is sent and it comes back; the loop keeps its lease meanwhile and the wait
// holds no handler goroutine. A handler that returns an error after the stop cancelled its
// ctx is acked retry, not failed. HandlerTimeout ends each call's ctx with cause
// ErrHandlerTimeout, and what h returns then is acked as usual. AckEvery acks the handled part
// of a batch as it goes. An ack that gets no answer is sent again until it is answered or the
// batch's lease has run out.
//
// When ctx is done (or the Client is closed, or Limit is reached) no more pops are sent;
// running handlers may finish within ShutdownTimeout (default 30s) with their ctx still live,
// after which it is cancelled; a handler still running then is logged at error level every
// 10s. Their acks are still sent, each for at most 5s more when the broker does not answer
// (given up at error level: those messages come back after their lease), so the loop's stop
// takes at most ShutdownTimeout plus 10s, handlers that return aside. Leased messages not yet
// handed to the handler are released with retry, so they come back at once. Consume returns
// once every goroutine it started has returned.
//
// Limit(n) counts messages whose handler returned, whatever the outcome (including a batch
// whose lease was lost); exactly n are handed to the handler, and any other leased message is
// released with retry. IdleTimeout(d) counts time in which no handler runs and the broker
// answers pops with nothing; time spent waiting out a broker outage does not count.
//
// Leases last as long as the handler: renewal is on by default (RenewLease(false, 0) turns it
// off), and one goroutine per Client extends the lease of every running batch, however many
// there are, halfway to its expiry each time: the expiry of LeaseTime when set, else of the
// queue's lease, which the loop learns from the broker. A refused renewal cancels the batch's
// handler ctx with cause ErrLeaseLost, and nothing of that batch is acked (the broker has taken
// it back). A handler call that has run 5 minutes is logged at warn level, and every 5 minutes
// more. The loop also tracks each lease's expiry: a message whose lease has run out before its
// turn is not handed to the handler but released with retry, and the batch sizes it asks for
// are capped so that a batch is expected to be handled in half a lease.
//
// A named group in mode new (the default) receives every message pushed after its first pop on
// this client was sent, whether that was a Pop or a Consume, on a 0.15 broker too; see Pop.
//
// Delivery is at least once: a message whose ack is lost, whose lease runs out, or whose
// handler is still running when the process dies is delivered again.
func (e EachBuilder) Consume(ctx context.Context, h Handler) error {
	if h == nil {
		return invalidOption("handler", "nil", "Consume needs a handler")
	}
	return e.b.consume(ctx, eachHandling(h))
}

// handling is how a consume loop calls the user's code: per message or per batch.
type handling struct {
	each  Handler
	batch BatchHandler
}

func eachHandling(h Handler) handling       { return handling{each: h} }
func batchHandling(h BatchHandler) handling { return handling{batch: h} }

// Consume defaults.
const (
	defaultShutdownTimeout = 30 * time.Second
	// ackTimeout bounds one ack request of the loop, sent on a ctx of its own.
	ackTimeout = 30 * time.Second
	// ackStopGrace is how long after the stop (or after its handler returned, when that was
	// later) an ack that gets no answer is still sent again: past it the loop gives it up, and
	// the broker delivers the messages again once their lease has run out.
	ackStopGrace = 5 * time.Second
	// RetryBackoff's and AckEvery's defaults.
	defaultRetryBackoffMin = 100 * time.Millisecond
	defaultRetryBackoffMax = 30 * time.Second
	defaultAckEvery        = time.Second
)

// errStopped is the cause of a handler ctx that the stop cancelled once ShutdownTimeout passed.
var errStopped = errors.New("queen: consume stopped and the shutdown timeout passed")

// consumer is one running Consume call.
type consumer struct {
	c   *Client
	b   QueueBuilder
	h   handling
	log *consumeLog

	middleware []Middleware // the client's, then the loop's: around every handler call

	path           string
	params         popParams // the pop parameters that never change
	concurrency    int
	autoAck        bool
	autopilot      bool       // the broker sizes batch and partitions
	lease          leaseGuess // the lease the loop believes its pops get
	renew          bool
	renewEvery     time.Duration // RenewLease's every; 0: halfway to the lease's expiry
	renewExtend    time.Duration
	handlerTimeout time.Duration // 0: none
	maxBytes       int64         // MaxInFlightBytes; 0: no byte bound
	limit          int64         // 0: none
	retry          backoffPolicy // RetryBackoff; from 0: no backoff for failures
	ackEveryN      int           // AckEvery; 0: off
	ackEveryD      time.Duration // AckEvery; 0: off
	failures       failureCounts

	slots       *semaphore.Weighted // the idle handler slots, Concurrency in all
	budgetFreed chan struct{}       // buffered(1): a batch ended, or a pop brought less than it might
	workers     errgroup.Group      // the fetch loop
	goroutines  *goroutinePool      // the pops sent alongside others, and every batch
	pace        handlingPace
	gate        popGate        // keeps the loop's pops away from a 0.15 partition's failed ack
	counters    *groupCounters // the client's knowledge of its 0.15 partitions' retry counters
	resets      pendingResets  // the failed acks on their way to a 0.15 broker
	running     runningBatches // the batches being handled, for the loop's watch
	shutdown    time.Duration

	userCtx        context.Context // Consume's ctx
	closed         <-chan struct{} // closed by Client.Close
	stopCtx        context.Context // done once the loop stops taking work
	stopNow        context.CancelFunc
	popCtx         context.Context // the pops' ctx: cancelled a little after the stop
	cancelPops     context.CancelFunc
	handlerCtx     context.Context // parent of every handler ctx; cancelled after ShutdownTimeout
	cancelHandlers context.CancelCauseFunc
	ackCtx         context.Context // not cancelled by the caller: acks survive the stop, for a while
	cutAcks        context.CancelFunc
	ackGraceCtx    context.Context // ackCtx, and ended ackStopGrace after the stop
	endAckGrace    context.CancelFunc
	stoppedAt      atomic.Int64 // when the stop began, on the client's clock, in Unix nanoseconds

	reserved   atomic.Int64 // messages handed to the handler (Limit)
	held       atomic.Int64 // leased messages not yet released: the in-flight bound and Limit
	handedHeld atomic.Int64 // held messages handed to the handler too, which Limit counts once
	heldBytes  atomic.Int64 // the data of the held messages (MaxInFlightBytes)

	idle     idleWatch
	pops     *fetchState // what the fetch loop knows of its pops, set before the first
	outage   *outage     // used only under the fetch state's lock, as these two
	sizing   popSizing   // whether the client sizes the pops
	newStart *groupStart // a "new" group's start, until the broker has stored it
}

func (b QueueBuilder) consume(ctx context.Context, h handling) error {
	if err := b.validate(forConsume); err != nil {
		return err
	}
	if h.batch != nil && b.ackEverySet {
		return invalidSetting("AckEvery", fmt.Sprintf("%d, %s", b.ackEveryN, b.ackEveryD),
			"AckEvery applies to the per-message form (Each); a batch handler's batch is acked when it returns")
	}
	if ctx.Err() != nil {
		return nil // stopped before it began
	}
	done, finish, err := b.client.startLoop()
	if err != nil {
		return err
	}
	defer finish()
	l := newConsumer(ctx, b, h)
	l.closed = done
	return l.run()
}

func newConsumer(ctx context.Context, b QueueBuilder, h handling) *consumer {
	l := &consumer{c: b.client, b: b, h: h, path: b.popPath(), params: b.popParams(forConsume),
		concurrency: 1, autoAck: true, autopilot: !b.discovery()}
	l.log = &consumeLog{logger: b.client.logger, onError: b.onError}
	if l.log.onError == nil {
		l.log.onError = func(*Message, error) {}
	}
	l.middleware = chainMiddleware(b.client.middleware, b.middleware)
	if b.concurrencySet {
		l.concurrency = b.concurrency
	}
	if b.autoAck != nil {
		l.autoAck = *b.autoAck
	}
	if b.autopilot != nil && !*b.autopilot {
		l.autopilot = false
	}
	l.lease.d = defaultLeaseTime
	l.renewExtend = defaultRenewExtend
	if b.leaseSet {
		l.lease.d, l.lease.known = b.leaseTime, true
		l.renewExtend = b.leaseTime
	}
	if b.limitSet {
		l.limit = int64(b.limit)
	}
	l.renew = !b.renewSet || b.renew
	l.renewEvery = b.renewEvery
	l.handlerTimeout = b.handlerTimeout
	l.maxBytes = b.maxInFlightBytes
	l.retry = handlerBackoff(defaultRetryBackoffMin, defaultRetryBackoffMax)
	if b.backoffSet {
		l.retry = handlerBackoff(b.retryMin, b.retryMax)
	}
	l.ackEveryD = defaultAckEvery
	if b.ackEverySet {
		l.ackEveryN, l.ackEveryD = b.ackEveryN, b.ackEveryD
	}
	l.shutdown = defaultShutdownTimeout
	if b.shutdownSet {
		l.shutdown = b.shutdownTimeout
	}

	l.slots = semaphore.NewWeighted(int64(l.concurrency))
	l.goroutines = newGoroutinePool(2 * l.concurrency)
	l.budgetFreed = make(chan struct{}, 1)
	l.userCtx = ctx
	l.stopCtx, l.stopNow = context.WithCancel(context.Background())
	l.popCtx, l.cancelPops = context.WithCancel(context.WithoutCancel(ctx))
	l.handlerCtx, l.cancelHandlers = context.WithCancelCause(context.WithoutCancel(ctx))
	l.ackCtx, l.cutAcks = context.WithCancel(context.WithoutCancel(ctx))
	l.ackGraceCtx, l.endAckGrace = context.WithCancel(l.ackCtx)
	l.idle = idleWatch{timeout: b.idleTimeout, enabled: b.idleSet, stop: l.stopNow}
	l.outage = newOutage()
	l.newStart = b.client.starts.of(b)
	l.counters = b.client.counters.of(b.queue, b.group)
	return l
}

// run polls until a stop, then waits for every goroutine it started.
func (l *consumer) run() error {
	finished := make(chan struct{})
	var watcher sync.WaitGroup
	watcher.Go(func() { l.watch(finished) })

	l.idle.arm()
	stopWatching := l.watchBatches()
	l.workers.Go(func() error {
		defer l.stopNow()
		return l.fetch()
	})
	err := l.workers.Wait()
	l.goroutines.wait()
	stopWatching()
	l.idle.disarm()
	close(finished)
	watcher.Wait()
	l.cancelPops()
	l.cancelHandlers(errStopped)
	l.cutAcks()
	l.endAckGrace()
	return err
}

// popStopGrace is how long pops in flight at a stop may still answer before they are
// cancelled. A pop that finds messages answers at once, and what it brings is released with
// retry; a pop still waiting after the grace is a long poll with nothing to lease, which the
// broker abandons, leasing nothing, when it is cancelled. Only a broker slower than the grace can have
// leased messages for a cancelled pop; they come back when their lease expires.
const popStopGrace = 200 * time.Millisecond

// watch turns ctx and Close into a stop, then gives pops in flight popStopGrace, running
// handlers the shutdown grace before cancelling them, and acks that get no answer until
// ackStopGrace after that, so that the stop, and Close, end in bounded time whatever the
// broker does.
func (l *consumer) watch(finished <-chan struct{}) {
	select {
	case <-l.userCtx.Done():
	case <-l.closed:
	case <-l.stopCtx.Done():
	case <-finished:
		return
	}
	l.stoppedAt.CompareAndSwap(0, l.now().UnixNano())
	l.stopNow()
	grace := time.NewTimer(time.Unix(0, l.stoppedAt.Load()).Add(ackStopGrace).Sub(l.now()))
	defer grace.Stop()
	pops := time.NewTimer(popStopGrace)
	defer pops.Stop()
	handlers := time.NewTimer(l.shutdown)
	defer handlers.Stop()
	acks := time.NewTimer(l.shutdown + ackStopGrace)
	defer acks.Stop()
	var stuck <-chan time.Time // ticks every stuckLogEvery once the handlers were cancelled
	unarm := func() {}
	defer func() { unarm() }()
	for {
		select {
		case <-pops.C:
			l.cancelPops()
		case <-handlers.C:
			l.cancelHandlers(errStopped)
			stuck, unarm = l.c.clock.After(stuckLogEvery)
		case <-stuck:
			l.logStuck()
			stuck, unarm = l.c.clock.After(stuckLogEvery)
		case <-grace.C:
			l.endAckGrace() // for the acks begun before the stop
		case <-acks.C:
			l.cutAcks()
		case <-finished:
			return
		}
	}
}

// stopping reports whether the loop has stopped taking work. It looks at ctx and Close
// itself, so that no message is handed out after either, even before watch has noticed.
func (l *consumer) stopping() bool {
	if l.stopCtx.Err() != nil || l.userCtx.Err() != nil {
		return true
	}
	select {
	case <-l.closed:
		return true
	default:
		return false
	}
}

// now is the loop's current time, on the clock its leases are tracked with.
func (l *consumer) now() time.Time { return l.c.clock.Now() }
