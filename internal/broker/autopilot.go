package broker

// Autopilot batch bounds.
const (
	minAutopilotBatch = 100
	maxAutopilotBatch = 1000
	maxPartitions     = 64
)

// doubleBatch grows B after a quick full batch taken at size b; a stale b changes nothing.
func (m *groupMeta) doubleBatch(b int) {
	if b > 0 && b == m.batch {
		m.batch = min(2*m.batch, maxAutopilotBatch)
	}
}

// halveBatch shrinks B after any lease of the group on the queue expired.
func (m *groupMeta) halveBatch() {
	m.batch = max(m.batch/2, minAutopilotBatch)
}

// autopilotPartitions is ⌊ready / pops⌋ clamped to 1..64.
func autopilotPartitions(ready, pops int) int {
	if pops < 1 {
		pops = 1
	}
	return min(max(ready/pops, 1), maxPartitions)
}
