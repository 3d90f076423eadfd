package broker

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The full computation that the kept counts replaced, kept as their oracle: the attached groups
// found by scanning every partition, and every attached group's view of every partition, the
// slowest one taken.

func attachedByScan(q *queue) []string {
	seen := map[string]struct{}{}
	for g := range q.groups {
		seen[g] = struct{}{}
	}
	for _, p := range q.parts {
		for g := range p.groups {
			seen[g] = struct{}{}
		}
	}
	names := make([]string, 0, len(seen))
	for g := range seen {
		names = append(names, g)
	}
	slices.Sort(names)
	return names
}

func slowestByScan(p *partition, groups []string, now time.Time) groupView {
	if len(groups) == 0 {
		return viewOf(p, QueueMode, nil, now)
	}
	var best groupView
	for i, g := range groups {
		v := viewOf(p, g, p.q.groups[g], now)
		if i == 0 || v.lag > best.lag || (v.lag == best.lag && slowerTie(v.group, best.group)) {
			best = v
		}
	}
	return best
}

// recounted is one partition's numbers as the oracle finds them.
type recounted struct {
	counts  Counts
	lag     int64
	timeLag int64
	oldest  time.Time // zero when nothing is owed
}

func recount(p *partition, groups []string, now time.Time) recounted {
	w := slowestByScan(p, groups, now)
	r := recounted{lag: w.lag, timeLag: w.timeLag}
	c := &r.counts
	c.Total, c.Pending, c.Processing, c.DeadLetter = int64(len(p.msgs)), w.pending, w.processing, p.stats.dead
	c.Completed = c.Total - c.Pending - c.Processing
	if w.gc != nil && w.gc.retries > 0 {
		c.Failed = 1
	}
	if w.oldest >= 0 {
		r.oldest = p.msgs[w.oldest].createdAt
	}
	return r
}

// summaryByScan is a group summary's sums over every partition's view at now.
func summaryByScan(q *queue, group string, now time.Time) GroupSummary {
	sum := GroupSummary{Name: group, Queue: q.name}
	active := false
	for _, p := range q.parts {
		v := viewOf(p, group, q.groups[group], now)
		if v.gc != nil && len(v.gc.attempts) > 0 {
			sum.Members++
		}
		if v.lag > 0 {
			sum.PartitionsWithLag++
		}
		sum.TotalLag += v.lag
		sum.MaxTimeLag = max(sum.MaxTimeLag, v.timeLag)
		active = active || v.live != nil || (v.gc != nil && !v.gc.consumption.lastConsumedAt.IsZero())
	}
	m := q.groups[group]
	sum.Conflation = m != nil && m.conflation
	sum.State = groupState(sum.MaxTimeLag, active)
	sum.Subscription = subscriptionOf(group, m)
	return sum
}

func addCounts(a *Counts, b Counts) {
	a.Total += b.Total
	a.Pending += b.Pending
	a.Processing += b.Processing
	a.Completed += b.Completed
	a.Failed += b.Failed
	a.DeadLetter += b.DeadLetter
}

// checkKeptCounts compares what the queue list, every queue detail, the group list and the
// overview answer with the oracle's full recount of the same state.
func checkKeptCounts(t *testing.T, e *Engine, step string) {
	t.Helper()
	type queueWant struct {
		sum   Counts
		parts map[string]recounted
		n     int
	}
	wants := map[string]*queueWant{}
	var all Counts
	var lags, timeLags []int64
	var summaries []GroupSummary
	e.mu.Lock()
	now := e.now()
	for _, q := range e.order {
		groups := attachedByScan(q)
		require.Equal(t, groups, attachedGroups(q), "%s: the groups attached to %s", step, q.name)
		for _, g := range groups {
			summaries = append(summaries, summaryByScan(q, g, now))
		}
		w := &queueWant{parts: map[string]recounted{}, n: len(q.parts)}
		for _, p := range q.parts {
			r := recount(p, groups, now)
			w.parts[p.name] = r
			addCounts(&w.sum, r.counts)
			lags, timeLags = append(lags, r.lag), append(timeLags, r.timeLag)
		}
		addCounts(&all, w.sum)
		wants[q.name] = w
	}
	e.mu.Unlock()

	list := e.Queues(QueueFilter{Limit: 1000})
	require.Len(t, list.Queues, len(wants), step)
	for _, s := range list.Queues {
		require.Equal(t, wants[s.Name].sum, s.Messages, "%s: queue %s in the list", step, s.Name)
		require.Equal(t, int64(wants[s.Name].n), s.Partitions, step)
	}
	for name, w := range wants {
		d, err := e.QueueDetail(name)
		require.NoError(t, err)
		require.Equal(t, w.sum, d.Totals, "%s: totals of %s", step, name)
		require.Len(t, d.Partitions, w.n, step)
		for _, pd := range d.Partitions {
			r := w.parts[pd.Name]
			require.Equal(t, r.counts, pd.Messages, "%s: partition %s/%s", step, name, pd.Name)
			require.Equal(t, r.oldest, pd.OldestMessage, "%s: oldest owed in %s/%s", step, name, pd.Name)
		}
	}
	sortGroupSummaries(summaries)
	if summaries == nil {
		summaries = []GroupSummary{}
	}
	require.Equal(t, summaries, e.ConsumerGroups("", Page{}), "%s: the group list", step)
	o := e.Overview()
	require.Equal(t, all, o.Messages, "%s: the overview's counts", step)
	require.Equal(t, int64(len(lags)), o.Partitions, step)
	require.Equal(t, lagStats(lags), o.OffsetLag, "%s: the overview's offset lags", step)
	require.Equal(t, lagStats(timeLags), o.TimeLag, "%s: the overview's time lags", step)
}

