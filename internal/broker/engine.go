package broker

import (
	"sync"
	"time"
)

// Clock is where the engine reads time and schedules lease expiries.
type Clock interface {
	Now() time.Time
	// AfterFunc runs f once the clock has moved d past now (a manual clock: inside Advance).
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a scheduled AfterFunc.
type Timer interface{ Stop() bool }

// Engine is the broker's state. Every method is safe for concurrent use and applies as one
// atomic step.
type Engine struct {
	mu    sync.Mutex
	clock Clock
	mode  Mode
	gen   generation // what the mode's generation does its own way (mode.go)

	queues       map[string]*queue
	partitions   map[string]*partition // by partition id
	queueSeq     int64
	partitionSeq int64
	seq          int64 // messages stored so far, engine-wide

	order []*queue // by creation

	leases      map[string]*lease // live leases by id
	expiries    leaseHeap         // live leases, soonest expiry first
	expired     map[string]*lease // ended by expiry and still remembered, until their messages are settled (lease.go)
	dead        map[string]*deadLetter
	deadBy      map[deadKey]*deadLetter
	deadAll     deadIndex             // every dead letter (deadletter_index.go)
	deadByGroup map[string]*deadIndex // by the group that filed them

	// pending holds the starts decided by pops on queues not created yet, by queue then
	// group; the queue adopts them when a push or configure creates it. It is bounded
	// (subscription.go).
	pending      map[string]map[string]*groupMeta
	pendingOrder []pendingEntry
	pendingSeq   int64
	pendingBytes int
	pendingCount int

	waiting     map[string]map[string]*waitList // by queue, then group (waiters.go)
	waitCount   map[groupKey]int                // waiting pops per (queue, group), for autopilot
	partWaiting map[partKey]map[string]int      // groups with pops waiting on a partition, and how many
	waitSeq     int64
	nWaiting    int
	wake        map[groupKey]*wakeNote // what the step just applied may let waiting pops take
	closed      bool

	rates        throughput   // messages stored and finished per second, for the overview
	overviewLags overviewLags // every partition's lags, for the overview (introspect_lagstats.go)

	parked      func() // called once a pop has started waiting; lets tests know without sleeping
	evaluations int    // pops looked at, waiting or not; tests count them

	changes changeFeed // wakes readers waiting for a change of state

	stepBounds stepBounds // how long a read that walks in steps holds the lock (introspect_steps.go)
}

type groupKey struct{ queue, group string }

// New returns an empty broker that reads time from clock.
func New(clock Clock, opts ...Option) *Engine {
	e := &Engine{
		clock:       clock,
		queues:      make(map[string]*queue),
		partitions:  make(map[string]*partition),
		leases:      make(map[string]*lease),
		expired:     make(map[string]*lease),
		dead:        make(map[string]*deadLetter),
		deadBy:      make(map[deadKey]*deadLetter),
		deadByGroup: make(map[string]*deadIndex),
		pending:     make(map[string]map[string]*groupMeta),
		waiting:     make(map[string]map[string]*waitList),
		waitCount:   make(map[groupKey]int),
		partWaiting: make(map[partKey]map[string]int),
		wake:        make(map[groupKey]*wakeNote),
		stepBounds:  stepBounds{time: readStep, work: stepCheck},
	}
	for _, o := range opts {
		o(e)
	}
	e.gen = generationOf(e, e.mode)
	return e
}

// Now is the time of the engine's clock.
func (e *Engine) Now() time.Time { return e.clock.Now() }

// now is the engine's time at the microsecond precision the wire carries.
func (e *Engine) now() time.Time { return e.clock.Now().UTC().Truncate(time.Microsecond) }

// unlock serves the waiting pops that the step just applied may satisfy, then releases the
// engine. Every mutating method ends with it.
func (e *Engine) unlock() {
	for len(e.wake) > 0 {
		for k, n := range e.wake {
			delete(e.wake, k)
			e.serveWaiting(k, n)
			break
		}
	}
	e.changes.changed()
	e.mu.Unlock()
}

// Close answers every waiting pop with its empty result at once; later pops do not wait.
func (e *Engine) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	for _, groups := range e.waiting {
		for _, wl := range groups {
			for _, w := range wl.wide {
				e.answer(w, e.emptyResult(w.req.Queue, w.group, &w.req), nil, nil)
			}
			for _, list := range wl.parts {
				for _, w := range list {
					e.answer(w, e.emptyResult(w.req.Queue, w.group, &w.req), nil, nil)
				}
			}
		}
	}
	clear(e.waiting)
	clear(e.waitCount)
	clear(e.partWaiting)
	clear(e.wake)
	e.nWaiting = 0
	for _, l := range e.leases {
		if l.timer != nil {
			l.timer.Stop()
		}
	}
}

// WaitingPops is how many pops are waiting right now; tests use it to know a long poll is parked.
func (e *Engine) WaitingPops() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.nWaiting
}
