package broker

import (
	"sync"
	"time"

	"github.com/google/uuid"
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
// atomic step (R124).
type Engine struct {
	mu    sync.Mutex
	clock Clock
	mode  Mode

	queues       map[string]*queue
	partitions   map[string]*partition // by partition id
	queueSeq     int64
	partitionSeq int64
	seq          int64 // messages stored so far, engine-wide

	leases  map[string]*lease // live leases by id
	expired map[string]*queue // leases whose last held partition ended by expiry (R63)
	dead    map[string]*deadLetter
	deadBy  map[deadKey]*deadLetter

	// pending holds the starts decided by pops on queues not created yet, by queue then
	// group; the queue adopts them when a push or configure creates it (R102).
	pending map[string]map[string]*groupMeta

	waiting   map[string][]*waiter // by queue name, in arrival order (R24)
	waitCount map[groupKey]int     // waiting pops per (queue, group), for autopilot (R34)
	wake      map[string]struct{}  // queues whose waiting pops need a fresh look
	closed    bool

	rates throughput // messages stored and finished per second, for the overview (R170)

	parked func() // called once a pop has started waiting; lets tests know without sleeping

	changes changeFeed // wakes readers waiting for a change of state
}

type groupKey struct{ queue, group string }

// New returns an empty broker that reads time from clock.
func New(clock Clock, opts ...Option) *Engine {
	e := &Engine{
		clock:      clock,
		queues:     make(map[string]*queue),
		partitions: make(map[string]*partition),
		leases:     make(map[string]*lease),
		expired:    make(map[string]*queue),
		dead:       make(map[string]*deadLetter),
		deadBy:     make(map[deadKey]*deadLetter),
		pending:    make(map[string]map[string]*groupMeta),
		waiting:    make(map[string][]*waiter),
		waitCount:  make(map[groupKey]int),
		wake:       make(map[string]struct{}),
	}
	for _, o := range opts {
		o(e)
	}
	return e
}

// now is the engine's time at the microsecond precision the wire carries (§2.1).
func (e *Engine) now() time.Time { return e.clock.Now().UTC().Truncate(time.Microsecond) }

// unlock serves the waiting pops that the step just applied may satisfy, then releases the
// engine. Every mutating method ends with it.
func (e *Engine) unlock() {
	for len(e.wake) > 0 {
		for name := range e.wake {
			delete(e.wake, name)
			e.serveWaiters(name)
			break
		}
	}
	e.changes.changed()
	e.mu.Unlock()
}

// markWake asks unlock to re-evaluate the pops waiting on the named queue.
func (e *Engine) markWake(name string) {
	if len(e.waiting[name]) > 0 {
		e.wake[name] = struct{}{}
	}
}

// Close answers every waiting pop with its empty result at once; later pops do not wait.
func (e *Engine) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	for name, list := range e.waiting {
		for _, w := range list {
			e.answer(w, e.emptyResult(w.req.Queue, w.group, &w.req), nil, nil)
		}
		delete(e.waiting, name)
	}
	clear(e.waitCount)
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
	n := 0
	for _, list := range e.waiting {
		n += len(list)
	}
	return n
}

func newMessageID() string {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.NewString()
	}
	return id.String()
}
