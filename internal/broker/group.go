package broker

// cursorState is one group's position in one partition (R18): its cursor, the part of a lease
// it holds there, its retry budget and how often each message was handed to it.
type cursorState struct {
	p      *partition
	group  string
	cursor int64 // -1 before offset 0

	lease       *lease // live lease of (partition, group), nil when free
	first, last int64  // the leased batch (R50)

	retries  int   // retry budget spent (R90)
	retryOff int64 // the message that last spent it (R92)

	attempts []int32 // deliveries per offset, kept across seeks (R57, R58)

	consumption consumption // introspection's counters (R156)

	// 0.15 only: acks counted against ackedLease, which ends once they cover its batch (O17).
	ackedLease *lease
	acked      int
}

// cursorOf returns the group's cursor in p, placing a new one at the group's start (R102, R108).
func (e *Engine) cursorOf(p *partition, group string, m *groupMeta) *cursorState {
	if gc := p.groups[group]; gc != nil {
		return gc
	}
	gc := &cursorState{p: p, group: group, cursor: m.initialCursor(p)}
	p.groups[group] = gc
	return gc
}

// moveTo advances the cursor (never backwards, R68) and resets the retry budget once the cursor
// reaches the message that spent it (R92).
func (gc *cursorState) moveTo(off int64) {
	if off > gc.cursor {
		gc.cursor = off
	}
	if gc.retries > 0 && gc.cursor >= gc.retryOff {
		gc.retries = 0
	}
}

// handOut counts one more delivery of off to the group and returns the count (R57).
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
