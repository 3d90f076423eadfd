package broker

import (
	"cmp"
	"math"
	"slices"
	"strconv"
)

// QueueFilter selects and pages the queue list. Empty labels do not filter.
type QueueFilter struct {
	Namespace, Task string
	Limit, Offset   int
}

// Queues answers the queue list: newest first, each with its counts, those of its slowest
// group in each partition. It reads the counts each queue keeps: O(queues).
func (e *Engine) Queues(f QueueFilter) QueueList {
	s := e.steps()
	defer s.done()
	now, due := s.now, s.due
	var matches []*queue
	for i := len(e.order) - 1; i >= 0; i-- { // newest first
		q := e.order[i]
		if (f.Namespace == "" || q.namespace == f.Namespace) && (f.Task == "" || q.task == f.Task) {
			matches = append(matches, q)
		}
	}
	start := min(max(f.Offset, 0), len(matches))
	end := start + min(max(f.Limit, 0), len(matches)-start)
	list := QueueList{Queues: make([]QueueSummary, 0, end-start), Total: int64(len(matches))}
	for _, q := range matches[start:end] {
		list.Queues = append(list.Queues, QueueSummary{
			ID: q.id, Name: q.name, Namespace: q.namespace, Task: q.task, CreatedAt: q.created,
			Partitions: int64(len(q.parts)), Messages: queueTally(q, now, due).counts(),
		})
	}
	return list
}

// QueueDetail answers one queue's detail, or ErrQueueNotFound. It walks the partitions in
// steps; the totals are the sums of the partitions listed.
func (e *Engine) QueueDetail(name string) (QueueDetail, error) {
	s := e.steps()
	defer s.done()
	q := e.queues[name]
	if q == nil {
		return QueueDetail{}, ErrQueueNotFound
	}
	d := QueueDetail{
		Queue: QueueInfo{
			ID: q.id, Name: q.name, Namespace: q.namespace, Task: q.task, CreatedAt: q.created,
			Priority: q.priority(), LeaseTime: int64(q.leaseTime), RetryLimit: int64(q.retryLimit),
			DeadLetterQueue: q.deadLetterQueue, RetryDelay: q.intOption("retryDelay"), TTL: q.intOption("ttl"),
			MaxSize: q.intOption("maxSize"), Options: q.storedOptions(),
		},
	}
	parts := q.parts
	s.outside(func() { // a queue's partitions are only ever appended: the copy can wait
		parts = slices.Clone(parts)
		sortByName(parts)
		d.Partitions = make([]PartitionDetail, 0, len(parts))
	})
	gone := func() bool { return e.queues[name] != q }
	if gone() {
		return QueueDetail{}, ErrQueueNotFound
	}
	var sum tally
	for _, p := range parts {
		w, t := countsAt(p, s.now, s.due)
		sum.add(t)
		pd := PartitionDetail{
			ID: p.id, Name: p.name, CreatedAt: p.stats.created, LastOffset: p.lastOffset(),
			Messages: t.counts(), BatchesConsumed: p.stats.batchesConsumed,
		}
		for _, gc := range p.groups {
			pd.TotalConsumed += gc.consumption.totalConsumed
			if gc.consumption.lastConsumedAt.After(pd.LastActivity) {
				pd.LastActivity = gc.consumption.lastConsumedAt
			}
		}
		if w.oldest >= 0 {
			pd.OldestMessage = p.msgs[w.oldest].createdAt
		}
		if n := len(p.msgs); n > 0 {
			pd.NewestMessage = p.msgs[n-1].createdAt
		}
		d.Partitions = append(d.Partitions, pd)
		if s.did(1+len(p.groups)) && gone() {
			return QueueDetail{}, ErrQueueNotFound
		}
	}
	d.Totals = sum.counts()
	return d, nil
}

// sortByName orders partitions by the bytes of their names.
func sortByName(parts []*partition) {
	slices.SortFunc(parts, func(a, b *partition) int { return cmp.Compare(a.name, b.name) })
}

