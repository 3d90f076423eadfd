package queen

import (
	"time"

	"github.com/cenkalti/backoff/v4"
)

// outage tracks a broker that fails the fetch loop's pops. After a failed pop the loop waits a
// jittered backoff that grows with each failure (250ms to 10s) before it sends the next one,
// so a failing broker sees one pop per backoff period (plus the transport's own retries of
// that pop, WithRetry). Only the fetch loop uses it.
type outage struct {
	bo       *backoff.ExponentialBackOff
	down     bool
	since    time.Time
	failures int
}

func newOutage() *outage { return &outage{bo: newFailureBackoff()} }

// failed records a failed pop and returns how long to wait before the next one, and whether
// this failure began the outage.
func (o *outage) failed() (wait time.Duration, began bool) {
	o.failures++
	if !o.down {
		o.down, o.since, began = true, time.Now(), true
	}
	return o.bo.NextBackOff(), began
}

// recovered records a pop the broker answered. ended is true when it ended an outage, which
// then lasted that long over that many failed pops.
func (o *outage) recovered() (ended bool, lasted time.Duration, failures int) {
	if !o.down {
		return false, 0, 0
	}
	ended, lasted, failures = true, time.Since(o.since), o.failures
	o.down, o.failures = false, 0
	o.bo.Reset()
	return ended, lasted, failures
}

// Backoff after a failed pop: jittered, growing from 250ms to 10s, never giving up. A broker
// answering every pop with an error sees a handful of requests per second at most (the
// transport's own retries included), then fewer.
func newFailureBackoff() *backoff.ExponentialBackOff {
	return newGrowingBackoff(250*time.Millisecond, 10*time.Second)
}

// newGrowingBackoff is the loop's waits between tries: from initial, doubling up to max, each
// ±50 % at random, never giving up.
func newGrowingBackoff(initial, max time.Duration) *backoff.ExponentialBackOff {
	return backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(initial),
		backoff.WithMaxInterval(max),
		backoff.WithRandomizationFactor(0.5),
		backoff.WithMultiplier(2),
		backoff.WithMaxElapsedTime(0),
	)
}