// checkPages compares pages of the lagging list and of the group list with the whole list.
func checkPages(t *testing.T, e *Engine, step string) {
	t.Helper()
	lagging, groups := e.Lagging(LaggingQuery{}), e.ConsumerGroups("", Page{})
	for _, pg := range []Page{{Limit: 1}, {Limit: 2, Offset: 1}, {Limit: 3, Offset: 2}, {Limit: 1000}, {Limit: 4, Offset: 50}} {
		start, end := pg.of(len(lagging))
		require.Equal(t, lagging[start:end], e.Lagging(LaggingQuery{Page: pg}), "%s: lagging page %+v", step, pg)
		start, end = pg.of(len(groups))
		require.Equal(t, groups[start:end], e.ConsumerGroups("", pg), "%s: group page %+v", step, pg)
	}
}

// lateClock is a manual clock whose timers can run late: Slip moves its time on without running
// the timers that come due, as a loaded machine delays them, until the next Advance.
type lateClock struct {
	*ManualClock
	mu   sync.Mutex
	slip time.Duration
}

func (c *lateClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ManualClock.Now().Add(c.slip)
}

func (c *lateClock) Slip(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slip += d
}

// history drives an engine with random requests, remembering what it was handed.
type history struct {
	rng    *rand.Rand
	e      *Engine
	clock  *lateClock
	handed []Message
	log    []string
	queues []string
	parts  []string
	groups []string
}

func (h *history) pick(list []string) string { return list[h.rng.IntN(len(list))] }

func (h *history) note(format string, args ...any) {
	h.log = append(h.log, fmt.Sprintf(format, args...))
}

