package queen

import (
	"context"
	"errors"
	"sync"
	"time"
)

// The fetch loop: one goroutine per Consume asks for as much work as there are idle handler
// slots, with as many pops in flight as filling them takes. A pop takes the idle slots it may
// fill (never more than the messages it may bring, nor more than the partitions a pop has been
// seen to bring), and hands each leased partition to a slot of its own; partitions a pop
// brings beyond them wait for a slot to free up. While pops bring messages, every idle slot
// left gets a pop of its own, sent without waiting, so that Concurrency C at batch 1 pops as C
// goroutines popping in parallel do, and so on a 0.15 broker, whose pop leases one partition.
// Once a pop comes back empty, the loop sends one pop at a time again: an idle queue sees one
// long poll per Consume. A pop that must go alone (the first of a new group's, the one-message
// pop of a 0.15 partition's failed message) is sent with no other in flight.
//
// While pops bring messages, a busy slot goes on without the loop: the goroutine that sent a
// pop handles the one partition it leased for its one slot, and once that batch is over sends
// the slot's next pop itself, as the loop would have. Each step takes the fetch state's lock and
// decides as the loop does; only the handing over is spared, four goroutine wake-ups per pop,
// which at batch 1 cost more than the pop's own work. Anything else (an error, an empty answer,
// more partitions than slots, a pop that goes alone, the stop) goes back to the loop. A slot
// sends a pop of its own only while the loop waits for answers: were the loop waiting for a
// slot, or for room under Limit or the in-flight bound, an answer it must take would hold a
// slot it waits for.

// popResult is one pop, as the fetch loop sent it and as it was answered.
type popResult struct {
	free, most  int // idle slots taken for it; the most messages it may bring
	builder     *QueueBuilder
	path        string
	params      popParams
	ctx         context.Context // ends when the loop cuts the pop short
	popped      func()          // tells the pop gate the pop is over
	sentAt      time.Time
	started     time.Time // when it left, by the wall clock
	alone       bool      // no other pop went while it was in flight
	probe       bool      // a new group's first pop, sent without waiting
	extra       bool      // sent without waiting while another pop was in flight
	msgs        []*Message
	answer      popAnswer
	err         error
	answeredAt  time.Time
	interrupted bool // cut short to let an ack through first
}

// fetchState is what the fetch loop knows of its pops. Its lock is held by whoever sends a pop
// or takes an answer (the loop, or a slot going on without it), and covers the loop's outage,
// sizing and new-group start too.
type fetchState struct {
	mu      sync.Mutex
	answers chan *popResult // buffered: a pop's goroutine never waits to hand in its answer
	// listening is set while the loop waits for answers and for idle slots, and nothing else:
	// only then may a slot go on to a pop of its own, whose answer the loop may have to take.
	listening bool
	inFlight  int       // pops sent whose answer was not taken yet
	alone     bool      // a pop in flight goes alone
	busy      bool      // the last answer brought messages: idle slots get pops of their own
	spread    int       // the most idle slots one pop takes
	popBytes  int64     // the most data one pop has brought
	resumeAt  time.Time // a failing broker's backoff: no pop before
	quiet     *backoffWaits
}

// newFetch is the state of a fetch loop that has sent nothing yet: its first pop takes every
// idle slot.
func (l *consumer) newFetch() *fetchState {
	return &fetchState{answers: make(chan *popResult, l.concurrency), spread: l.concurrency,
		quiet: quietPollBackoff.waits()}
}

// fetch sends pops while there are idle handler slots and the in-flight bound has room, and
// hands out what they lease. It returns nil on a graceful stop and the error on a fatal one,
// once every pop it sent was answered.
func (l *consumer) fetch() error {
	f := l.newFetch()
	l.pops = f
	defer l.drainPops(f)
	for {
		var own *popResult // a pop the loop sends itself, once the lock is let go
		f.mu.Lock()
		if f.inFlight == 0 {
			wait, spread := time.Until(f.resumeAt), l.slotsPerPop(f)
			f.mu.Unlock()
			if wait > 0 && !l.pause(wait) {
				return nil
			}
			free, ok := l.acquire(spread)
			if !ok {
				return nil
			}
			f.mu.Lock()
			r := l.newPop(f, free)
			if r == nil {
				f.mu.Unlock()
				// Limit, or the in-flight bound: a running batch may end, or release what it holds.
				if !l.awaitWorker() {
					return nil
				}
				continue
			}
			own = l.launch(f, r)
		}
		for l.mayAddPop(f) {
			free := l.tryAcquire(l.slotsPerPop(f))
			if free == 0 {
				break
			}
			r := l.newPop(f, free)
			if r == nil {
				break
			}
			l.launch(f, r) // never the loop's own: it has no other pop in flight
		}
		f.listening = true
		f.mu.Unlock()
		if own != nil {
			l.sendOne(own)
			f.answers <- own
		}
		select {
		case r := <-f.answers:
			l.stopListening(f)
			if stop, err := l.answered(f, r); stop {
				return err
			}
		case <-l.budgetFreed: // a slot is idle again, or the bound has room: another pop may go
			l.stopListening(f)
		case <-l.stopCtx.Done():
			return nil
		}
	}
}

