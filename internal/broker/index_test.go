package broker

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// checkIndex verifies the invariants of ready.go and lease.go against a recomputation from
// the state they index.
func checkIndex(t *testing.T, e *Engine) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	for name, q := range e.queues {
		require.Equal(t, name, q.name)
		for group, ix := range q.cursors {
			require.Same(t, q, ix.q)
			require.Equal(t, group, ix.group)
			for i, entry := range ix.ready {
				gc := entry.gc
				require.Equal(t, i, gc.readyIdx)
				require.Equal(t, gc.readyAt.UnixNano(), entry.at)
				require.Equal(t, gc.p.order, entry.order)
				require.Same(t, ix, gc.ix)
				if i > 0 {
					require.False(t, ix.ready.less(i, (i-1)/2), "heap order of %s on %s", group, name)
				}
			}
		}
		for group, m := range q.groups {
			if !m.complete {
				continue
			}
			for _, p := range q.parts {
				require.NotNil(t, p.groups[group], "group %s has no cursor in %s/%s", group, name, p.name)
			}
		}
		count := map[string]int{}
		for _, p := range q.parts {
			for group, gc := range p.groups {
				count[group]++
				require.Same(t, q.cursors[group], gc.ix, "cursor of %s in %s/%s", group, name, p.name)
				ready := gc.lease == nil && gc.available() > 0
				require.Equal(t, ready, gc.readyIdx >= 0, "%s/%s for %s: lease %v, available %d",
					name, p.name, group, gc.lease != nil, gc.available())
				if ready {
					require.True(t, gc.readyAt.Equal(p.msgs[gc.cursor+1].createdAt))
					require.Same(t, gc, gc.ix.ready[gc.readyIdx].gc)
				}
				if gc.lease != nil {
					require.False(t, gc.lease.ended)
					require.Same(t, gc.lease, e.leases[gc.lease.id])
				}
			}
		}
		for group, ix := range q.cursors {
			require.Equal(t, count[group], ix.n, "cursors of %s on %s", group, name)
		}
	}
	require.Len(t, e.expiries, len(e.leases))
	for i, l := range e.expiries {
		require.Equal(t, i, l.heapIdx)
		require.Same(t, l, e.leases[l.id])
	}
	refs := map[*lease]int{}
	for _, q := range e.queues {
		for _, p := range q.parts {
			for _, gc := range p.groups {
				if gc.expired != nil {
					refs[gc.expired]++
				}
			}
		}
	}
	for id, l := range e.expired {
		require.Equal(t, id, l.id)
		require.Positive(t, refs[l], "expired lease %s kept with no cursor naming it", id)
		require.Equal(t, refs[l], l.expiredRefs)
	}
	waiting := 0
	for _, groups := range e.waiting {
		for _, wl := range groups {
			waiting += len(wl.wide)
			for _, list := range wl.parts {
				waiting += len(list)
			}
		}
	}
	require.Equal(t, e.nWaiting, waiting)
	partWaiters, counted := 0, 0
	for _, groups := range e.waiting {
		for _, wl := range groups {
			for _, list := range wl.parts {
				partWaiters += len(list)
			}
		}
	}
	for k, groups := range e.partWaiting {
		for group, n := range groups {
			require.Len(t, e.waiting[k.queue][group].parts[k.partition], n, "pops of %s waiting on %v", group, k)
			counted += n
		}
	}
	require.Equal(t, partWaiters, counted)
}

// wantReady recomputes, by scanning every partition, the partitions a pop of the group on the
// queue would take, in order, as the engine chose them before it kept an index.
func wantReady(e *Engine, queue, group string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	q := e.queues[queue]
	if q == nil {
		return nil
	}
	var ready []*cursorState
	for _, p := range q.parts {
		gc := p.groups[group]
		if gc == nil { // the pop decides "all" (the test's only start)
			gc = &cursorState{p: p, cursor: -1}
		}
		if gc.available() > 0 && (gc.lease == nil || !e.now().Before(gc.lease.expires)) {
			ready = append(ready, gc)
		}
	}
	slices.SortFunc(ready, func(a, b *cursorState) int {
		ta, tb := a.p.msgs[a.cursor+1].createdAt, b.p.msgs[b.cursor+1].createdAt
		if c := ta.Compare(tb); c != 0 {
			return c
		}
		return int(a.p.order - b.p.order)
	})
	names := make([]string, len(ready))
	for i, gc := range ready {
		names[i] = gc.p.name
	}
	return names
}

// A random mix of every operation keeps the index equal to what a full scan computes, and each
// pop takes the partitions a scan would choose, in that order.
func TestReadyIndexMatchesScan(t *testing.T) {
	t.Parallel()
	randomOps(t, newFixture(t), true)
}

// The 0.15 mode's own ways of moving cursors keep the index's invariants too.
func TestReadyIndexMatchesScan015(t *testing.T) {
	t.Parallel()
	clock := NewManualClock(epoch)
	e := New(clock, WithMode(Mode015))
	t.Cleanup(e.Close)
	randomOps(t, &fixture{t: t, e: e, clock: clock}, false)
}

