package broker

// DeleteGroup forgets a group on one queue, or on every queue when queue is "" (R143).
func (e *Engine) DeleteGroup(group, queueName string, deleteMetadata bool) (deletedPartitions int, err error) {
	e.mu.Lock()
	defer e.unlock()
	if group == "" {
		group = QueueMode
	}
	var qs []*queue
	if queueName == "" {
		qs = e.queuesInOrder()
	} else if q := e.queues[queueName]; q != nil {
		qs = []*queue{q}
	}
	if deleteMetadata { // a start decided on a queue not created yet (R102) goes too
		for name, groups := range e.pending {
			if queueName == "" || name == queueName {
				delete(groups, group)
				if len(groups) == 0 {
					delete(e.pending, name)
				}
			}
		}
	}
	found := false
	for _, q := range qs {
		if q.groups[group] != nil {
			found = true
			if deleteMetadata {
				delete(q.groups, group)
			}
		}
		for _, p := range q.parts {
			gc := p.groups[group]
			if gc == nil {
				continue
			}
			found = true
			deletedPartitions++
			if gc.lease != nil {
				e.forgetLease(gc.lease)
			}
			delete(p.groups, group)
		}
	}
	if !found {
		return 0, ErrGroupNotFound
	}
	return deletedPartitions, nil
}

// DeleteQueue removes a queue and all its state (R141). Pops waiting on it keep waiting.
func (e *Engine) DeleteQueue(queue string) error {
	e.mu.Lock()
	defer e.unlock()
	q := e.queues[queue]
	if q == nil {
		return ErrQueueNotFound
	}
	for _, l := range e.leases {
		if l.q == q {
			e.forgetLease(l)
		}
	}
	for id, lq := range e.expired {
		if lq == q {
			delete(e.expired, id)
		}
	}
	for _, d := range e.dead {
		if d.p.q == q {
			e.dropDeadLetter(d)
		}
	}
	for _, p := range q.parts {
		delete(e.partitions, p.id)
	}
	delete(e.queues, queue)
	return nil
}