// stopListening notes that the loop has left its wait for answers: until it is back, no slot
// goes on to a pop of its own, as the loop may wait for a slot before it takes answers again.
func (l *consumer) stopListening(f *fetchState) {
	f.mu.Lock()
	f.listening = false
	f.mu.Unlock()
}

// drainPops takes the answer of every pop still in flight once the loop ends: what they
// leased is released, as the loop is stopping. Once the stop has begun no pop goes on
// without the loop, so every answer comes to it.
func (l *consumer) drainPops(f *fetchState) {
	l.stopNow()
	l.stopListening(f)
	for {
		f.mu.Lock()
		inFlight := f.inFlight
		f.mu.Unlock()
		if inFlight == 0 {
			return
		}
		l.answered(f, <-f.answers)
	}
}

// mayAddPop reports whether another pop may go while others are in flight: pops bring
// messages, none of those in flight goes alone, there are pops to send (no outage backoff,
// not a partition route, whose pop leases its one partition), the loop still takes work, and,
// with MaxInFlightBytes, the data held stays below it even if every pop in flight brings as
// much as the most a pop has brought.
func (l *consumer) mayAddPop(f *fetchState) bool {
	if !f.busy || f.alone || f.inFlight >= l.concurrency || l.b.partition != "" ||
		time.Now().Before(f.resumeAt) || l.stopping() {
		return false
	}
	return l.maxBytes == 0 || l.heldBytes.Load()+int64(f.inFlight)*f.popBytes < l.maxBytes
}

// newPop is the next pop, for free idle slots, counted in flight; nil when Limit or the
// in-flight bound leaves no room for it (the slots are then given back). The caller holds f's
// lock, and sends it at once (launch).
func (l *consumer) newPop(f *fetchState, free int) *popResult {
	batch, most, ok := l.nextBatch()
	if !ok || !l.roomFor(most) {
		l.giveBack(free)
		return nil
	}
	r := &popResult{free: free, most: most, sentAt: l.now(), started: time.Now(), extra: f.inFlight > 0,
		builder: &l.b, path: l.path, params: l.nextPop(batch, free)}
	r.ctx, r.popped = l.gate.beginPop(l.popCtx, l.c.callBound(r.pollDeadline()))
	if partition, ok := l.counters.take(); ok {
		b := l.b.Partition(partition)
		r.builder, r.path, r.params = &b, b.popPath(), l.repopParams(r.params)
		r.most, r.alone, r.extra = 1, true, false
	} else if r.probe = l.newStart.probes() && r.params.longPoll; r.probe {
		r.params.longPoll, r.params.noWait = false, true // see groupStart
		r.alone, r.extra = true, false
	} else if r.extra {
		r.params.longPoll, r.params.noWait, r.params.timeout = false, true, 0
	} else {
		l.clipPoll(&r.params)
	}
	if r.free > r.most {
		// A pop brings no more partitions than messages. The loop hears of the slots given
		// back: the pop may be a slot's own, which the loop does not see go.
		l.giveBack(r.free - r.most)
		l.signalBudget()
		r.free = r.most
	}
	l.held.Add(int64(r.most)) // what this pop may bring counts already
	f.inFlight++
	f.alone = f.alone || r.alone
	return r
}

// pollDeadline is how long the pop r would wait for its answer as first made, which bounds its
// ctx. Should it then become a pop that answers at once (a partition's repop, a probe), that
// bound is later than the transport's, which then bounds it as it does any call.
func (r *popResult) pollDeadline() time.Duration {
	if r.extra {
		return 0
	}
	return r.params.pollDeadline()
}

