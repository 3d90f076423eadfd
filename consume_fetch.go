package queen

import (
	"errors"
	"time"
)

// The fetch loop: one goroutine per Consume asks for as much work as there are idle handler
// slots, with one pop in flight at a time. It waits for a first idle slot, takes every other
// idle one, pops for them, and hands each leased partition to a slot of its own; partitions a
// pop brings beyond them wait for a slot to free up. A single loop keeps the broker's view of
// the consumer simple (one waiting pop per Consume) and lets the pop's size follow the
// idle slots.

// fetch sends pops while there are idle handler slots and the in-flight bound has room, and
// hands out what they lease. It returns nil on a graceful stop and the error on a fatal one.
func (l *consumer) fetch() error {
	quiet := quietPollBackoff.waits()
	for {
		free, ok := l.acquire(l.slotsPerPop())
		if !ok {
			return nil
		}
		batch, most, ok := l.nextBatch()
		if !ok || !l.roomFor(most) {
			// Limit, or the in-flight bound: a running batch may end, or release what it holds.
			l.giveBack(free)
			if !l.awaitWorker() {
				return nil
			}
			continue
		}
		l.held.Add(int64(most)) // what this pop may bring counts already
		sentAt := l.now()
		started := time.Now()
		ctx, popped := l.gate.beginPop(l.popCtx)
		b, path, params, probe := l.b, l.path, l.nextPop(batch, free), false
		if partition, ok := l.counters.take(); ok {
			b = b.Partition(partition)
			path, params = b.popPath(), l.repopParams(params)
			l.held.Add(int64(1 - most))
			most = 1
		} else if probe = l.newStart.probes() && params.longPoll; probe {
			params.longPoll, params.noWait = false, true // see groupStart
		} else {
			l.clipPoll(&params)
		}
		msgs, answer, err := l.c.doPopAnswer(ctx, b, path, params)
		answeredAt := l.now()
		interrupted := ctx.Err() != nil && l.popCtx.Err() == nil
		popped()
		l.held.Add(int64(len(msgs) - most))
		l.heldBytes.Add(dataBytes(msgs))
		if len(msgs) < most {
			l.signalBudget()
		}
		if err != nil {
			l.giveBack(free)
			if l.stopping() || errors.Is(err, ErrClosed) || interrupted {
				if interrupted {
					continue // the loop let an ack through first: pop again
				}
				return nil
			}
			l.idle.busy() // an outage is not idleness
			if isFatal(err) {
				l.log.fatal(err)
				return err
			}
			wait, began := l.outage.failed()
			l.log.popFailed(err, began)
			if !l.pause(wait) {
				return nil
			}
			continue
		}
		if ended, lasted, failures := l.outage.recovered(); ended {
			l.log.outageEnded(lasted, failures)
		}
		l.sizing.observe(msgs, answer, l.b.conflation)
		l.newStart.observe(msgs, answer)
		if len(msgs) == 0 {
			l.giveBack(free)
			l.idle.quiet()
			if !probe && time.Since(started) < l.quietThreshold() {
				// The broker answered "nothing" without waiting (no Wait, a discovery pop,
				// a 0.15 early answer): do not ask again at once.
				if !l.pause(quiet.next()) {
					return nil
				}
			}
			continue
		}
		quiet.reset()
		l.dispatch(msgs, free, sentAt, answeredAt, answer)
	}
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
// one partition at a time, else every idle one.
func (l *consumer) slotsPerPop() int {
	if l.b.partition != "" {
		return 1
	}
	return l.concurrency
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
		// what it brings beyond Limit is released with retry.
		left := l.limit - l.reserved.Load() - l.held.Load()
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
	if !l.params.longPoll || l.b.discovery() || l.b.pollTimeout() == 0 {
		return time.Duration(1<<63 - 1)
	}
	return min(l.b.pollTimeout()/2, time.Second)
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

// signalBudget wakes the fetch loop waiting in awaitWorker.
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

// dispatch starts one handler goroutine per leased partition of a pop sent at sentAt and
// answered at answeredAt. free idle slots were taken for the pop; a broker that claimed more
// partitions than asked gets them as slots free up. What cannot be handed out (the pop was
// answered after the stop began, or the stop came while partitions waited for a slot) is given
// back at once. A batch of a 0.15 partition whose retry counter may be spent, of more than one
// message, is given back too (see groupCounters).
func (l *consumer) dispatch(msgs []*Message, free int, sentAt, answeredAt time.Time, answer popAnswer) {
	l.idle.busy()
	lease, _ := l.lease.get()
	deadline := popDeadline(sentAt, answeredAt, lease, answer, msgs)
	groups := byPartition(msgs)
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
			if l.releasePending(groups[started], deadline) {
				l.held.Add(-int64(len(groups[started])))
				l.heldBytes.Add(-dataBytes(groups[started]))
				l.giveBack(1)
				continue
			}
			l.start(&leasedBatch{msgs: groups[started], deadline: deadline})
		}
	}
	if rest := groups[started:]; len(rest) > 0 {
		for _, g := range rest {
			l.held.Add(-int64(len(g)))
			l.heldBytes.Add(-dataBytes(g))
		}
		l.release(rest, deadline)
	}
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

// failed records a failed pop and returns how long to wait before the next one, and whether
// this failure began the outage.
func (o *outage) failed() (wait time.Duration, began bool) {
	o.failures++
	if !o.down {
		o.down, o.since, began = true, time.Now(), true
	}
	return o.waits.next(), began
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
	r.report(nil, err)
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