// step applies one random request.
func (h *history) step() {
	r, e := h.rng, h.e
	switch n := r.IntN(100); {
	case n < 22:
		q, p := h.pick(h.queues), h.pick(h.parts)
		items := make([]PushItem, 1+r.IntN(3))
		for i := range items {
			items[i] = PushItem{Queue: q, Partition: p, Payload: []byte(`{"n":1}`)}
		}
		e.Push(items)
		h.note("push %d to %s/%s", len(items), q, p)
	case n < 44:
		req := PopRequest{Queue: h.pick(h.queues), Group: h.pick(h.groups), Batch: 1 + r.IntN(3),
			Partitions: 1 + r.IntN(2), LeaseSeconds: 1 + r.IntN(20), AutoAck: r.IntN(6) == 0}
		if r.IntN(3) == 0 {
			req.Partition = h.pick(h.parts[1:])
		}
		switch r.IntN(4) {
		case 0:
			req.SubscriptionMode = "new"
		case 1:
			from := e.Now().Add(time.Duration(r.IntN(40)-30) * time.Second) // a time to come, at times
			req.SubscriptionFrom = &from
		}
		if req.Group == "c" { // the conflating group
			req.Conflation, req.AutoAck = true, false
		}
		res, err := e.Pop(context.Background(), req)
		h.note("pop %+v: %d messages, %v", req, len(res.Messages), err)
		h.handed = append(h.handed, res.Messages...)
		if len(h.handed) > 40 {
			h.handed = h.handed[len(h.handed)-40:]
		}
	case n < 62 && len(h.handed) > 0:
		items := make([]AckItem, 1+r.IntN(3))
		for i := range items {
			m := h.handed[r.IntN(len(h.handed))]
			items[i] = AckItem{TransactionID: m.TransactionID, PartitionID: m.PartitionID, Group: m.ConsumerGroup,
				Status: []string{"completed", "completed", "failed", "retry", "dlq"}[r.IntN(5)]}
			if r.IntN(2) == 0 {
				items[i].LeaseID = m.LeaseID
			}
		}
		e.Ack(items)
		h.note("ack %+v", items)
	case n < 70:
		d := time.Duration(r.IntN(25)) * time.Second
		if r.IntN(2) == 0 { // and a fraction of a second: time lags round down
			d += time.Duration(r.IntN(1000)) * time.Millisecond
		}
		h.clock.Advance(d)
		h.note("advance %v", d)
	case n < 76:
		d := time.Duration(1+r.IntN(25000)) * time.Millisecond
		if r.IntN(5) == 0 { // the wall clock goes back: messages dated after now
			d = -d
		}
		h.clock.Slip(d)
		h.note("time on %v, timers late", d)
	case n < 81:
		g, q := h.pick(h.groups), h.pick(h.queues)
		toEnd := r.IntN(2) == 0
		ts := e.Now().Add(-time.Duration(r.IntN(60)) * time.Second)
		_, err := e.Seek(g, q, toEnd, ts)
		h.note("seek %s on %s (end %v, %v): %v", g, q, toEnd, ts, err)
	case n < 85:
		g, q := h.pick(h.groups), h.pick(append([]string{""}, h.queues...))
		meta := r.IntN(2) == 0
		_, err := e.DeleteGroup(g, q, meta)
		h.note("delete group %s on %q (metadata %v): %v", g, q, meta, err)
	case n < 90:
		list, _ := e.DeadLetters(DLQQuery{Limit: 50})
		if len(list) > 0 {
			d := list[r.IntN(len(list))]
			if r.IntN(3) == 0 {
				h.note("drop dead letter %s: %v", d.ID, e.DeleteDeadLetter(d.ID))
			} else {
				_, err := e.Replay(d.ID)
				h.note("replay %s: %v", d.ID, err)
			}
		}
	case n < 93 && len(h.handed) > 0:
		m := h.handed[r.IntN(len(h.handed))]
		e.Extend(m.LeaseID, 1+r.IntN(30))
		h.note("extend %s", m.LeaseID)
	case n < 96:
		q := h.pick(h.queues)
		limit, dlq := r.IntN(3), r.IntN(2) == 0
		e.Configure(ConfigureRequest{Queue: q, RetryLimit: &limit, DeadLetterQueue: &dlq})
		h.note("configure %s: retryLimit %d, dead letters %v", q, limit, dlq)
	case n < 98 && len(h.handed) > 0:
		m := h.handed[r.IntN(len(h.handed))]
		res := e.Transaction([]TxOp{
			{Type: "ack", Ack: AckItem{TransactionID: m.TransactionID, PartitionID: m.PartitionID, Group: m.ConsumerGroup}},
			{Type: "push", Push: []PushItem{{Queue: h.pick(h.queues), Partition: h.pick(h.parts), Payload: []byte(`{}`)}}},
		})
		h.note("transaction acking %s: %v", m.TransactionID, res.Success)
	default:
		q := h.pick(h.queues)
		h.note("delete queue %s: %v", q, e.DeleteQueue(q))
	}
}

var (
	keptSeeds = flag.Uint64("kept.seeds", 150, "how many random histories TestKeptCountsMatchAFullRecount runs in each mode")
	keptFrom  = flag.Uint64("kept.from", 0, "the first of them")
)

// The counts the engine keeps as it goes are, after any sequence of pushes, pops, acks,
// expiries (timers on time or late), seeks, group and queue deletions, replays and transactions,
// those a full recount of every group's view of every partition finds, in both modes; and a page
// of the group list or the lagging list is that part of the whole list. Every other history
// reads in the shortest steps, one unit of work each.
func TestKeptCountsMatchAFullRecount(t *testing.T) {
	t.Parallel()
	for _, mode := range []Mode{Mode20, Mode015} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			for seed := *keptFrom; seed < *keptFrom+*keptSeeds; seed++ {
				clock := &lateClock{ManualClock: NewManualClock(epoch)}
				e := New(clock, WithMode(mode))
				if seed%2 == 1 {
					e.stepBounds = stepBounds{work: 1}
				}
				h := &history{rng: rand.New(rand.NewPCG(seed, 7)), e: e, clock: clock,
					queues: []string{"q1", "q2"}, parts: []string{"", "p1", "p2", "p3"},
					groups: []string{"", "a", "b", "c"}}
				ok := t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
					for i := range 80 {
						h.step()
						checkKeptCounts(t, e, fmt.Sprintf("after step %d", i))
						if i%10 == 9 {
							checkPages(t, e, fmt.Sprintf("after step %d", i))
						}
					}
				})
				e.Close()
				if !ok {
					t.Logf("seed %d ran:\n%s", seed, strings.Join(h.log, "\n"))
					return
				}
			}
		})
	}
}