// launch starts the pop r on its way as soon as it is made: a pop the gate counts in flight
// must be on its way before the next one waits at the gate for an ack that waits for it. A
// goroutine of the pool sends it and goes on with what it brings. With one pop at a time the
// loop sends it itself, once the lock is let go: no other pop could go meanwhile, and the loop
// would only wait for this one, which spares a goroutine and a hand-off per pop. launch
// returns that pop, or nil.
func (l *consumer) launch(f *fetchState, r *popResult) (own *popResult) {
	if l.onePopAtATime() {
		return r
	}
	l.goroutines.Go(func() { l.goOn(f, r) })
	return nil
}

// sendOne sends the pop r and notes its answer in it.
func (l *consumer) sendOne(r *popResult) {
	r.msgs, r.answer, r.err = l.c.doPopAnswer(r.ctx, r.builder, r.path, r.params)
	r.answeredAt = l.now()
	r.interrupted = errors.Is(r.ctx.Err(), context.Canceled) && l.popCtx.Err() == nil
	r.popped()
}

// goOn sends the pop r from a goroutine of the pool and, for as long as the answers allow,
// handles here the batch each brings and sends here the pop that its slot gets next.
func (l *consumer) goOn(f *fetchState, r *popResult) {
	for r != nil {
		l.sendOne(r)
		b := l.takeHere(f, r)
		if b == nil {
			return
		}
		l.handle(b)
		r = l.endedHere(f, b)
	}
}

// takeHere takes the answer of r on the goroutine that sent it, as the loop would, when the
// batch it brings can be handled there: messages of one partition for the slot taken for it.
// It returns that batch, or nil when the answer went to the loop.
func (l *consumer) takeHere(f *fetchState, r *popResult) *leasedBatch {
	if r.err != nil || len(r.msgs) == 0 || r.alone || r.probe || r.free != 1 || !onePartition(r.msgs) {
		f.answers <- r
		return nil
	}
	f.mu.Lock()
	if l.stopping() {
		f.mu.Unlock()
		f.answers <- r
		return nil
	}
	wasBusy := f.busy
	groups, _, _ := l.take(f, r) // an answer with messages neither fails nor ends the loop
	f.mu.Unlock()
	b := l.dispatch(r, groups, true)
	if b == nil || !wasBusy {
		// The slot went back (the stop, a 0.15 batch given back), or pops bring messages
		// again and the idle slots get pops of their own: the loop has work.
		l.signalBudget()
	}
	return b
}

// endedHere ends b, which ran on a goroutine of the pool, and gives its slot to the next pop
// when the loop would send one now, returning it to be sent from here; nil when the slot went
// back to the loop.
func (l *consumer) endedHere(f *fetchState, b *leasedBatch) *popResult {
	l.let(b)
	if !b.slotFreed.CompareAndSwap(false, true) {
		l.signalBudget() // the slot went earlier; what it held is released now
		return nil
	}
	f.mu.Lock()
	var r *popResult
	if f.listening && l.mayAddPop(f) {
		r = l.newPop(f, 1+l.tryAcquire(l.slotsPerPop(f)-1)) // nil: it gave the slots back
	} else {
		l.giveBack(1)
	}
	f.mu.Unlock()
	if r == nil {
		l.signalBudget()
	}
	return r
}

// onePopAtATime reports whether the loop never has more than one pop in flight: with
// Concurrency 1, or on a partition route, whose pop leases its one partition.
func (l *consumer) onePopAtATime() bool {
	return l.concurrency == 1 || l.b.partition != ""
}

// answered takes one pop's answer on the loop: what it leased is handed out, an error counted.
// It reports whether the loop ends, and with which error.
func (l *consumer) answered(f *fetchState, r *popResult) (stop bool, err error) {
	f.mu.Lock()
	groups, stop, err := l.take(f, r)
	f.mu.Unlock()
	if groups != nil {
		l.dispatch(r, groups, false)
	}
	return stop, err
}

