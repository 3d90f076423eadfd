package broker

// Progress reports how far group has come in queue: the messages after its cursors summed over
// the queue's partitions (a partition it has not reached counts from its start, or from every
// message when the group has not popped the queue yet), and whether it holds a lease there.
// changed is closed at the engine's next change of state, so a caller can wait for the answer
// to change without polling. group "" is queue mode.
func (e *Engine) Progress(queue, group string) (lag int64, leased bool, changed <-chan struct{}) {
	if group == "" {
		group = QueueMode
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	changed = e.changes.next()
	q := e.queues[queue]
	if q == nil {
		return 0, false, changed
	}
	m := q.groups[group]
	for _, p := range q.parts {
		cursor := int64(-1)
		if gc := p.groups[group]; gc != nil {
			cursor = gc.cursor
			leased = leased || gc.lease != nil
		} else if m != nil {
			cursor = m.initialCursor(p)
		}
		lag += max(p.lastOffset()-cursor, 0)
	}
	return lag, leased, changed
}
