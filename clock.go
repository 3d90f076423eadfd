package queen

import "time"

// clock is a client's time for its leases: when the lease of a consume loop's batch runs out,
// when a renewal is due, when a held-back ack may go, how long a handler has run, and when a
// handler call's HandlerTimeout ends it. A client has one; tests replace it with a clock that
// moves only when they say, before the client is used.
type clock interface {
	Now() time.Time
	// After returns a channel that receives once d has passed, and a func that stops it.
	After(d time.Duration) (<-chan time.Time, func())
	// AfterFunc calls f in its own goroutine once d has passed, unless stop is called first.
	AfterFunc(d time.Duration, f func()) (stop func())
}

// realClock is the clock of the wall.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) After(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }
}

func (realClock) AfterFunc(d time.Duration, f func()) func() {
	t := time.AfterFunc(d, f)
	return func() { t.Stop() }
}