// take takes one pop's answer, under f's lock: it is counted, an error noted, and what it
// leased returned by partition, to be handed out once the lock is let go (nil when it leased
// nothing). It reports whether the loop ends, and with which error.
func (l *consumer) take(f *fetchState, r *popResult) (groups [][]*Message, stop bool, err error) {
	f.inFlight--
	if r.alone {
		f.alone = false
	}
	msgs := r.msgs
	size := dataBytes(msgs)
	l.held.Add(int64(len(msgs) - r.most))
	l.heldBytes.Add(size)
	if len(msgs) < r.most {
		l.signalBudget()
	}
	if r.err != nil {
		f.busy = false
		l.giveBack(r.free)
		if l.stopping() || errors.Is(r.err, ErrClosed) || r.interrupted {
			return nil, !r.interrupted, nil // interrupted: the loop let an ack through first; pop again
		}
		l.idle.busy() // an outage is not idleness
		if isFatal(r.err) {
			l.log.fatal(r.err)
			return nil, true, r.err
		}
		if wait, began, counted := l.outage.failed(r.started); counted {
			l.log.popFailed(r.err, began)
			f.resumeAt = time.Now().Add(wait)
		} else {
			l.log.popFailedAgain(r.err)
		}
		return nil, false, nil
	}
	if ended, lasted, failures := l.outage.recovered(); ended {
		l.log.outageEnded(lasted, failures)
	}
	l.sizing.observe(msgs, r.answer, l.b.conflation)
	l.newStart.observe(msgs, r.answer)
	if len(msgs) == 0 {
		f.busy = false
		l.giveBack(r.free)
		l.idle.quiet()
		if !r.probe && !r.extra && time.Since(r.started) < l.quietThreshold() {
			// The broker answered "nothing" without waiting (no Wait, a discovery pop,
			// a 0.15 early answer): do not ask again at once.
			f.resumeAt = time.Now().Add(f.quiet.next())
		}
		return nil, false, nil
	}
	f.busy = true
	f.quiet.reset()
	f.popBytes = max(f.popBytes, size)
	groups = byPartition(msgs)
	f.spread = l.spreadAfter(r, len(msgs), len(groups))
	return groups, false, nil
}

// spreadAfter is the most idle slots a pop takes after one that took r.free slots brought n
// messages over parts partitions: as many partitions as it brought when its batch was full or
// it brought fewer partitions than slots (more would not have come), else twice as many.
func (l *consumer) spreadAfter(r *popResult, n, parts int) int {
	if n < r.most && parts >= r.free {
		parts = 2 * r.free
	}
	return min(max(parts, 1), l.concurrency)
}

// roomFor reports whether the in-flight bound leaves room for a pop that may bring most
// messages: at most 2 × Batch × Concurrency leased messages at any time (the batch the loop
// asks for when Batch is not set), those whose ack waits out a backoff included, and, with
// MaxInFlightBytes, less data held than that.
func (l *consumer) roomFor(most int) bool {
	batch := most
	if l.b.batchSet {
		batch = l.b.batch
	}
	if l.held.Load()+int64(most) > 2*int64(batch)*int64(l.concurrency) {
		return false
	}
	return l.maxBytes == 0 || l.heldBytes.Load() < l.maxBytes
}

// slotsPerPop is how many idle slots one pop may take: one on a partition route, which leases
// one partition at a time, else as many as a pop has been seen to fill.
func (l *consumer) slotsPerPop(f *fetchState) int {
	if l.b.partition != "" {
		return 1
	}
	return f.spread
}

// nextPop is the next pop's parameters, with a batch size (0: unsent), for free idle slots. A
// pop's batch bounds what it leases across its partitions; partitions beyond the idle slots
// wait for one (dispatch). Partitions are sent as set, autopilot or not; without autopilot
// the broker claims one partition unless told, so the loop asks for one per idle slot, and
// under autopilot the broker chooses.
func (l *consumer) nextPop(batch, free int) popParams {
	p := l.params
	l.newStart.apply(&p)
	if p.partitions == 0 && l.b.partition == "" && !l.autopilot && free > 1 {
		p.partitions = min(free, maxPartitions)
	}
	p.batch = batch
	return p
}

