package broker

import (
	"cmp"
	"context"
	"slices"
	"time"
)

// Waiting pops are kept per (queue, group), queue-wide ones apart from those of each partition,
// so that a change wakes only the pops that it can serve:
//   - a cursor that becomes ready (ready.go) notes its partition for its group's waiters;
//   - unlock then serves, in arrival order, the first waiting pop that can lease from a noted
//     partition (a queue-wide pop needs any ready partition, a partition pop its own), and
//     repeats until none can: the pops it skips cost nothing;
//   - the rare changes that may decide a start (a queue or partition created, a seek, a group
//     deleted) have every waiting pop of the group looked at, as a fresh pop would be.
// While a queue-wide pop of a group waits, none of the group's partitions on that queue is
// ready; while a partition pop waits, its partition is not ready for its group.

// waiter is a long-polling pop parked until a state change can satisfy it.
type waiter struct {
	req     PopRequest
	group   string
	arrival int64 // store step at arrival: a "new" start counts from here
	order   int64 // arrival order among waiting pops
	queued  bool
	// blind is set on a wait that nothing pushed meanwhile serves: it looks again only when
	// its timeout passes (a 0.15 first pop of a "new" group, compat015.go).
	blind bool

	ch     chan struct{} // closed once answered
	done   bool
	result PopResult
	err    error
	grant  *grant
}

// waitList is the pops of one group waiting on one queue, each list in arrival order.
type waitList struct {
	wide  []*waiter            // queue-wide pops
	parts map[string][]*waiter // partition pops, by partition name
}

// wakeNote is what unlock must look at for one (queue, group).
type wakeNote struct {
	parts []*partition // partitions that became ready
	all   bool         // look at every waiting pop
}

func (e *Engine) enqueue(w *waiter) {
	w.queued = true
	w.ch = make(chan struct{})
	e.waitSeq++
	w.order = e.waitSeq
	groups := e.waiting[w.req.Queue]
	if groups == nil {
		groups = make(map[string]*waitList)
		e.waiting[w.req.Queue] = groups
	}
	wl := groups[w.group]
	if wl == nil {
		wl = &waitList{}
		groups[w.group] = wl
	}
	if w.req.Partition == "" {
		wl.wide = append(wl.wide, w)
	} else {
		if wl.parts == nil {
			wl.parts = make(map[string][]*waiter)
		}
		wl.parts[w.req.Partition] = append(wl.parts[w.req.Partition], w)
		k := partKey{w.req.Queue, w.req.Partition}
		if e.partWaiting[k] == nil {
			e.partWaiting[k] = make(map[string]int)
		}
		e.partWaiting[k][w.group]++
	}
	e.waitCount[groupKey{w.req.Queue, w.group}]++
	e.nWaiting++
}

func (e *Engine) dequeue(w *waiter) {
	groups := e.waiting[w.req.Queue]
	if wl := groups[w.group]; wl != nil {
		if w.req.Partition == "" {
			wl.wide = deleteWaiter(wl.wide, w)
		} else {
			if list := deleteWaiter(wl.parts[w.req.Partition], w); len(list) == 0 {
				delete(wl.parts, w.req.Partition)
			} else {
				wl.parts[w.req.Partition] = list
			}
			k := partKey{w.req.Queue, w.req.Partition}
			if groups := e.partWaiting[k]; groups[w.group] <= 1 {
				delete(groups, w.group)
				if len(groups) == 0 {
					delete(e.partWaiting, k)
				}
			} else {
				groups[w.group]--
			}
		}
		if len(wl.wide) == 0 && len(wl.parts) == 0 {
			delete(groups, w.group)
			if len(groups) == 0 {
				delete(e.waiting, w.req.Queue)
			}
		}
	}
	k := groupKey{w.req.Queue, w.group}
	if e.waitCount[k]--; e.waitCount[k] <= 0 {
		delete(e.waitCount, k)
	}
	e.nWaiting--
	w.queued = false
}

func deleteWaiter(list []*waiter, w *waiter) []*waiter {
	if i := slices.Index(list, w); i >= 0 {
		list = slices.Delete(list, i, i+1)
	}
	if len(list) == 0 {
		return nil
	}
	return list
}

// note returns the wake note of (queue, group), creating it when some pop of the group waits
// on the queue; nil when none does.
func (e *Engine) note(queueName, group string) *wakeNote {
	if e.waiting[queueName][group] == nil {
		return nil
	}
	k := groupKey{queueName, group}
	n := e.wake[k]
	if n == nil {
		n = &wakeNote{}
		e.wake[k] = n
	}
	return n
}

