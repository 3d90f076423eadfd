package broker

import "time"

// cursorState is one group's position in one partition: its cursor, the part of a lease
// it holds there, its retry budget and how often each message was handed to it.
//
// Once a group pops a queue queue-wide it has a cursorState in every partition of the queue,
// each placed at the group's start; see ready.go for when, and for the index they feed.
type cursorState struct {
	p      *partition
	ix     *groupCursors // the group's cursors on p's queue, whose ready set indexes this one
	group  string
	cursor int64 // -1 before offset 0

	lease       *lease // live lease of (partition, group), nil when free
	first, last int64  // the leased batch

	retries  int   // retry budget spent
	retryOff int64 // the message that last spent it

	attempts []int32 // deliveries per offset, kept across seeks

	consumption consumption // introspection's counters

	// 0.15 only: acks counted against ackedLease, which ends once they cover its batch.
	ackedLease *lease
	acked      int

	// visited is set once a pop of the group or a seek has looked at this partition with a
	// message in it (or a seek at all); a queue-wide pop marks every such partition at once
	// through groupCursors.sweep instead. Only visited cursors count as the group's cursors
	// (a group deletion's deletedPartitions).
	visited bool

	readyIdx int       // position in ix.ready, -1 when not ready
	readyAt  time.Time // createdAt of the first available message while ready
	slowIdx  int       // position in p.slow, -1 when not there (introspect_tally.go)
	lag      pairLag   // its part of its group's sums (introspect_grouplag.go)

	// expired is the last lease that ended by expiry while holding this partition, kept for
	// Extend's "already expired" answer until its batch is settled, a later lease here ends, a
	// seek moves the cursor or the cursor is deleted; expiredLast is its batch end.
	expired     *lease
	expiredLast int64
}

// counted reports whether the cursor counts as one the group has placed (see visited).
func (gc *cursorState) counted() bool {
	return gc.visited || (len(gc.p.msgs) > 0 && gc.p.msgs[0].seq <= gc.ix.sweep)
}

// moveTo advances the cursor (never backwards) and resets the retry budget once the cursor
// reaches the message that spent it.
func (gc *cursorState) moveTo(off int64) {
	if off > gc.cursor {
		gc.cursor = off
	}
	if gc.retries > 0 && gc.cursor >= gc.retryOff {
		gc.retries = 0
	}
}

// advance is moveTo plus what follows from the cursor moving: an expired lease's batch now
// settled is forgotten and the ready index follows.
func (e *Engine) advance(gc *cursorState, off int64) {
	gc.moveTo(off)
	e.cursorMoved(gc)
}

// cursorMoved follows a change of gc's cursor, whichever way it went.
func (e *Engine) cursorMoved(gc *cursorState) {
	if gc.expired != nil && gc.cursor >= gc.expiredLast {
		e.clearExpired(gc)
	}
	e.refresh(gc)
}

// handOut counts one more delivery of off to the group and returns the count.
func (gc *cursorState) handOut(off int64) int {
	if n := int64(len(gc.attempts)); off >= n {
		if off < int64(cap(gc.attempts)) {
			gc.attempts = gc.attempts[:off+1]
		} else {
			grown := make([]int32, off+1, 2*off+16)
			copy(grown, gc.attempts)
			gc.attempts = grown
		}
	}
	gc.attempts[off]++
	return int(gc.attempts[off])
}

func (gc *cursorState) delivered(off int64) bool {
	return off < int64(len(gc.attempts)) && gc.attempts[off] > 0
}

// available reports how many messages lie above the cursor.
func (gc *cursorState) available() int64 { return gc.p.lastOffset() - gc.cursor }
