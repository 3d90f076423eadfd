package queen

import (
	"context"
	"errors"
	"maps"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Consume long-polls the queue and calls h with the leased messages of one partition at a
// time, in offset order, acking them when h returns (see EachBuilder.Consume for the rules,
// which are the same with "the batch" in place of "the message"). When h returns nil every
// message it did not settle itself is completed; when it returns an error, the first message
// it did not settle is acked with the error's outcome (failed, retry) and the rest come back
// with it, except for DeadLetter(err), which files every message it did not settle.
func (b QueueBuilder) Consume(ctx context.Context, h BatchHandler) error {
	if h == nil {
		return invalidOption("handler", "nil", "Consume needs a handler")
	}
	return b.consume(ctx, batchHandling(h))
}

// Consume long-polls the queue and calls h once per message until ctx is done, Limit or
// IdleTimeout is reached, the Client is closed, or a fatal error occurs. Every graceful stop
// returns nil; a fatal error (an invalid option, 401 or 403, a 404 from a broker that lacks
// the route, another 4xx the broker gives a pop) is returned at once. Transient errors
// (network, 5xx, 429) go to OnError and are retried with jittered backoff.
//
// Messages of one partition are handled one at a time in offset order; up to Concurrency
// partitions are handled at once. The loop only asks for as many partitions as it has free
// handler goroutines, so at most Batch × Concurrency messages are leased at any time; with
// autopilot on it always sends `partitions` (the free goroutines) for that reason.
//
// With AutoAck (the default) h's return decides the ack: nil completes, an error fails (its
// text is stored), Retry(err) retries, DeadLetter(err) dead-letters; a panic is recovered,
// logged with its stack, reported to OnError and acked failed as "panic: <value>". The acks of
// one partition's batch go out as one request, in offset order; after a failed or retry the
// loop stops handling that batch, and the later messages come back with it (O18). With
// AutoAck(false), h settles messages itself; whatever it left unsettled is acked with its
// error's outcome when it returns an error or panics (R136), and left alone when it returns
// nil (its lease then runs out and the message comes back, unless h settled it).
//
// When ctx is done (or the Client is closed, or Limit is reached) no more pops are sent;
// running handlers may finish within ShutdownTimeout (default 30s) with their ctx still live,
// after which it is cancelled. Their acks are still sent. Leased messages not yet handed to
// the handler are released with retry, so they come back at once. Consume returns once every
// goroutine it started has returned.
//
// Limit(n) counts messages whose handler returned, whatever the outcome (including a batch
// whose lease was lost); exactly n are handed to the handler, and any other leased message is
// released with retry.
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
	defaultRenewEvery      = 10 * time.Second
	// ackTimeout bounds one ack request of the loop, sent on a ctx of its own.
	ackTimeout = 30 * time.Second
)

// consumer is one running Consume call.
type consumer struct {
	c   *Client
	b   QueueBuilder
	h   handling
	log *consumeLog

	path        string
	query       url.Values // the pop parameters that never change
	concurrency int
	autoAck     bool
	autopilot   bool // the broker sizes batch and partitions
	leaseTime   time.Duration
	renew       bool
	renewEvery  time.Duration
	renewExtend time.Duration
	limit       int64 // 0: none

	slots      chan struct{} // one token per idle handler goroutine
	workerExit chan struct{} // buffered(1): a batch finished
	workers    sync.WaitGroup
	pace       handlingPace

	userCtx        context.Context // Consume's ctx
	closed         <-chan struct{} // closed by Client.Close
	stopCtx        context.Context // done once the loop stops taking work
	stopNow        context.CancelFunc
	handlerCtx     context.Context // parent of every handler ctx; cancelled after ShutdownTimeout
	cancelHandlers context.CancelFunc
	ackCtx         context.Context // never cancelled by the caller: acks survive shutdown

	reserved atomic.Int64 // messages handed to the handler (Limit)
	held     atomic.Int64 // leased messages not yet handed out or released (Limit)

	idle idleWatch
}

