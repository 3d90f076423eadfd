package admin

import (
	"cmp"
	"context"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/wire"
)

// GroupInfo is a consumer group and the queues it reads.
type GroupInfo struct {
	Name   string
	Queues []GroupQueue // by queue name
}

// GroupQueue is a group's lag on one queue. Lag counts the messages after the group's cursors
// that it will still be handed; TimeLag is the age of the oldest of them (0 when none).
type GroupQueue struct {
	Queue      string
	Lag        int64 // -1 when the broker does not report it
	TimeLag    time.Duration
	Partitions []PartitionLag // from ConsumerGroup; nil from ConsumerGroups

	PartitionsWithLag int64
	Members           int64  // partitions the group has been handed messages from
	State             string // Stable, Lagging (time lag above 5 minutes) or Dead (idle)
	SubscriptionMode  string // new, all or timestamp; "" when none is stored
	Conflation        bool
	// Approximate is true when the broker's lag is a lower bound or skips partitions the group
	// has not read (0.15): Lag is then -1 from ConsumerGroups and TimeLag a lower bound.
	Approximate bool
}

// PartitionLag is a group's position and lag in one partition. Counts a broker does not send
// are -1, times zero.
type PartitionLag struct {
	Partition, PartitionID string // PartitionID "" when not reported
	Cursor                 int64  // the last offset done for the group; -1 before offset 0 or when not reported
	Lag                    int64
	TimeLag                time.Duration
	Leased                 bool

	Pending, Processing int64
	LeaseID             string    // the live lease, "" when none
	LeaseExpiresAt      time.Time // zero when none or not reported
	LastConsumedAt      time.Time // zero if never
	TotalConsumed       int64
	Retries             int64
}

// ConsumerGroups lists every consumer group with its lag on each queue it reads. It reads the
// broker's list a page of 1,000 entries at a time.
func (a *Admin) ConsumerGroups(ctx context.Context) ([]GroupInfo, error) {
	list, err := readPages(ctx, a, at(route.GroupList), url.Values{}, "the consumer-group list",
		func(s wire.GroupSummary) string { return s.Name + "\x00" + s.QueueName })
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(list, func(a, b wire.GroupSummary) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.QueueName, b.QueueName))
	})
	out := []GroupInfo{}
	for _, s := range list {
		if len(out) == 0 || out[len(out)-1].Name != s.Name {
			out = append(out, GroupInfo{Name: s.Name})
		}
		g := &out[len(out)-1]
		gq := GroupQueue{
			Queue: s.QueueName, Lag: orUnknown(s.TotalLag), TimeLag: seconds(s.MaxTimeLag),
			PartitionsWithLag: s.PartitionsWithLag, Members: s.Members, State: s.State,
			Approximate: s.TotalLag == nil,
		}
		if s.SubscriptionMode != nil {
			gq.SubscriptionMode = *s.SubscriptionMode
		}
		if s.Conflation != nil {
			gq.Conflation = *s.Conflation
		}
		g.Queues = append(g.Queues, gq)
	}
	return out, nil
}

// listPage is the page the SDK asks for of the group list and of the lagging list: the most a
// broker answers at once.
const listPage = 1000

// readPages reads a list a page at a time (limit and offset) until a page comes back short.
// A broker that ignores both (0.15) answers its whole list every time: a page holding more than
// asked, or only entries already read, shows it, and what it gave is the list. key names an
// entry, so that an entry shifted from one page to the next by a change between two reads is
// kept once.
func readPages[T any](ctx context.Context, a *Admin, e endpoint, query url.Values, what string, key func(T) string) ([]T, error) {
	var all []T
	seen := map[string]bool{}
	query.Set("limit", strconv.Itoa(listPage))
	for offset := 0; ; offset += listPage {
		query.Set("offset", strconv.Itoa(offset))
		var page []T
		if err := a.read(ctx, e, query, what, &page); err != nil && !errors.Is(err, errEmpty) {
			return nil, err
		}
		fresh := 0
		for _, entry := range page {
			if k := key(entry); !seen[k] {
				seen[k] = true
				all = append(all, entry)
				fresh++
			}
		}
		if len(page) != listPage || fresh == 0 {
			return all, nil
		}
	}
}

// ConsumerGroup describes a group on every queue it reads, partition by partition. A group
// the broker does not know gives ErrNotFound. A group named "lagging" is described without
// partitions: the broker's path for it is the lagging list's.
func (a *Admin) ConsumerGroup(ctx context.Context, group string) (GroupInfo, error) {
	if err := validName("group", group); err != nil {
		return GroupInfo{}, err
	}
	if group == "lagging" { // its path is the lagging list's: describe it from the group list
		return a.groupFromList(ctx, group)
	}
	var d wire.GroupDetail
	what := "consumer group " + quote(group)
	err := a.read(ctx, at(route.GroupDetail, group), nil, what, &d)
	if errors.Is(err, errEmpty) || (err == nil && len(d) == 0) {
		return GroupInfo{}, notFoundEmpty(what)
	}
	if err != nil {
		return GroupInfo{}, err
	}
	info := GroupInfo{Name: group}
	for _, name := range slices.Sorted(mapKeys(d)) {
		gq := GroupQueue{Queue: name}
		for _, p := range d[name].Partitions {
			pl := partitionLag(p)
			gq.Lag += pl.Lag
			gq.TimeLag = max(gq.TimeLag, pl.TimeLag)
			if pl.Lag > 0 {
				gq.PartitionsWithLag++
			}
			if p.Cursor == nil {
				gq.Approximate = true
			}
			gq.Partitions = append(gq.Partitions, pl)
		}
		info.Queues = append(info.Queues, gq)
	}
	return info, nil
}

// groupFromList is a group's summary per queue, without partitions, from ConsumerGroups.
func (a *Admin) groupFromList(ctx context.Context, group string) (GroupInfo, error) {
	groups, err := a.ConsumerGroups(ctx)
	if err != nil {
		return GroupInfo{}, err
	}
	for _, g := range groups {
		if g.Name == group {
			return g, nil
		}
	}
	return GroupInfo{}, notFoundEmpty("consumer group " + quote(group))
}

func partitionLag(p wire.GroupPartition) PartitionLag {
	pl := PartitionLag{
		Partition: p.Partition, Cursor: orUnknown(p.Cursor), Lag: p.OffsetLag,
		TimeLag: seconds(p.TimeLagSeconds), Leased: p.LeaseActive,
		Pending: orUnknown(p.Pending), Processing: orUnknown(p.Processing),
		LeaseExpiresAt: p.LeaseExpiresAt.Value(), LastConsumedAt: p.LastConsumedAt.Value(),
		TotalConsumed: p.TotalConsumed, Retries: orUnknown(p.Retries),
	}
	if p.PartitionID != nil {
		pl.PartitionID = *p.PartitionID
	}
	if p.LeaseActive && p.WorkerID != nil { // 0.15 keeps an expired lease's id
		pl.LeaseID = *p.WorkerID
	}
	return pl
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func seconds(n int64) time.Duration { return time.Duration(n) * time.Second }
