package broker

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/testutil"
)

// wideQueue fills queue "wide" with parts partitions of three messages each, read by three
// groups to different depths, and pops a lease on one partition.
func wideQueue(t *testing.T, parts int) *fixture {
	return fillWide(t, parts, func(f *fixture) {
		for g, at := range map[string]time.Duration{"g1": 0, "g2": 10 * time.Second, "g3": -time.Hour} {
			_, err := f.e.Seek(g, "wide", false, epoch.Add(at))
			require.NoError(t, err)
		}
	})
}

// fillWide fills queue "wide" with parts partitions of three messages each, has read place the
// groups, then has queue mode hold two messages of one partition in a lease that expires.
func fillWide(t *testing.T, parts int, read func(*fixture), opts ...Option) *fixture {
	f := newFixture(t, opts...)
	for i := range parts {
		f.push("wide", fmt.Sprintf("p%02d", i), "a", "b", "c")
	}
	f.clock.Advance(10 * time.Second)
	read(f)
	f.pop(PopRequest{Queue: "wide", Partition: "p00", Batch: 2})
	f.clock.Advance(time.Hour)
	return f
}

// Every read that walks partitions or (group, partition) pairs lets the engine go between its
// steps: a push made while it pauses (it would deadlock under a held lock) is applied, and the
// read still answers for the whole queue.
func TestReadsThatWalkLetWritersInBetweenSteps(t *testing.T) {
	t.Parallel()
	f := wideQueue(t, 40)
	pushes := 0
	f.e.stepBounds = stepBounds{work: 8, onPause: func() {
		pushes++
		f.e.Push([]PushItem{{Queue: "side", Payload: []byte(`{}`)}})
	}}
	reads := map[string]func(){
		"queue detail": func() {
			d, err := f.e.QueueDetail("wide")
			require.NoError(t, err)
			assert.Len(t, d.Partitions, 40)
		},
		"group detail": func() {
			d, err := f.e.ConsumerGroup("g3", "wide")
			require.NoError(t, err)
			assert.Len(t, d["wide"], 40)
		},
		"lagging list": func() { // g2 has read everything; queue mode, g1 and g3 nothing
			assert.Len(t, f.e.Lagging(LaggingQuery{Queue: "wide", Page: Page{Limit: 1000}}), 3*40)
		},
		"browse": func() {
			list, err := f.e.Browse(BrowseQuery{Queue: "wide", Limit: 1000})
			require.NoError(t, err)
			assert.Len(t, list.Messages, 3*40)
		},
	}
	for name, read := range reads {
		before := pushes
		read()
		assert.Greater(t, pushes, before, "%s: no push got in", name)
	}
	lag, _, _ := f.e.Progress("side", "")
	assert.Equal(t, int64(pushes), lag, "every push made between steps was applied")
}

// wideQueue015 fills queue "wide" of a 0.15 broker with parts partitions of three messages
// each; g1 and g3 hold them in leases that expire, g2 has read them all, and queue mode holds
// two messages of one partition.
func wideQueue015(t *testing.T, parts int) *fixture {
	return fillWide(t, parts, func(f *fixture) {
		for _, g := range []string{"g1", "g2", "g3"} {
			for range parts { // one partition a pop, the others being leased
				res := f.pop(PopRequest{Queue: "wide", Group: g, Batch: 3, AutoAck: g == "g2", SubscriptionMode: "all"})
				require.NotEmpty(t, res.Messages, "%s's pop", g)
			}
		}
	}, WithMode(Mode015))
}

// A 0.15 broker's group list, group detail and lagging list walk their rows in steps too: a
// push made while they pause is applied, and they answer what they answer in one go.
func TestReadsOfA015BrokerLetWritersInBetweenSteps(t *testing.T) {
	t.Parallel()
	f := wideQueue015(t, 40)
	reads := map[string]func() any{
		"group list": func() any { return f.e.ConsumerGroups015() },
		"group detail": func() any {
			d, err := f.e.ConsumerGroup015("g3")
			require.NoError(t, err)
			require.Len(t, d["wide"], 40)
			return d
		},
		"lagging list": func() any { return f.e.Lagging015(0) },
	}
	whole := map[string]any{}
	for name, read := range reads {
		whole[name] = read()
	}
	require.Len(t, whole["group list"], 4, "queue mode, g1, g2 and g3 on the wide queue")
	require.GreaterOrEqual(t, len(whole["lagging list"].([]LaggingEntry)), 2*40, "g1 and g3 owe every partition")

	pushes := 0
	f.e.stepBounds = stepBounds{work: 8, onPause: func() {
		pushes++
		f.e.Push([]PushItem{{Queue: "side", Payload: []byte(`{}`)}})
	}}
	for name, read := range reads {
		before := pushes
		assert.Equal(t, whole[name], read(), "%s: the answer read in steps", name)
		assert.Greater(t, pushes, before, "%s: no push got in", name)
	}
	lag, _, _ := f.e.Progress("side", "")
	assert.Equal(t, int64(pushes), lag, "every push made between steps was applied")
}

