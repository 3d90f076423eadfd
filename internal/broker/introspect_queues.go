package broker

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/queenmq/queen-go/internal/wire"
)

// QueueFilter selects and pages the queue list (R158). Empty labels do not filter.
type QueueFilter struct {
	Namespace, Task string
	Limit, Offset   int
}

// Queues answers the queue list (R158): newest first, each with its R157 counts.
func (e *Engine) Queues(f QueueFilter) wire.QueueList {
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
	total := int64(len(matches))
	start := min(max(f.Offset, 0), len(matches))
	end := start + min(max(f.Limit, 0), len(matches)-start)
	list := wire.QueueList{
		Queues:     make([]wire.QueueSummary, 0, end-start),
		Pagination: wire.Pagination{Limit: int64(f.Limit), Offset: int64(f.Offset)},
		Total:      &total,
	}
	for _, q := range matches[start:end] {
		c := queueCounts(q, now)
		list.Queues = append(list.Queues, wire.QueueSummary{
			ID: q.id, Name: q.name, Namespace: q.namespace, Task: q.task, CreatedAt: wire.At(q.created),
			Partitions: int64(len(q.parts)),
			Messages: wire.SummaryCounts{
				Total: c.total, Pending: c.pending, Processing: c.processing,
				Completed: ptr(c.completed), DeadLetter: ptr(c.deadLetter),
			},
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

// QueueDetail answers one queue's detail (R159), or ErrQueueNotFound.
func (e *Engine) QueueDetail(name string) (wire.QueueDetail, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	q := e.queues[name]
	if q == nil {
		return wire.QueueDetail{}, ErrQueueNotFound
	}
	now := e.now()
	groups := attachedGroups(q)
	d := wire.QueueDetail{
		Queue: wire.QueueDetailQueue{
			ID: q.id, Name: q.name, Namespace: q.namespace, Task: q.task, CreatedAt: wire.At(q.created),
			Priority: q.priority(),
			Config: wire.QueueConfig{
				LeaseTime: int64(q.leaseTime), RetryLimit: int64(q.retryLimit), DeadLetterQueue: q.deadLetterQueue,
				RetryDelay: q.intOption("retryDelay"), TTL: q.intOption("ttl"), MaxQueueSize: q.intOption("maxSize"),
			},
			Options: q.storedOptions(),
		},
		Partitions: make([]wire.PartitionDetail, 0, len(q.parts)),
	}
	var sum partitionCounts
	for _, p := range partitionsByName(q) {
		c := countsOf(p, groups, now)
		sum.add(c)
		pd := wire.PartitionDetail{
			ID: p.id, Name: p.name, CreatedAt: wire.At(p.stats.created), LastOffset: ptr(p.lastOffset()),
			Messages: c.wire(), Stats: c.wire(),
			Cursor: wire.PartitionCursor{BatchesConsumed: p.stats.batchesConsumed},
		}
		var lastActivity time.Time
		for _, gc := range p.groups {
			pd.Cursor.TotalConsumed += gc.consumption.totalConsumed
			if gc.consumption.lastConsumedAt.After(lastActivity) {
				lastActivity = gc.consumption.lastConsumedAt
			}
		}
		pd.LastActivity = wire.AtOrNil(lastActivity)
		if c.slowest.oldest >= 0 {
			pd.OldestMessage = wire.AtOrNil(p.msgs[c.slowest.oldest].createdAt)
		}
		if n := len(p.msgs); n > 0 {
			pd.NewestMessage = wire.AtOrNil(p.msgs[n-1].createdAt)
		}
		d.Partitions = append(d.Partitions, pd)
	}
	d.Totals = wire.QueueTotals{Messages: sum.wire(), Counts: sum.wire()}
	return d, nil
}

func (c partitionCounts) wire() wire.Counts {
	return wire.Counts{
		Total: c.total, Pending: c.pending, Processing: c.processing,
		Completed: c.completed, Failed: c.failed, DeadLetter: c.deadLetter,
	}
}

// partitionsByName is q's partitions in byte order of their names (R159, R162).
func partitionsByName(q *queue) []*partition {
	parts := slices.Clone(q.parts)
	slices.SortFunc(parts, func(a, b *partition) int { return cmp.Compare(a.name, b.name) })
	return parts
}

// intOption is a stored option when it is a JSON integer, else nil (R159).
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
func (q *queue) storedOptions() map[string]wire.Value {
	out := make(map[string]wire.Value, max(len(q.options), 3))
	if q.options == nil {
		out["leaseTime"] = wire.Value(strconv.Itoa(q.leaseTime))
		out["retryLimit"] = wire.Value(strconv.Itoa(q.retryLimit))
		out["deadLetterQueue"] = wire.Value(strconv.FormatBool(q.deadLetterQueue))
		return out
	}
	for k, v := range q.options {
		out[k] = wire.Value(slices.Clone(v))
	}
	return out
}

// Overview answers the broker-wide overview (R170).
func (e *Engine) Overview() wire.Overview {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	o := wire.Overview{Queues: int64(len(e.queues)), Timestamp: wire.At(now)}
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
	o.Messages = sum.wire()
	o.Lag = wire.Lag{Offset: lagStats(lags), Time: lagStats(timeLags)}
	o.Throughput = wire.Throughput{
		IngestedPerSecond:  perSecond(e.rates.ingested.sum(now)),
		ProcessedPerSecond: perSecond(e.rates.processed.sum(now)),
	}
	return o
}

// lagStats: min, max, the average rounded down and the lower median; all 0 for none (R170).
func lagStats(values []int64) wire.LagStats {
	if len(values) == 0 {
		return wire.LagStats{}
	}
	slices.Sort(values)
	var total int64
	for _, v := range values {
		total += v
	}
	return wire.LagStats{
		Min: float64(values[0]), Max: float64(values[len(values)-1]),
		Avg: float64(total / int64(len(values))), Median: float64(values[(len(values)-1)/2]),
	}
}

// perSecond divides a count over the rate window, rounded half up to 2 decimals (R170).
func perSecond(n int64) float64 {
	return math.Floor(float64(n)*100/rateWindow+0.5) / 100
}

func ptr[T any](v T) *T { return &v }
