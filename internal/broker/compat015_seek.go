package broker

// A seek on 0.15. What differs from 2.0: only the partitions where the group has a cursor
// move, and their leases are released with their retry counters kept; a message exactly at
// the time is excluded; a time before a partition's first message puts the group back at its
// original start there; an unknown queue moves nothing.

import (
	"sort"
	"time"
)

// seek moves the group's cursors on the queue as 0.15 does.
func (e v015) seek(group, queueName string, toEnd bool, ts time.Time) (SeekResult, error) {
	q := e.queues[queueName]
	if q == nil {
		return SeekResult{}, nil
	}
	if group == "" {
		group = QueueMode
	}
	m := q.groups[group]
	n := 0
	for _, p := range q.parts {
		gc := p.groups[group]
		if gc == nil {
			continue
		}
		n++
		e.release(gc)
		switch {
		case toEnd:
			gc.cursor = p.lastOffset()
		case len(p.msgs) == 0 || ts.Before(p.msgs[0].createdAt):
			gc.cursor = -1
			if m != nil {
				gc.cursor = m.initialCursor(p)
			}
		default:
			gc.cursor = int64(sort.Search(len(p.msgs), func(i int) bool { return p.msgs[i].createdAt.After(ts) })) - 1
		}
		e.clearExpired(gc)
		e.refresh(gc)
	}
	e.wakeGroup(q.name, group)
	return SeekResult{PartitionsUpdated: n}, nil
}
