package broker

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"time"
)

// QueueFilter selects and pages the queue list. Empty labels do not filter.
type QueueFilter struct {
	Namespace, Task string
	Limit, Offset   int
}

// Queues answers the queue list: newest first, each with its counts, those of its slowest
// group in each partition.
func (e *Engine) Queues(f QueueFilter) QueueList {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	var matches []*queue
	for _, q := range e.queues {
		if (f.Namespace == "" || q.namespace == f.Namespace) && (f.Task == "" || q.task == f.Task) {
			matches = append(matches, q)
		}
	}
	slices.SortFunc(matches, func(a, b *queue) int { return cmp.Compare(b.order, a.order) })
	start := min(max(f.Offset, 0), len(matches))
	end := start + min(max(f.Limit, 0), len(matches)-start)
	list := QueueList{Queues: make([]QueueSummary, 0, end-start), Total: int64(len(matches))}
	for _, q := range matches[start:end] {
		list.Queues = append(list.Queues, QueueSummary{
			ID: q.id, Name: q.name, Namespace: q.namespace, Task: q.task, CreatedAt: q.created,
			Partitions: int64(len(q.parts)), Messages: queueCounts(q, now).counts(),
		})
	}
	return list
}

func queueCounts(q *queue, now time.Time) partitionCounts {
	groups := attachedGroups(q)
	var sum partitionCounts
	for _, p := range q.parts {
		sum.add(countsOf(p, groups, now))
	}
	return sum
}

// QueueDetail answers one queue's detail, or ErrQueueNotFound.
func (e *Engine) QueueDetail(name string) (QueueDetail, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	q := e.queues[name]
	if q == nil {
		return QueueDetail{}, ErrQueueNotFound
	}
	now := e.now()
	groups := attachedGroups(q)
	d := QueueDetail{
		Queue: QueueInfo{
			ID: q.id, Name: q.name, Namespace: q.namespace, Task: q.task, CreatedAt: q.created,
			Priority: q.priority(), LeaseTime: int64(q.leaseTime), RetryLimit: int64(q.retryLimit),
			DeadLetterQueue: q.deadLetterQueue, RetryDelay: q.intOption("retryDelay"), TTL: q.intOption("ttl"),
			MaxSize: q.intOption("maxSize"), Options: q.storedOptions(),
		},
		Partitions: make([]PartitionDetail, 0, len(q.parts)),
	}
	var sum partitionCounts
	for _, p := range partitionsByName(q) {
		c := countsOf(p, groups, now)
		sum.add(c)
		pd := PartitionDetail{
			ID: p.id, Name: p.name, CreatedAt: p.stats.created, LastOffset: p.lastOffset(),
			Messages: c.counts(), BatchesConsumed: p.stats.batchesConsumed,
		}
		for _, gc := range p.groups {
			pd.TotalConsumed += gc.consumption.totalConsumed
			if gc.consumption.lastConsumedAt.After(pd.LastActivity) {
				pd.LastActivity = gc.consumption.lastConsumedAt
			}
		}
		if c.slowest.oldest >= 0 {
			pd.OldestMessage = p.msgs[c.slowest.oldest].createdAt
		}
		if n := len(p.msgs); n > 0 {
			pd.NewestMessage = p.msgs[n-1].createdAt
		}
		d.Partitions = append(d.Partitions, pd)
	}
	d.Totals = sum.counts()
	return d, nil
}

func (c partitionCounts) counts() Counts {
	return Counts{
		Total: c.total, Pending: c.pending, Processing: c.processing,
		Completed: c.completed, Failed: c.failed, DeadLetter: c.deadLetter,
	}
}

// partitionsByName is q's partitions in byte order of their names.
func partitionsByName(q *queue) []*partition {
	parts := slices.Clone(q.parts)
	slices.SortFunc(parts, func(a, b *partition) int { return cmp.Compare(a.name, b.name) })
	return parts
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

// Overview answers the broker-wide overview.
func (e *Engine) Overview() Overview {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	o := Overview{Queues: int64(len(e.queues)), Timestamp: now}
	namespaces, tasks := map[string]struct{}{}, map[string]struct{}{}
	var sum partitionCounts
	var lags, timeLags []int64
	for _, q := range e.queues {
		if q.namespace != "" {
			namespaces[q.namespace] = struct{}{}
		}
		if q.task != "" {
			tasks[q.task] = struct{}{}
		}
		groups := attachedGroups(q)
		for _, p := range q.parts {
			c := countsOf(p, groups, now)
			sum.add(c)
			lags = append(lags, c.slowest.lag)
			timeLags = append(timeLags, c.slowest.timeLag)
		}
	}
	o.Partitions = int64(len(lags))
	o.Namespaces, o.Tasks = int64(len(namespaces)), int64(len(tasks))
	o.Messages = sum.counts()
	o.OffsetLag, o.TimeLag = lagStats(lags), lagStats(timeLags)
	o.IngestedPerSecond = perSecond(e.rates.ingested.sum(now))
	o.ProcessedPerSecond = perSecond(e.rates.processed.sum(now))
	return o
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