// randomOps applies 3,000 random operations, checking the index after each; with order it
// also checks each pop's choice of partitions against a scan.
func randomOps(t *testing.T, f *fixture, order bool) {
	rng := rand.New(rand.NewPCG(1, 2))
	parts := []string{"a", "b", "c", "d", "e", "f"}
	groups := []string{"", "g", "h"}
	var held []Message
	for step := range 3000 {
		group := groups[rng.IntN(len(groups))]
		switch op := rng.IntN(12); {
		case op < 4:
			f.push("q", parts[rng.IntN(len(parts))], fmt.Sprint("m", step))
		case op < 7:
			g := group
			if g == "" {
				g = QueueMode
			}
			want := wantReady(f.e, "q", g)
			r := PopRequest{Queue: "q", Group: group, SubscriptionMode: "all", Batch: 1 + rng.IntN(4),
				Partitions: 1 + rng.IntN(3), AutoAck: rng.IntN(5) == 0, LeaseSeconds: 1 + rng.IntN(5)}
			if rng.IntN(4) == 0 {
				r.Partition = parts[rng.IntN(len(parts))]
				want = slices.DeleteFunc(want, func(n string) bool { return n != r.Partition })
			}
			res := f.pop(r)
			if !r.AutoAck {
				held = append(held, res.Messages...)
			}
			var got []string
			for _, m := range res.Messages {
				if len(got) == 0 || got[len(got)-1] != m.Partition {
					got = append(got, m.Partition)
				}
			}
			if !order {
				break
			}
			if len(want) > 0 || len(got) > 0 {
				require.Equal(t, want[:min(len(want), len(got))], got, "step %d: pop %+v", step, r)
			}
			if len(got) < min(len(want), r.Partitions) && len(res.Messages) < r.Batch {
				t.Fatalf("step %d: pop %+v took %v of ready %v", step, r, got, want)
			}

		case op < 9 && len(held) > 0:
			i := rng.IntN(len(held))
			statuses := []string{"completed", "completed", "failed", "retry", "dlq"}
			m := held[i]
			if rng.IntN(3) == 0 {
				m.LeaseID = ""
			}
			f.ack(ackOf(m, statuses[rng.IntN(len(statuses))]))
			held = slices.Delete(held, i, i+1)
		case op == 9:
			f.clock.Advance(time.Duration(rng.IntN(3000)) * time.Millisecond)
		case op == 10 && rng.IntN(10) == 0:
			_, err := f.e.Seek(group, "q", rng.IntN(2) == 0, epoch.Add(time.Duration(rng.IntN(60))*time.Second))
			require.NoError(t, err)
		case op == 11 && rng.IntN(10) == 0:
			_, _ = f.e.DeleteGroup(group, "q", rng.IntN(2) == 0)
		}
		checkIndex(t, f.e)
	}
}

// Waiting pops keep the index's invariants while pushes, acks and expiries serve them.
func TestReadyIndexWithWaiters(t *testing.T) {
	t.Parallel()
	f, parked := newParkedFixture(t)
	var outs []<-chan popOutcome
	for i := range 12 {
		r := waitFor(PopRequest{Queue: "q", Group: []string{"", "g"}[i%2], SubscriptionMode: "all", LeaseSeconds: 5})
		if i%3 == 0 {
			r.Partition = []string{"a", "b"}[i%2]
		}
		outs = append(outs, f.popAsync(context.Background(), r))
		<-parked
		checkIndex(t, f.e)
	}
	for i := range 6 {
		f.push("q", []string{"a", "b", "c"}[i%3], fmt.Sprint("m", i))
		checkIndex(t, f.e)
	}
	f.clock.Advance(5 * time.Second)
	checkIndex(t, f.e)
	f.e.Close()
	for _, out := range outs {
		require.NoError(t, (<-out).err)
	}
	checkIndex(t, f.e)
}

// A group that pops only named partitions has cursors only there; its first queue-wide pop
// gives it one in every partition, and new partitions get one from then on.
func TestCursorsFollowHowAGroupPops(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for i := range 50 {
		f.push("q", fmt.Sprint("p", i), "m")
	}
	cursors := func(group string) int {
		f.e.mu.Lock()
		defer f.e.mu.Unlock()
		n := 0
		for _, p := range f.e.queues["q"].parts {
			if p.groups[group] != nil {
				n++
			}
		}
		return n
	}
	for i := range 10 {
		require.Len(t, f.pop(PopRequest{Queue: "q", Group: fmt.Sprint("g", i), Partition: fmt.Sprint("p", i), SubscriptionMode: "all"}).Messages, 1)
	}
	f.push("q", "later", "m")
	for i := range 10 {
		require.Equal(t, 1, cursors(fmt.Sprint("g", i)))
	}
	require.Len(t, f.pop(PopRequest{Queue: "q", Group: "g0"}).Messages, 1)
	require.Equal(t, 51, cursors("g0"))
	f.push("q", "newest", "m")
	require.Equal(t, 52, cursors("g0"))
	require.Equal(t, 1, cursors("g1"))
	checkIndex(t, f.e)
}
