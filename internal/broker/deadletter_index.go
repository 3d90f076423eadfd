package broker

import (
	"slices"
	"sort"
)

// The dead-letter list is served from indexes rather than a scan and sort of every dead letter.
// Each deadIndex holds its dead letters oldest first (failedAt ascending, then id
// descending), the listing order reversed, so that a new filing appends and a listing reads
// backwards from the end. Every dead letter is in five of them: the engine's, its group's, its
// queue's, its (queue, group)'s and its partition's; an index left empty is dropped.

type deadIndex []*deadLetter

// deadBefore is the index order: older first, and among equal times the larger id first.
func deadBefore(a, b *deadLetter) bool {
	if !a.failedAt.Equal(b.failedAt) {
		return a.failedAt.Before(b.failedAt)
	}
	return a.id > b.id
}

func (x *deadIndex) insert(d *deadLetter) {
	s := *x
	i := sort.Search(len(s), func(i int) bool { return deadBefore(d, s[i]) })
	*x = slices.Insert(s, i, d)
}

// remove takes d out; d's failedAt must be the one it was inserted with.
func (x *deadIndex) remove(d *deadLetter) {
	s := *x
	i := sort.Search(len(s), func(i int) bool { return !deadBefore(s[i], d) })
	if i < len(s) && s[i] == d {
		*x = slices.Delete(s, i, i+1)
	}
}

// deadIndexes are the indexes one dead letter belongs to.
func (e *Engine) deadIndexes(d *deadLetter, create bool) []*deadIndex {
	q := d.p.q
	out := []*deadIndex{&e.deadAll, &q.dead, &d.p.dead}
	for _, m := range []struct {
		idx map[string]*deadIndex
		key string
	}{{e.deadByGroup, d.group}, {q.deadByGroup, d.group}} {
		x := m.idx[m.key]
		if x == nil && create {
			x = &deadIndex{}
			m.idx[m.key] = x
		}
		if x != nil {
			out = append(out, x)
		}
	}
	return out
}

func (e *Engine) indexDead(d *deadLetter) {
	for _, x := range e.deadIndexes(d, true) {
		x.insert(d)
	}
}

func (e *Engine) unindexDead(d *deadLetter) {
	for _, x := range e.deadIndexes(d, false) {
		x.remove(d)
	}
	if x := e.deadByGroup[d.group]; x != nil && len(*x) == 0 {
		delete(e.deadByGroup, d.group)
	}
	if x := d.p.q.deadByGroup[d.group]; x != nil && len(*x) == 0 {
		delete(d.p.q.deadByGroup, d.group)
	}
}

// unindexQueue drops every dead letter of q from the engine-wide indexes in one pass each.
func (e *Engine) unindexQueue(q *queue) {
	ofQ := func(d *deadLetter) bool { return d.p.q == q }
	e.deadAll = slices.DeleteFunc(e.deadAll, ofQ)
	for group := range q.deadByGroup {
		if x := e.deadByGroup[group]; x != nil {
			if *x = slices.DeleteFunc(*x, ofQ); len(*x) == 0 {
				delete(e.deadByGroup, group)
			}
		}
	}
}

// deadSource picks the narrowest index for q's filters, and says which filters it leaves to
// check one by one; nil when a named queue or partition does not exist.
func (e *Engine) deadSource(f DLQQuery) (x deadIndex, checkGroup, checkPartition bool) {
	if f.Queue == "" {
		if f.Group != "" {
			if gx := e.deadByGroup[f.Group]; gx != nil {
				return *gx, false, f.Partition != ""
			}
			return nil, false, false
		}
		return e.deadAll, false, f.Partition != ""
	}
	q := e.queues[f.Queue]
	if q == nil {
		return nil, false, false
	}
	if f.Partition != "" {
		p := q.byName[f.Partition]
		if p == nil {
			return nil, false, false
		}
		return p.dead, f.Group != "", false
	}
	if f.Group != "" {
		if gx := q.deadByGroup[f.Group]; gx != nil {
			return *gx, false, false
		}
		return nil, false, false
	}
	return q.dead, false, false
}

// DeadLetters lists dead letters and the count of matches before Limit/Offset.
func (e *Engine) DeadLetters(f DLQQuery) (list []DeadLetter, total int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, checkGroup, checkPartition := e.deadSource(f)
	lo, hi := 0, len(x)
	if f.From != nil {
		lo = sort.Search(len(x), func(i int) bool { return !x[i].failedAt.Before(*f.From) })
	}
	if f.To != nil {
		hi = sort.Search(len(x), func(i int) bool { return x[i].failedAt.After(*f.To) })
	}
	hi = max(hi, lo)
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	skip := max(f.Offset, 0)
	if !checkGroup && !checkPartition {
		total = hi - lo
		start := min(skip, total)
		n := min(limit, total-start) // no overflow for a huge limit
		list = make([]DeadLetter, 0, n)
		for i := hi - 1 - start; i >= hi-start-n; i-- {
			list = append(list, x[i].view())
		}
		return list, total
	}
	list = []DeadLetter{}
	for i := hi - 1; i >= lo; i-- {
		d := x[i]
		if (checkGroup && d.group != f.Group) || (checkPartition && d.p.name != f.Partition) {
			continue
		}
		if total >= skip && len(list) < limit {
			list = append(list, d.view())
		}
		total++
	}
	return list, total
}