// wakeFor notes that gc just became ready.
func (e *Engine) wakeFor(gc *cursorState) {
	if n := e.note(gc.p.q.name, gc.group); n != nil && !n.all {
		n.parts = append(n.parts, gc.p)
	}
}

// wakeGroup has every waiting pop of the group on the queue looked at.
func (e *Engine) wakeGroup(queueName, group string) {
	if n := e.note(queueName, group); n != nil {
		n.all, n.parts = true, nil
	}
}

// wakeQueue has every pop waiting on the queue looked at.
func (e *Engine) wakeQueue(queueName string) {
	for group := range e.waiting[queueName] {
		e.wakeGroup(queueName, group)
	}
}

// wakePartition has the pops waiting for the named partition looked at.
func (e *Engine) wakePartition(queueName, partition string) {
	for group := range e.partWaiting[partKey{queueName, partition}] {
		e.wakeGroup(queueName, group)
	}
}

// partKey names a partition of a queue, created or not.
type partKey struct{ queue, partition string }

// serveWaiting answers the waiting pops of (queue, group) that the noted changes can serve.
func (e *Engine) serveWaiting(k groupKey, n *wakeNote) {
	if n.all {
		e.serveAll(k)
		return
	}
	for {
		wl := e.waiting[k.queue][k.group]
		q := e.queues[k.queue]
		if wl == nil || q == nil {
			return
		}
		var best *waiter
		if ix := q.cursors[k.group]; ix != nil && ix.ready.top() != nil {
			best = firstSeeing(wl.wide)
		}
		for _, p := range n.parts {
			first := firstSeeing(wl.parts[p.name])
			if first == nil || (best != nil && best.order < first.order) {
				continue
			}
			if gc := p.groups[k.group]; gc != nil && gc.readyIdx >= 0 && q.byName[p.name] == p {
				best = first
			}
		}
		if best == nil {
			return
		}
		res, g, err := e.evaluate(&best.req, best)
		if err == nil && len(res.Messages) == 0 {
			return // the index said it could lease; never spin if it could not
		}
		e.dequeue(best)
		e.answer(best, res, g, err)
	}
}

// firstSeeing is the first of list that is not blind, nil if none.
func firstSeeing(list []*waiter) *waiter {
	for _, w := range list {
		if !w.blind {
			return w
		}
	}
	return nil
}

// serveAll looks at every waiting pop of (queue, group) in arrival order, each as a fresh pop.
func (e *Engine) serveAll(k groupKey) {
	wl := e.waiting[k.queue][k.group]
	if wl == nil {
		return
	}
	list := slices.Clone(wl.wide)
	for _, ws := range wl.parts {
		list = append(list, ws...)
	}
	slices.SortFunc(list, func(a, b *waiter) int { return cmp.Compare(a.order, b.order) })
	for _, w := range list {
		if !w.queued {
			continue
		}
		res, g, err := e.evaluate(&w.req, w)
		if err == nil && len(res.Messages) == 0 {
			continue
		}
		e.dequeue(w)
		e.answer(w, res, g, err)
	}
}

// answer hands a waiter its result; the caller has taken it off its list.
func (e *Engine) answer(w *waiter, res PopResult, g *grant, err error) {
	w.done, w.result, w.grant, w.err = true, res, g, err
	close(w.ch)
}

// await parks the calling pop until it is answered, its timeout passes on real time, or its
// client goes away. A client gone by the time the pop is settled gets nothing, even
// if an answer was handed over meanwhile: that answer is taken back.
func (e *Engine) await(ctx context.Context, w *waiter) (PopResult, error) {
	timer := time.NewTimer(w.req.Timeout)
	defer timer.Stop()
	select {
	case <-w.ch:
	case <-timer.C:
	case <-ctx.Done():
	}
	e.mu.Lock()
	defer e.unlock()
	if err := ctx.Err(); err != nil {
		if !w.done {
			e.dequeue(w)
		} else if w.grant != nil {
			e.undo(w.grant)
		}
		e.forgetStart(w)
		return PopResult{}, err
	}
	e.settle(w)
	if !w.done {
		e.dequeue(w) // timed out
		if w.blind {
			return e.recheck(w)
		}
		return e.emptyResult(w.req.Queue, w.group, &w.req), nil
	}
	return w.result, w.err
}
