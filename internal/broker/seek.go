package broker

import "time"

// Seek moves a group's cursors on a queue to ts, or to the end.
func (e *Engine) Seek(group, queue string, toEnd bool, ts time.Time) (SeekResult, error) {
	e.mu.Lock()
	defer e.unlock()
	return e.gen.seek(group, queue, toEnd, ts)
}

// seek moves every partition's cursor of the group, creating the group's start when it has
// none; an unknown queue is ErrQueueNotFound.
func (e v20) seek(group, queue string, toEnd bool, ts time.Time) (SeekResult, error) {
	q := e.queues[queue]
	if q == nil {
		return SeekResult{}, ErrQueueNotFound
	}
	if group == "" {
		group = QueueMode
	}
	m := q.groups[group]
	if m == nil {
		m = &groupMeta{group: group, batch: minAutopilotBatch, start: startNew, seq: e.seq, decidedAt: e.now()}
		if !toEnd {
			m.start, m.from = startFrom, ts.UTC()
		}
		e.adoptStart(q, m)
	}
	m.decidedBy = nil
	e.completeCursors(m)
	for _, p := range q.parts {
		gc := p.groups[group]
		gc.visited = true
		e.release(gc) // the in-flight batch is abandoned, not acked
		if toEnd {
			gc.cursor = p.lastOffset()
		} else {
			gc.cursor = p.firstAtOrAfter(ts) - 1 // before the first message: read from it
		}
		gc.retries = 0
		e.clearExpired(gc) // the seek takes what an expired lease left
		e.refresh(gc)
	}
	e.wakeGroup(q.name, group)
	return SeekResult{PartitionsUpdated: len(q.parts)}, nil
}
