package broker

import (
	"runtime"
	"time"
)

// A read that must walk partitions or (group, partition) pairs (a queue detail, the group
// list and a group's detail, the lagging list, a browse, the overview's lags) walks them in
// steps: it holds the engine's lock for about readStep at a time, then lets the writers waiting
// for it in before going on, so that introspection never stalls consuming. Each partition's
// numbers are read within one step, at that step's now; what changed between two steps shows
// in the partitions read after it.

// readStep is how long one step of a read holds the engine's lock, and stepCheck how many
// units of work (a group's view of a partition, about) a step does between two looks at the time.
const (
	readStep  = 250 * time.Microsecond
	stepCheck = 64
)

// stepBounds are a read's step bounds: readStep and stepCheck, unless a test asks for shorter
// steps.
type stepBounds struct {
	time    time.Duration
	work    int
	onPause func()              // called between two steps, without the lock; tests only
	observe func(time.Duration) // WithReadStepObserver's
}

// WithReadStepObserver has the engine call observe with how long each step of an introspection
// read held its lock (every such read takes the lock through steps, a short one in one step).
// Benchmarks use it; observe must be quick and must not call the engine.
func WithReadStepObserver(observe func(time.Duration)) Option {
	return func(e *Engine) { e.stepBounds.observe = observe }
}

// stepper holds the engine's lock for a read that walks in steps.
type stepper struct {
	e     *Engine
	since time.Time           // when the step began, on the wall clock
	work  int                 // units done since the last look at the time
	now   time.Time           // the engine's time in this step
	stale []*cursorState      // held by leases whose expiry has passed at now (dueHolds)
	due   map[*partition]bool // their partitions
}

// steps locks the engine for a read that walks in steps; done unlocks it.
func (e *Engine) steps() *stepper {
	e.mu.Lock()
	s := &stepper{e: e}
	s.begin()
	return s
}

func (s *stepper) begin() {
	s.since, s.work = time.Now(), 0
	s.now = s.e.now()
	s.stale, s.due = s.e.dueHolds(s.now)
}

// did counts units of work done; once the step has held the lock for readStep, it lets the
// waiting writers in and begins the next step, and reports true: what the caller read from the
// state before may have changed.
func (s *stepper) did(units int) bool {
	b := &s.e.stepBounds
	if s.work += units; s.work < b.work {
		return false
	}
	s.work = 0
	if time.Since(s.since) < b.time {
		return false
	}
	s.pause()
	return true
}

// pause releases the lock, lets a waiting writer take it, and takes it back.
func (s *stepper) pause() {
	s.unlock()
	runtime.Gosched() // a writer woken by the unlock runs before this read locks again
	if f := s.e.stepBounds.onPause; f != nil {
		f()
	}
	s.e.mu.Lock()
	s.begin()
}

// outside runs f without the lock (work on what the read has copied, such as a sort), then
// begins a new step.
func (s *stepper) outside(f func()) {
	s.unlock()
	f()
	s.e.mu.Lock()
	s.begin()
}

func (s *stepper) done() { s.unlock() }

func (s *stepper) unlock() {
	held := time.Since(s.since)
	s.e.mu.Unlock()
	if f := s.e.stepBounds.observe; f != nil {
		f(held)
	}
}
