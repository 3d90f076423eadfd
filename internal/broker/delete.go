package broker

import "slices"

// DeleteGroup forgets a group on one queue, or on every queue when queue is "".
func (e *Engine) DeleteGroup(group, queueName string, deleteMetadata bool) (deletedPartitions int, err error) {
	e.mu.Lock()
	defer e.unlock()
	if group == "" {
		group = QueueMode
	}
	var qs []*queue
	if queueName == "" {
		qs = e.order
	} else if q := e.queues[queueName]; q != nil {
		qs = []*queue{q}
	}
	if deleteMetadata { // a start decided on a queue not created yet goes too
		if queueName == "" {
			for name := range e.pending {
				e.dropPending(name, group)
			}
		} else {
			e.dropPending(queueName, group)
		}
	}
	found := false
	for _, q := range qs {
		m := q.groups[group]
		if m == nil && q.cursors[group] == nil {
			continue
		}
		found = true
		if deleteMetadata {
			delete(q.groups, group)
		}
		deletedPartitions += e.dropCursors(q, group)
		if m != nil {
			m.complete = false // the kept start places them afresh, as the next pop would
		}
		e.groupChanged(q, group)
		e.wakeGroup(q.name, group)
	}
	if !found {
		return 0, ErrGroupNotFound
	}
	return deletedPartitions, nil
}

// DeleteQueue removes a queue and all its state. Pops waiting on it keep waiting.
func (e *Engine) DeleteQueue(queue string) error {
	e.mu.Lock()
	defer e.unlock()
	q := e.queues[queue]
	if q == nil {
		return ErrQueueNotFound
	}
	for group := range q.cursors {
		e.dropCursors(q, group)
	}
	e.unindexQueue(q)
	for _, d := range q.dead {
		delete(e.dead, d.id)
		delete(e.deadBy, deadKey{d.p, d.off, d.group})
	}
	for _, p := range q.parts {
		delete(e.partitions, p.id)
		q.overview.forget(p)
	}
	q.overview = nil
	delete(e.queues, queue)
	if i := slices.Index(e.order, q); i >= 0 {
		e.order = slices.Delete(e.order, i, i+1)
	}
	return nil
}