func (b QueueBuilder) consume(ctx context.Context, h handling) error {
	if err := b.validate(forConsume); err != nil {
		return err
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
	l := &consumer{c: b.client, b: b, h: h, path: b.popPath(), query: b.popQuery(forConsume),
		concurrency: 1, autoAck: true, autopilot: !b.discovery(), leaseTime: defaultLeaseTime}
	l.log = &consumeLog{logger: b.client.logger, onError: b.onError}
	if b.concurrencySet {
		l.concurrency = b.concurrency
	}
	if b.autoAck != nil {
		l.autoAck = *b.autoAck
	}
	if b.autopilot != nil && !*b.autopilot {
		l.autopilot = false
	}
	if b.leaseSet {
		l.leaseTime = b.leaseTime
	}
	if b.limitSet {
		l.limit = int64(b.limit)
	}
	l.renew = b.renew
	l.renewExtend = l.leaseTime
	switch {
	case b.renewEvery > 0:
		l.renewEvery = b.renewEvery
	case b.leaseSet:
		l.renewEvery = b.leaseTime / 2
	default:
		l.renewEvery = defaultRenewEvery
	}

	l.slots = make(chan struct{}, l.concurrency)
	for range l.concurrency {
		l.slots <- struct{}{}
	}
	l.workerExit = make(chan struct{}, 1)
	l.userCtx = ctx
	l.stopCtx, l.stopNow = context.WithCancel(context.Background())
	l.handlerCtx, l.cancelHandlers = context.WithCancel(context.WithoutCancel(ctx))
	l.ackCtx = context.WithoutCancel(ctx)
	l.idle = idleWatch{timeout: b.idleTimeout, enabled: b.idleSet, stop: l.stopNow}
	return l
}

// run polls until a stop, then waits for every goroutine it started.
func (l *consumer) run() error {
	shutdown := defaultShutdownTimeout
	if l.b.shutdownSet {
		shutdown = l.b.shutdownTimeout
	}
	finished := make(chan struct{})
	var watcher sync.WaitGroup
	watcher.Go(func() { l.watch(shutdown, finished) })

	l.idle.arm()
	err := l.poll()
	l.stopNow()
	l.idle.disarm()
	l.workers.Wait()
	close(finished)
	watcher.Wait()
	l.cancelHandlers()
	return err
}

// watch turns ctx and Close into a stop, then gives running handlers the shutdown grace
// before cancelling their ctx.
func (l *consumer) watch(grace time.Duration, finished <-chan struct{}) {
	select {
	case <-l.userCtx.Done():
	case <-l.closed:
	case <-l.stopCtx.Done():
	case <-finished:
		return
	}
	l.stopNow()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-t.C:
		l.cancelHandlers()
	case <-finished:
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

// poll sends pops while there are free handler goroutines, and hands out what they lease.
// It returns nil on a graceful stop and the error on a fatal one.
func (l *consumer) poll() error {
	failures := newFailureBackoff()
	quiet := newQuietBackoff()
	for {
		free, ok := l.acquire(l.wantedPartitions())
		if !ok {
			return nil
		}
		batch, ok := l.nextBatch()
		if !ok {
			// Limit: the running batches may still hand out every remaining message.
			l.giveBack(free)
			if !l.awaitWorker() {
				return nil
			}
			continue
		}
		started := time.Now()
		msgs, err := l.c.doPop(l.stopCtx, l.b, l.path, l.popQuery(free, batch))
		if err != nil {
			l.giveBack(free)
			if l.stopping() || errors.Is(err, ErrClosed) {
				return nil
			}
			l.idle.busy() // an outage is not idleness
			if isFatal(err) {
				l.log.fatal(err)
				return err
			}
			l.log.transient(err)
			if !l.pause(failures.NextBackOff()) {
				return nil
			}
			continue
		}
		failures.Reset()
		if len(msgs) == 0 {
			l.giveBack(free)
			l.idle.quiet()
			if time.Since(started) < l.quietThreshold() {
				// The broker answered "nothing" without waiting (no Wait, a discovery pop,
				// a 0.15 early answer): do not ask again at once.
				if !l.pause(quiet.NextBackOff()) {
					return nil
				}
			}
			continue
		}
		quiet.Reset()
		l.dispatch(msgs, free)
	}
}

// wantedPartitions is how many partitions one pop should claim at most.
func (l *consumer) wantedPartitions() int {
	switch {
	case l.b.partition != "":
		return 1 // a partition route claims one (R21)
	case l.b.partsSet:
		return l.b.partitions
	case l.autopilot:
		return min(l.concurrency, maxPartitions)
	default:
		return 1
	}
}

// popQuery is the pop's parameters for free idle goroutines and a batch size (0: unsent).
func (l *consumer) popQuery(free, batch int) url.Values {
	q := maps.Clone(l.query)
	if l.b.partition == "" && (l.b.partsSet || l.autopilot) {
		q.Set("partitions", strconv.Itoa(free))
	}
	if batch > 0 {
		q.Set("batch", strconv.Itoa(batch))
	}
	return q
}

// nextBatch is the batch to ask for (0: leave it to the broker), and false when Limit leaves
// nothing to ask for until a running batch ends.
func (l *consumer) nextBatch() (int, bool) {
	size, ceiling := 0, 1 // without autopilot a broker hands out one message (R28)
	if l.autopilot {
		ceiling = autopilotMaxBatch
	}
	if l.b.batchSet {
		size, ceiling = l.b.batch, l.b.batch
	}
	if c := l.pace.batchCap(l.leaseTime); c > 0 && c < ceiling {
		size, ceiling = c, c
	}
	if l.limit > 0 {
		left := l.limit - l.reserved.Load() - l.held.Load()
		if left <= 0 {
			return 0, false
		}
		if left < int64(ceiling) {
			size = int(left)
		}
	}
	return size, true
}

// quietThreshold is how soon an empty answer counts as "answered without waiting".
func (l *consumer) quietThreshold() time.Duration {
	if l.query.Get("wait") != "true" || l.b.discovery() {
		return time.Duration(1<<63 - 1)
	}
	return min(l.b.pollTimeout()/2, time.Second)
}

// acquire takes between 1 and want idle goroutines, waiting for the first; false on stop.
func (l *consumer) acquire(want int) (int, bool) {
	select {
	case <-l.slots:
	case <-l.stopCtx.Done():
		return 0, false
	}
	n := 1
	for n < want {
		select {
		case <-l.slots:
			n++
			continue
		default:
		}
		break
	}
	if l.stopping() {
		l.giveBack(n)
		return 0, false
	}
	return n, true
}

// giveBack returns n goroutine tokens.
func (l *consumer) giveBack(n int) {
	for range n {
		l.slots <- struct{}{}
	}
}

// awaitWorker waits for a running batch to end; false on stop.
func (l *consumer) awaitWorker() bool {
	select {
	case <-l.workerExit:
		return true
	case <-l.stopCtx.Done():
		return false
	}
}

// pause waits d, or returns false at once on stop.
func (l *consumer) pause(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-l.stopCtx.Done():
		return false
	}
}

// dispatch starts one handler goroutine per leased partition. free goroutine tokens were
// taken for the pop; a broker that claimed more partitions than asked gets them as tokens
// free up.
func (l *consumer) dispatch(msgs []*Message, free int) {
	l.idle.busy()
	if l.stopping() {
		// The pop was answered after the stop began: give its messages back at once.
		l.giveBack(free)
		l.release(msgs)
		return
	}
	deadline := newLeaseDeadline(l.c.renewer.now().Add(l.leaseTime))
	groups := byPartition(msgs)
	l.held.Add(int64(len(msgs)))
	if extra := free - len(groups); extra > 0 {
		l.giveBack(extra)
	}
	for i, g := range groups {
		if i >= free {
			if _, ok := l.acquire(1); !ok {
				var rest []*Message
				for _, r := range groups[i:] {
					rest = append(rest, r...)
				}
				l.held.Add(-int64(len(rest)))
				l.release(rest)
				return
			}
		}
		l.start(&leasedBatch{msgs: g, deadline: deadline})
	}
}

// byPartition splits a pop's messages by partition, keeping each partition's offset order.
func byPartition(msgs []*Message) [][]*Message {
	var groups [][]*Message
	index := make(map[string]int, 1)
	for _, m := range msgs {
		i, ok := index[m.PartitionID]
		if !ok {
			i = len(groups)
			index[m.PartitionID] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], m)
	}
	return groups
}