// nextBatch is the batch to ask for (0: leave it to the broker) and the most messages the pop
// can bring; false when Limit leaves nothing to ask for until a running batch ends.
func (l *consumer) nextBatch() (size, most int, ok bool) {
	ceiling := 1 // without autopilot a broker hands out one message unless told
	if l.autopilot {
		ceiling = autopilotMaxBatch
	}
	clientSized := l.autopilot && !l.b.batchSet && l.sizing.clientSizes()
	lease, _ := l.lease.get()
	switch {
	case l.b.batchSet:
		size, ceiling = l.b.batch, l.b.batch
	case clientSized:
		size, ceiling = clientStartBatch, clientStartBatch
		if c := l.pace.batchCap(lease); c > 0 {
			size, ceiling = min(c, autopilotMaxBatch), min(c, autopilotMaxBatch)
		}
	}
	if c := l.pace.batchCap(lease); c > 0 && c < ceiling {
		size, ceiling = c, c
	}
	if l.limit > 0 {
		// Limit is not a batch size: the pop still leaves the batch to the broker, and
		// what it brings beyond Limit is released with retry. A held message already handed
		// out (its ack on its way) is counted once.
		left := l.limit - l.reserved.Load() - (l.held.Load() - l.handedHeld.Load())
		if left <= 0 {
			return 0, 0, false
		}
		if clientSized && int64(size) > left {
			size, ceiling = int(left), int(left) // the client sizes it: no more than Limit needs
		}
	}
	return size, ceiling, true
}

// quietThreshold is how soon an empty answer counts as "answered without waiting".
func (l *consumer) quietThreshold() time.Duration {
	if !l.longPolls() {
		return time.Duration(1<<63 - 1)
	}
	return min(l.b.pollTimeout()/2, time.Second)
}

// longPolls reports whether the loop's pops wait for messages: a discovery pop never does,
// nor one with a zero timeout.
func (l *consumer) longPolls() bool {
	return l.params.longPoll && !l.b.discovery() && l.b.pollTimeout() > 0
}

// acquire takes between 1 and want idle slots, waiting for the first; false on stop.
func (l *consumer) acquire(want int) (int, bool) {
	if l.slots.Acquire(l.stopCtx, 1) != nil {
		return 0, false
	}
	n := 1
	for n < want && l.slots.TryAcquire(1) {
		n++
	}
	if l.stopping() {
		l.giveBack(n)
		return 0, false
	}
	return n, true
}

// tryAcquire takes up to want idle slots without waiting; 0 when none is idle.
func (l *consumer) tryAcquire(want int) int {
	n := 0
	for n < want && l.slots.TryAcquire(1) {
		n++
	}
	return n
}

// giveBack returns n idle slots.
func (l *consumer) giveBack(n int) {
	if n > 0 {
		l.slots.Release(int64(n))
	}
}

// awaitWorker waits until Limit may have room again; false on stop.
func (l *consumer) awaitWorker() bool {
	select {
	case <-l.budgetFreed:
		return true
	case <-l.stopCtx.Done():
		return false
	}
}

