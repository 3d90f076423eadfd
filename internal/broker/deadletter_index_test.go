package broker

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// wantDeadLetters is the dead-letter list computed the plain way: filter every dead letter, then sort.
func wantDeadLetters(e *Engine, f DLQQuery) ([]string, int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var all []*deadLetter
	for _, d := range e.dead {
		if (f.Queue != "" && d.p.q.name != f.Queue) || (f.Group != "" && d.group != f.Group) ||
			(f.Partition != "" && d.p.name != f.Partition) ||
			(f.From != nil && d.failedAt.Before(*f.From)) || (f.To != nil && d.failedAt.After(*f.To)) {
			continue
		}
		all = append(all, d)
	}
	slices.SortFunc(all, func(a, b *deadLetter) int {
		if c := b.failedAt.Compare(a.failedAt); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	start := min(f.Offset, len(all))
	ids := []string{}
	for _, d := range all[start:min(start+limit, len(all))] {
		ids = append(ids, d.id)
	}
	return ids, len(all)
}

// The dead-letter indexes answer every combination of filters as a scan and sort would, while
// letters are filed, filed again, replayed, deleted and their queue deleted.
func TestDeadLetterIndexMatchesScan(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	rng := rand.New(rand.NewPCG(3, 4))
	queues, parts, groups := []string{"q1", "q2"}, []string{"a", "b"}, []string{"g", "h"}
	for step := range 600 {
		q, p, g := queues[rng.IntN(2)], parts[rng.IntN(2)], groups[rng.IntN(2)]
		switch op := rng.IntN(10); {
		case op < 5:
			f.push(q, p, fmt.Sprint("m", step))
			res := f.pop(PopRequest{Queue: q, Group: g, SubscriptionMode: "all", Batch: 3})
			for _, m := range res.Messages {
				f.ack(ackOf(m, []string{"dlq", "completed"}[rng.IntN(2)]))
			}
		case op < 6:
			_, err := f.e.Seek(g, q, false, epoch) // back to the start: letters can be filed again
			if err != nil {
				require.ErrorIs(t, err, ErrQueueNotFound)
			}
		case op < 8:
			if list, _ := f.e.DeadLetters(DLQQuery{}); len(list) > 0 {
				d := list[rng.IntN(len(list))]
				if rng.IntN(2) == 0 {
					_, err := f.e.Replay(d.ID)
					require.NoError(t, err)
				} else {
					require.NoError(t, f.e.DeleteDeadLetter(d.ID))
				}
			}
		case op == 8 && rng.IntN(8) == 0:
			_ = f.e.DeleteQueue(q)
		default:
			f.clock.Advance(time.Duration(rng.IntN(3)) * time.Second)
		}
		from, to := epoch.Add(time.Duration(rng.IntN(120))*time.Second), epoch.Add(time.Duration(rng.IntN(300))*time.Second)
		for _, query := range []DLQQuery{
			{}, {Queue: q}, {Group: g}, {Partition: p}, {Queue: q, Group: g}, {Queue: q, Partition: p},
			{Group: g, Partition: p}, {Queue: q, Group: g, Partition: p}, {From: &from}, {To: &to},
			{Queue: q, From: &from, To: &to}, {Group: g, From: &from}, {Limit: 3, Offset: rng.IntN(5)},
			{Queue: q, Partition: p, Group: g, Limit: 2, Offset: 1}, {Queue: "nope"}, {Group: "nope"},
		} {
			wantIDs, wantTotal := wantDeadLetters(f.e, query)
			list, total := f.e.DeadLetters(query)
			ids := []string{}
			for _, d := range list {
				ids = append(ids, d.ID)
			}
			require.Equal(t, wantTotal, total, "step %d: %+v", step, query)
			require.Equal(t, wantIDs, ids, "step %d: %+v", step, query)
		}
	}
	list, _ := f.e.DeadLetters(DLQQuery{})
	require.NotEmpty(t, list, "the mix left some dead letters to list")
}