// release gives leased messages back with retry: one item on the first message of each
// partition, which ends the lease and redelivers the rest with it (R71, O18).
func (l *consumer) release(msgs []*Message) {
	var items []AckItem
	for _, g := range byPartition(msgs) {
		if g[0].markSettled() {
			items = append(items, AckItem{Message: g[0], Status: StatusRetry})
		}
	}
	l.send(items)
}

// send sends one batch ack on the loop's own ctx and reports what failed.
func (l *consumer) send(items []AckItem) {
	if len(items) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(l.ackCtx, ackTimeout)
	defer cancel()
	results, err := l.c.AckBatch(ctx, items)
	if err != nil {
		for _, it := range items {
			it.Message.unsettle()
		}
		l.log.ackFailed(items[0].Message, err)
		return
	}
	for i, r := range results {
		if !r.Success {
			l.log.ackRefused(items[i], r.Error)
		}
	}
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

// isFatal reports whether a pop error ends Consume: an invalid option, 401/403 (O26), a 404
// (a route the broker lacks: a 2.0 pop answers an unknown queue with 204), or another 4xx the
// broker gives these parameters, which asking again cannot change.
func isFatal(err error) bool {
	if errors.Is(err, ErrInvalidOption) {
		return true
	}
	var api *APIError
	if !errors.As(err, &api) {
		return false
	}
	if api.Temporary() || api.StatusCode == 408 {
		return false
	}
	return api.StatusCode >= 400 && api.StatusCode < 500
}

// idleWatch stops the loop once it has had nothing to do for its timeout.
type idleWatch struct {
	enabled bool
	timeout time.Duration
	stop    func()

	mu       sync.Mutex
	inFlight int
	gen      uint64 // a countdown fires only if nothing happened since it began
	timer    *time.Timer
	armed    bool
	disarmed bool
}

// arm starts the idle countdown; the loop has nothing to do.
func (w *idleWatch) arm() {
	if !w.enabled {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armLocked()
}

func (w *idleWatch) armLocked() {
	if w.disarmed {
		return
	}
	w.gen++
	gen := w.gen
	if w.timer != nil {
		w.timer.Stop()
	}
	w.armed = true
	w.timer = time.AfterFunc(w.timeout, func() {
		w.mu.Lock()
		fire := w.gen == gen && w.inFlight == 0
		w.mu.Unlock()
		if fire {
			w.stop()
		}
	})
}

// busy cancels the countdown: a pop brought work, or failed.
func (w *idleWatch) busy() {
	if !w.enabled {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.gen++
	w.armed = false
	if w.timer != nil {
		w.timer.Stop()
	}
}

// quiet starts the countdown after an empty answer, unless it runs already or batches do.
func (w *idleWatch) quiet() {
	if !w.enabled {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.armed && w.inFlight == 0 {
		w.armLocked()
	}
}

// started and ended bracket each batch; the countdown restarts when the last one ends.
func (w *idleWatch) started() {
	if !w.enabled {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.inFlight++
	w.gen++
	w.armed = false
}

func (w *idleWatch) ended() {
	if !w.enabled {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.inFlight--
	if w.inFlight == 0 {
		w.armLocked()
	}
}

// disarm stops the countdown for good.
func (w *idleWatch) disarm() {
	if !w.enabled {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.disarmed = true
	w.gen++
	if w.timer != nil {
		w.timer.Stop()
	}
}
