package queen

import (
	"sync"
	"time"
)

// leaseDeadline is when the client believes a pop's lease runs out: the pop's time plus the
// lease, moved on by each successful renewal. One is shared by the partitions of one pop,
// which share one lease (R32).
type leaseDeadline struct {
	mu    sync.Mutex
	until time.Time
}

func newLeaseDeadline(until time.Time) *leaseDeadline { return &leaseDeadline{until: until} }

// extend moves the deadline to until, never back.
func (d *leaseDeadline) extend(until time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if until.After(d.until) {
		d.until = until
	}
}

// expired reports whether the lease has run out at now.
func (d *leaseDeadline) expired(now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return !now.Before(d.until)
}