// The group list and the overview read the sums the engine keeps instead of walking partitions:
// in the shortest steps, once a first read has taken in what the queue was filled with, the
// group list pauses at most once for the queue, once per summary it reads and once per
// (group, partition) changed since, and the overview once per partition changed since, however
// many partitions the queue has.
func TestGroupListAndOverviewDoNotWalkPartitions(t *testing.T) {
	t.Parallel()
	f := wideQueue(t, 40)
	f.e.ConsumerGroups("wide", Page{})
	f.e.Overview()
	pauses := 0
	f.e.stepBounds = stepBounds{work: 1, onPause: func() { pauses++ }}
	read := func(what string, changed int) ([]GroupSummary, Overview) {
		pauses = 0
		list := f.e.ConsumerGroups("wide", Page{})
		require.Len(t, list, 4)
		assert.LessOrEqual(t, pauses, 1+len(list)+4*changed, "%s: the group list's pauses", what)
		pauses = 0
		o := f.e.Overview()
		assert.LessOrEqual(t, pauses, changed, "%s: the overview's pauses", what)
		assert.Equal(t, int64(40), o.Partitions, what)
		return list, o
	}
	g3 := func(list []GroupSummary) GroupSummary {
		i := slices.IndexFunc(list, func(s GroupSummary) bool { return s.Name == "g3" })
		require.GreaterOrEqual(t, i, 0)
		return list[i]
	}

	list, o := read("unchanged", 0)
	s := g3(list) // it has read nothing of the 40 partitions
	assert.Equal(t, int64(3*40), s.TotalLag)
	assert.Equal(t, int64(40), s.PartitionsWithLag)
	assert.Equal(t, int64(3600+10), s.MaxTimeLag)
	assert.Equal(t, LagStats{Min: 3, Max: 3, Avg: 3, Median: 3}, o.OffsetLag)

	f.push("wide", "p07", "d")
	list, o = read("after a push to one partition", 1)
	assert.Equal(t, int64(3*40+1), g3(list).TotalLag)
	assert.Equal(t, LagStats{Min: 3, Max: 4, Avg: 3, Median: 3}, o.OffsetLag)
}

// Reads in the shortest steps, beside a writer that pushes, pops, acks and lets leases expire
// on the same queue, answer lists whose numbers agree within each partition (and, under -race,
// read nothing the writer is changing).
func TestReadsInStepsBesideAWriter(t *testing.T) {
	t.Parallel()
	f := wideQueue(t, 12)
	f.e.stepBounds = stepBounds{work: 1}
	stop := make(chan struct{})
	wrote := testutil.Go(func() error {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return nil
			default:
			}
			part := fmt.Sprintf("p%02d", i%12)
			f.e.Push([]PushItem{{Queue: "wide", Partition: part, Payload: []byte(`{}`)}})
			res, err := f.e.Pop(context.Background(), PopRequest{Queue: "wide", Group: "g2", Batch: 2, LeaseSeconds: 1})
			if err != nil {
				return err
			}
			if i%3 == 0 && len(res.Messages) > 0 {
				f.e.Ack([]AckItem{ackOf(res.Messages[0], "completed")})
			}
			f.clock.Advance(time.Second / 2)
		}
	})
	for range 30 {
		d, err := f.e.QueueDetail("wide")
		require.NoError(t, err)
		var sum Counts
		for _, p := range d.Partitions {
			c := p.Messages
			require.Equal(t, c.Total, c.Pending+c.Processing+c.Completed, "partition %s", p.Name)
			addCounts(&sum, c)
		}
		require.Equal(t, sum, d.Totals, "the totals are the partitions' sums")
		list, err := f.e.Browse(BrowseQuery{Queue: "wide", Limit: 50, Offset: 7, Payload: true})
		require.NoError(t, err)
		require.LessOrEqual(t, len(list.Messages), 50)
		for _, m := range list.Messages {
			require.NotEmpty(t, m.Payload)
		}
		require.LessOrEqual(t, len(f.e.Lagging(LaggingQuery{Page: Page{Limit: 5}})), 5)
		f.e.ConsumerGroups("", Page{Limit: 2})
		f.e.Overview()
		f.e.ConsumerGroups015() // the 0.15 reads walk the same state in the same steps
		_, err = f.e.ConsumerGroup015("g2")
		require.NoError(t, err)
		f.e.Lagging015(0)
	}
	close(stop)
	require.NoError(t, testutil.Recv(t, wrote, "the writer's end"))
}