// intOption is a stored option when it is a JSON integer, else nil.
func (q *queue) intOption(key string) *int64 {
	raw, ok := q.options[key]
	if !ok {
		return nil
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

func (q *queue) priority() int64 {
	if p := q.intOption("priority"); p != nil {
		return *p
	}
	return 0
}

// storedOptions is the options object as configure echoes it; a queue created by a push has
// the three defaults it was created with.
func (q *queue) storedOptions() map[string][]byte {
	out := make(map[string][]byte, max(len(q.options), 3))
	if q.options == nil {
		out["leaseTime"] = []byte(strconv.Itoa(q.leaseTime))
		out["retryLimit"] = []byte(strconv.Itoa(q.retryLimit))
		out["deadLetterQueue"] = []byte(strconv.FormatBool(q.deadLetterQueue))
		return out
	}
	for k, v := range q.options {
		out[k] = slices.Clone(v)
	}
	return out
}

// Overview answers the broker-wide overview: the counts each queue keeps and the lags the
// engine keeps, O(queues) under the lock.
func (e *Engine) Overview() Overview {
	s := e.steps()
	defer s.done()
	var o Overview
	o.OffsetLag, o.TimeLag, o.Partitions = e.overviewStats(s)
	now := s.now // where a walk took steps, its last one's
	o.Queues, o.Timestamp = int64(len(e.queues)), now
	namespaces, tasks := map[string]struct{}{}, map[string]struct{}{}
	var sum tally
	for _, q := range e.order {
		if q.namespace != "" {
			namespaces[q.namespace] = struct{}{}
		}
		if q.task != "" {
			tasks[q.task] = struct{}{}
		}
		sum.add(queueTally(q, now, s.due))
	}
	o.Namespaces, o.Tasks = int64(len(namespaces)), int64(len(tasks))
	o.Messages = sum.counts()
	o.IngestedPerSecond = perSecond(e.rates.ingested.sum(now))
	o.ProcessedPerSecond = perSecond(e.rates.processed.sum(now))
	return o
}

// overviewStats are the lags' statistics at the step's now and the partitions they cover, read
// from the kept trees (once the partitions changed since the last overview are placed) with the
// partitions whose leases' expiry has passed put in at their exact views for the time of the
// read. Should the wall clock have gone back past many messages, it walks the partitions
// instead, in steps.
func (e *Engine) overviewStats(s *stepper) (offset, timeLag LagStats, partitions int64) {
	k := &e.overviewLags
	k.placeDue(s)
	for p := range s.due {
		if p.q.overview == k {
			w := p.slowest(s.now, true)
			k.place(p, &w)
		}
	}
	offset, timeLag, ok := k.stats(s.now)
	partitions = int64(k.lags.len())
	for p := range s.due {
		if p.q.overview == k {
			k.place(p, &p.held)
		}
	}
	if ok {
		return offset, timeLag, partitions
	}
	return e.walkLags(s)
}

// walkLags reads every partition's slowest view in steps and works out the lags' statistics.
func (e *Engine) walkLags(s *stepper) (offset, timeLag LagStats, partitions int64) {
	queues, n := slices.Clone(e.order), len(e.partitions)
	var lags, timeLags []int64
	s.outside(func() { // allocated outside the lock: no garbage collection work under it
		lags, timeLags = make([]int64, 0, n+n/8+64), make([]int64, 0, n+n/8+64)
	})
	for _, q := range queues {
		for i := 0; i < len(q.parts) && e.queues[q.name] == q; i++ {
			w, _ := countsAt(q.parts[i], s.now, s.due)
			lags = append(lags, w.lag)
			timeLags = append(timeLags, w.timeLag)
			s.did(1)
		}
	}
	s.outside(func() { offset, timeLag = lagStats(lags), lagStats(timeLags) })
	return offset, timeLag, int64(len(lags))
}

// lagStats: min, max, the average rounded down and the lower median; all 0 for none.
func lagStats(values []int64) LagStats {
	if len(values) == 0 {
		return LagStats{}
	}
	slices.Sort(values)
	var total int64
	for _, v := range values {
		total += v
	}
	return LagStats{
		Min: float64(values[0]), Max: float64(values[len(values)-1]),
		Avg: float64(total / int64(len(values))), Median: float64(values[(len(values)-1)/2]),
	}
}

// perSecond divides a count over the rate window, rounded half up to 2 decimals.
func perSecond(n int64) float64 {
	return math.Floor(float64(n)*100/rateWindow+0.5) / 100
}

func ptr[T any](v T) *T { return &v }
