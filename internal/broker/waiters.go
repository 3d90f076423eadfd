package broker

import (
	"context"
	"slices"
	"time"
)

// waiter is a long-polling pop parked until a state change can satisfy it (R24).
type waiter struct {
	req     PopRequest
	group   string
	arrival int64 // store step at arrival: a "new" start counts from here (R102)
	queued  bool

	ch     chan struct{} // closed once answered
	done   bool
	result PopResult
	err    error
	grant  *grant
}

func (e *Engine) enqueue(w *waiter) {
	w.queued = true
	w.ch = make(chan struct{})
	e.waiting[w.req.Queue] = append(e.waiting[w.req.Queue], w)
	e.waitCount[groupKey{w.req.Queue, w.group}]++
}

func (e *Engine) dequeue(w *waiter) {
	list := e.waiting[w.req.Queue]
	if i := slices.Index(list, w); i >= 0 {
		list = slices.Delete(list, i, i+1)
	}
	if len(list) == 0 {
		delete(e.waiting, w.req.Queue)
	} else {
		e.waiting[w.req.Queue] = list
	}
	k := groupKey{w.req.Queue, w.group}
	if e.waitCount[k]--; e.waitCount[k] <= 0 {
		delete(e.waitCount, k)
	}
	w.queued = false
}

// answer hands a waiter its result; the caller has taken it off its list.
func (e *Engine) answer(w *waiter, res PopResult, g *grant, err error) {
	w.done, w.result, w.grant, w.err = true, res, g, err
	close(w.ch)
}

// serveWaiters re-evaluates the pops waiting on a queue, in arrival order, each as a fresh pop.
func (e *Engine) serveWaiters(name string) {
	for i := 0; i < len(e.waiting[name]); {
		w := e.waiting[name][i]
		res, g, err := e.evaluate(&w.req, w)
		if err == nil && len(res.Messages) == 0 {
			i++
			continue
		}
		e.dequeue(w)
		e.answer(w, res, g, err)
	}
}

// await parks the calling pop until it is answered, its timeout passes on real time, or its
// client goes away (R24, R142). A client gone by the time the pop is settled gets nothing, even
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
		return e.emptyResult(w.req.Queue, w.group, &w.req), nil
	}
	return w.result, w.err
}
