package queen

import (
	"sync"
	"time"
)

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