// signalBudget wakes the fetch loop waiting for an idle slot or for room in the bounds.
func (l *consumer) signalBudget() {
	select {
	case l.budgetFreed <- struct{}{}:
	default:
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

// dispatch starts one handler goroutine per leased partition (groups, in the order the pop r
// brought them); with here, the first is not started but returned, for the caller to handle
// on its own goroutine. r.free idle slots were taken for the pop; a broker that claimed more
// partitions than asked gets them as slots free up. What cannot be handed out (the pop was
// answered after the stop began, or the stop came while partitions waited for a slot) is given
// back at once. A batch of a 0.15 partition whose retry counter may be spent, of more than one
// message, is given back too (see groupCounters).
func (l *consumer) dispatch(r *popResult, groups [][]*Message, here bool) (first *leasedBatch) {
	free := r.free
	l.idle.busy()
	lease, _ := l.lease.get()
	deadline := popDeadline(r.sentAt, r.answeredAt, lease, r.answer, groups)
	started := 0
	if l.stopping() {
		l.giveBack(free)
	} else {
		if extra := free - len(groups); extra > 0 {
			l.giveBack(extra)
		}
		for ; started < len(groups); started++ {
			if started >= free {
				if _, ok := l.acquire(1); !ok {
					break
				}
			}
			g := groups[started]
			size := dataBytes(g) // counted before the batch is handed on
			if l.releasePending(g, deadline) {
				l.held.Add(-int64(len(g)))
				l.heldBytes.Add(-size)
				l.giveBack(1)
				continue
			}
			b := &leasedBatch{msgs: g, bytes: size, deadline: deadline}
			if here && first == nil {
				first = b
				l.begin(b)
				continue
			}
			l.start(b)
		}
	}
	if rest := groups[started:]; len(rest) > 0 {
		for _, g := range rest {
			l.held.Add(-int64(len(g)))
			l.heldBytes.Add(-dataBytes(g))
		}
		l.release(rest, deadline)
	}
	return first
}

// leaseBeganBy is how long before a pop's answer arrived its lease is taken to have begun, at
// the latest: the broker leases as it answers, but a long poll may have waited long before.
const leaseBeganBy = time.Second

// popDeadline is the deadline of a pop sent at sent and answered a at answered, which leased
// the partitions' messages groups for lease.
func popDeadline(sent, answered time.Time, lease time.Duration, a popAnswer, groups [][]*Message) *leaseDeadline {
	began := answered.Add(-leaseBeganBy)
	if began.Before(sent) {
		began = sent
	}
	d := &leaseDeadline{until: began.Add(lease), popSent: sent, popDateText: a.dateText}
	for _, msgs := range groups {
		for _, m := range msgs {
			if m.CreatedAt.After(d.newest) {
				d.newest = m.CreatedAt
			}
		}
	}
	return d
}

// dataBytes is the size of msgs' data.
func dataBytes(msgs []*Message) int64 {
	var n int64
	for _, m := range msgs {
		n += int64(len(m.Data))
	}
	return n
}

// byPartition splits a pop's messages by partition, keeping each partition's offset order.
func byPartition(msgs []*Message) [][]*Message {
	if len(msgs) > 0 && onePartition(msgs) {
		return [][]*Message{msgs} // the usual answer, split without a map
	}
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

// onePartition reports whether msgs all come from one partition.
func onePartition(msgs []*Message) bool {
	for _, m := range msgs {
		if m.PartitionID != msgs[0].PartitionID {
			return false
		}
	}
	return true
}

// isFatal reports whether a pop error ends Consume: an invalid option, 401/403, a 404
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

// outage tracks a broker that fails the fetch loop's pops. After a failed pop the loop waits a
// jittered backoff that grows with each failure before it sends the next one, so a failing
// broker sees one pop per backoff period (plus the transport's own retries of that pop,
// WithRetry), a handful of requests per second at most, then fewer.
type outage struct {
	waits    *backoffWaits
	down     bool
	since    time.Time
	failures int
}

func newOutage() *outage { return &outage{waits: popOutageBackoff.waits()} }

// failed records a failed pop sent at sent and returns how long to wait before the next one,
// and whether this failure began the outage. A pop that left before the outage began fails
// with the others in flight then: counted is false, and its failure changes nothing.
func (o *outage) failed(sent time.Time) (wait time.Duration, began, counted bool) {
	if o.down && sent.Before(o.since) {
		return 0, false, false
	}
	o.failures++
	if !o.down {
		o.down, o.since, began = true, time.Now(), true
	}
	return o.waits.next(), began, true
}

// recovered records a pop the broker answered. ended is true when it ended an outage, which
// then lasted that long over that many failed pops.
func (o *outage) recovered() (ended bool, lasted time.Duration, failures int) {
	if !o.down {
		return false, 0, 0
	}
	ended, lasted, failures = true, time.Since(o.since), o.failures
	o.down, o.failures = false, 0
	o.waits.reset()
	return ended, lasted, failures
}

// popFailed reports a failed pop: at warn level when it begins an outage (the loop's first
// failed pop, or the first after the broker answered again), at debug level after that.
func (r *consumeLog) popFailed(err error, began bool) {
	if began {
		r.logger.Warn("queen: consume pop failed; retrying until the broker answers", "error", err)
	} else {
		r.logger.Debug("queen: consume pop failed again; retrying", "error", err)
	}
	r.onError(nil, err)
}

// popFailedAgain reports the failure of a pop that was in flight when the outage began.
func (r *consumeLog) popFailedAgain(err error) {
	r.logger.Debug("queen: consume pop failed again; retrying", "error", err)
	r.onError(nil, err)
}

// outageEnded says the broker answers again after failing pops.
func (r *consumeLog) outageEnded(lasted time.Duration, failures int) {
	r.logger.Warn("queen: consume pops succeed again", "after", lasted.Round(time.Millisecond),
		"failedPops", failures)
}

// fatal notes the error that ends the loop. Consume returns it, so it is not logged as an
// error a second time.
func (r *consumeLog) fatal(err error) {
	r.logger.Debug("queen: consume stopped; returning the error", "error", err)
}
