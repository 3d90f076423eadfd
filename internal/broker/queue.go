package broker

import (
	"math"
	"time"

	"github.com/google/uuid"
)

// Defaults of a queue created by a push or configured without options.
const (
	defaultLeaseSeconds = 60
	defaultRetryLimit   = 3
	defaultPartition    = "Default"
)

// queue holds its options, its partitions in creation order and each group's stored start.
type queue struct {
	id, name, namespace, task string
	order                     int64
	created                   time.Time

	leaseTime       int // seconds; 0 means 60
	retryLimit      int
	deadLetterQueue bool
	options         map[string][]byte

	parts   []*partition
	byName  map[string]*partition
	groups  map[string]*groupMeta
	cursors map[string]*groupCursors // each group's cursors here and their ready set (ready.go)

	dead        deadIndex             // its dead letters (deadletter_index.go)
	deadByGroup map[string]*deadIndex // by the group that filed them

	sum       tally                // its partitions' tallies summed (introspect_tally.go)
	special   []string             // the attached groups its partitions' heaps may not cover, in byte order
	groupLags map[string]*groupLag // each attached group's sums (introspect_grouplag.go)
	overview  *overviewLags        // the engine's lag trees, which hold its partitions; nil once deleted
}

// queueFor returns the named queue, creating it with the push defaults.
func (e *Engine) queueFor(name string) *queue {
	if q := e.queues[name]; q != nil {
		return q
	}
	e.queueSeq++
	q := &queue{
		id:              uuid.NewString(),
		name:            name,
		order:           e.queueSeq,
		created:         e.now(),
		leaseTime:       e.gen.defaultLease(),
		retryLimit:      defaultRetryLimit,
		deadLetterQueue: e.gen.deadLetterDefault(),
		byName:          make(map[string]*partition),
		groups:          make(map[string]*groupMeta),
		cursors:         make(map[string]*groupCursors),
		deadByGroup:     make(map[string]*deadIndex),
		groupLags:       make(map[string]*groupLag),
		overview:        &e.overviewLags,
	}
	q.namespace = e.gen.createdNamespace(name) // a configure creating it names its own
	e.queues[name] = q
	e.order = append(e.order, q)
	e.takePending(q)    // starts decided before the queue existed
	e.wakeQueue(q.name) // its waiting pops decide their starts now
	return q
}

// partitionFor returns the named partition of q, creating it; "" names Default.
func (e *Engine) partitionFor(q *queue, name string) *partition {
	if name == "" {
		name = defaultPartition
	}
	if p := q.byName[name]; p != nil {
		return p
	}
	e.partitionSeq++
	p := &partition{
		id:     uuid.NewString(),
		name:   name,
		q:      q,
		order:  e.partitionSeq,
		byTx:   make(map[string]int64),
		groups: make(map[string]*cursorState),
		stats:  partitionStats{created: e.now()},
	}
	q.parts = append(q.parts, p)
	q.byName[name] = p
	e.partitions[p.id] = p
	p.recount()
	for _, m := range q.groups {
		if m.complete {
			e.placeCursor(p, m.group, m.initialCursor(p))
		}
	}
	e.wakePartition(q.name, name) // pops waiting for this partition look again
	return p
}

// leaseDuration is a pop's lease: leaseSeconds when sent, else the queue's leaseTime.
func (q *queue) leaseDuration(leaseSeconds int) time.Duration {
	s := leaseSeconds
	if s <= 0 {
		s = q.leaseTime
	}
	if s <= 0 {
		s = defaultLeaseSeconds
	}
	return seconds(s)
}

// maxLeaseSeconds is the longest lease a time.Duration holds (about 292 years).
const maxLeaseSeconds = int64(math.MaxInt64 / int64(time.Second))

// seconds converts a positive count of seconds, clamping one too long for a time.Duration.
func seconds(s int) time.Duration { return time.Duration(min(int64(s), maxLeaseSeconds)) * time.Second }
