package queen

import (
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// outageGate keeps a consume loop's pollers from hammering a broker that fails: after a failed
// pop, one poller at a time probes the broker, after a jittered backoff that grows with each
// failed probe (250ms to 10s), while the others wait until a pop gets through. A failing
// broker so sees one pop per backoff period, whatever the number of pollers (plus the
// transport's own retries of that pop, WithRetry).
type outageGate struct {
	mu      sync.Mutex
	bo      *backoff.ExponentialBackOff
	down    bool          // the last pop failed
	probing bool          // a poller is sending the probe
	until   time.Time     // no probe before
	changed chan struct{} // closed and replaced on every change of state
}

func newOutageGate() *outageGate {
	return &outageGate{bo: newFailureBackoff(), changed: make(chan struct{})}
}

// enter waits until the caller may send a pop: at once while the broker answers; during an
// outage, once the backoff has passed and no other poller is probing, as the probe.
// ok is false when stop closed first.
func (g *outageGate) enter(stop <-chan struct{}) (probe, ok bool) {
	for {
		g.mu.Lock()
		if !g.down {
			g.mu.Unlock()
			return false, true
		}
		wait := time.Until(g.until)
		if !g.probing && wait <= 0 {
			g.probing = true
			g.mu.Unlock()
			return true, true
		}
		changed := g.changed
		g.mu.Unlock()

		if !waitChange(changed, wait, stop) {
			return false, false
		}
	}
}

// waitChange waits for changed to close or wait to pass (if positive); false when stop
// closed first.
func waitChange(changed <-chan struct{}, wait time.Duration, stop <-chan struct{}) bool {
	var fired <-chan time.Time
	if wait > 0 {
		timer := time.NewTimer(wait)
		defer timer.Stop()
		fired = timer.C
	}
	select {
	case <-changed:
		return true
	case <-fired:
		return true
	case <-stop:
		return false
	}
}

// failed records a failed pop. The first failure starts the outage; after that only a failed
// probe counts (pops already in flight when the outage began fail together, as one).
func (g *outageGate) failed(probe bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case !g.down:
		g.down = true
	case probe:
		g.probing = false
	default:
		return
	}
	g.until = time.Now().Add(g.bo.NextBackOff())
	g.notifyLocked()
}

// recovered records a pop the broker answered: the outage, if any, is over.
func (g *outageGate) recovered() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.down {
		g.down, g.probing = false, false
		g.bo.Reset()
		g.notifyLocked()
	}
}

func (g *outageGate) notifyLocked() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// Backoff after a failed pop: jittered, growing from 250ms to 10s, never giving up. A broker
// answering every pop with an error sees a handful of requests per second at most (the
// transport's own retries included), then fewer.
func newFailureBackoff() *backoff.ExponentialBackOff {
	return backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(250*time.Millisecond),
		backoff.WithMaxInterval(10*time.Second),
		backoff.WithRandomizationFactor(0.5),
		backoff.WithMultiplier(2),
		backoff.WithMaxElapsedTime(0),
	)
}
