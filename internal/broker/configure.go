package broker

import (
	"strconv"
)

// Configure creates or reconfigures a queue. Options are replaced, not merged.
func (e *Engine) Configure(r ConfigureRequest) ConfigureResult {
	e.mu.Lock()
	defer e.unlock()
	q := e.queueFor(r.Queue)
	p := e.partitionFor(q, defaultPartition)
	q.namespace, q.task = r.Namespace, r.Task
	q.leaseTime, q.retryLimit, q.deadLetterQueue = e.gen.defaultLease(), defaultRetryLimit, e.gen.deadLetterDefault()
	if r.LeaseTime != nil {
		q.leaseTime = *r.LeaseTime
	}
	if r.RetryLimit != nil {
		q.retryLimit = *r.RetryLimit
	}
	if r.DeadLetterQueue != nil {
		q.deadLetterQueue = *r.DeadLetterQueue
	}
	opts := make(map[string][]byte, len(r.Options)+3)
	for k, v := range r.Options {
		opts[k] = v
	}
	opts["leaseTime"] = []byte(strconv.Itoa(q.leaseTime))
	opts["retryLimit"] = []byte(strconv.Itoa(q.retryLimit))
	opts["deadLetterQueue"] = []byte(strconv.FormatBool(q.deadLetterQueue))
	q.options = opts
	echo := make(map[string][]byte, len(opts))
	for k, v := range opts {
		echo[k] = v
	}
	return ConfigureResult{
		QueueID: q.id, PartitionID: p.id, Queue: q.name,
		Namespace: q.namespace, Task: q.task, Options: echo,
	}
}
