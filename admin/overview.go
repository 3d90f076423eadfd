package admin

import (
	"cmp"
	"context"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/wire"
)

// LagQuery selects the lagging partitions.
type LagQuery struct {
	MinLag       time.Duration // time lag strictly above which a partition is listed; whole seconds
	Queue, Group string        // "": every queue, every group
}

// LaggingPartition is one (group, partition) whose oldest owed message is older than asked.
type LaggingPartition struct {
	Group, Queue, Partition, PartitionID string
	Lag                                  int64
	TimeLag                              time.Duration
	OldestUnconsumed, LastConsumedAt     time.Time // zero when none
	LeaseID                              string    // the group's lease there when the broker says; "" otherwise
}

// Lagging lists the (group, partition) pairs whose time lag is above q.MinLag, most lagging
// first (then by group, queue and partition name), reading the broker's list a page of 1,000
// at a time. The filters and the order are applied here too, for brokers that have neither
// (0.15).
func (a *Admin) Lagging(ctx context.Context, q LagQuery) ([]LaggingPartition, error) {
	if q.MinLag < 0 || q.MinLag%time.Second != 0 {
		return nil, invalid("MinLag", q.MinLag, "must be a whole, non-negative number of seconds")
	}
	if err := optionalName("Queue", q.Queue); err != nil {
		return nil, err
	}
	if err := optionalName("Group", q.Group); err != nil {
		return nil, err
	}
	minSeconds := int64(q.MinLag / time.Second)
	v := url.Values{"minLagSeconds": {strconv.FormatInt(minSeconds, 10)}}
	if q.Queue != "" {
		v.Set("queue", q.Queue)
	}
	if q.Group != "" {
		v.Set("consumerGroup", q.Group)
	}
	list, err := readPages(ctx, a, at(route.Lagging), v, "the lagging list",
		func(e wire.LaggingEntry) string {
			return e.ConsumerGroup + "\x00" + e.QueueName + "\x00" + e.PartitionName
		})
	if err != nil {
		return nil, err
	}
	out := []LaggingPartition{}
	for _, e := range list {
		if e.TimeLagSeconds <= minSeconds || (q.Queue != "" && e.QueueName != q.Queue) || (q.Group != "" && e.ConsumerGroup != q.Group) {
			continue
		}
		lp := LaggingPartition{
			Group: e.ConsumerGroup, Queue: e.QueueName, Partition: e.PartitionName, PartitionID: e.PartitionID,
			Lag: e.OffsetLag, TimeLag: seconds(e.TimeLagSeconds),
			OldestUnconsumed: e.OldestUnconsumedAt.Value(), LastConsumedAt: e.LastConsumedAt.Value(),
		}
		if e.WorkerID != nil {
			lp.LeaseID = *e.WorkerID
		}
		out = append(out, lp)
	}
	slices.SortFunc(out, func(a, b LaggingPartition) int {
		return cmp.Or(cmp.Compare(b.TimeLag, a.TimeLag), cmp.Compare(a.Group, b.Group),
			cmp.Compare(a.Queue, b.Queue), cmp.Compare(a.Partition, b.Partition))
	})
	return out, nil
}

// Overview is the broker-wide picture: how much is stored, and how far behind the slowest
// groups are.
type Overview struct {
	Queues, Partitions, Namespaces, Tasks             int64
	Messages, Pending, Processing, Completed, Failed  int64
	DeadLetters                                       int64
	MinLag, MaxLag, AvgLag, MedianLag                 float64 // messages behind, over partitions
	MinTimeLag, MaxTimeLag, AvgTimeLag, MedianTimeLag time.Duration
	IngestedPerSecond, ProcessedPerSecond             float64 // over the last five minutes
	At                                                time.Time
	// Approximate is true when the broker reports statistics of some age (0.15) instead of
	// live counts: then the counts need not add up.
	Approximate bool
}

// Overview reads the broker-wide overview.
func (a *Admin) Overview(ctx context.Context) (Overview, error) {
	var o wire.Overview
	if err := a.read(ctx, at(route.Overview), nil, "the overview", &o); err != nil {
		return Overview{}, err
	}
	sec := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	return Overview{
		Queues: o.Queues, Partitions: o.Partitions, Namespaces: o.Namespaces, Tasks: o.Tasks,
		Messages: o.Messages.Total, Pending: o.Messages.Pending, Processing: o.Messages.Processing,
		Completed: o.Messages.Completed, Failed: o.Messages.Failed, DeadLetters: o.Messages.DeadLetter,
		MinLag: o.Lag.Offset.Min, MaxLag: o.Lag.Offset.Max, AvgLag: o.Lag.Offset.Avg, MedianLag: o.Lag.Offset.Median,
		MinTimeLag: sec(o.Lag.Time.Min), MaxTimeLag: sec(o.Lag.Time.Max),
		AvgTimeLag: sec(o.Lag.Time.Avg), MedianTimeLag: sec(o.Lag.Time.Median),
		IngestedPerSecond: o.Throughput.IngestedPerSecond, ProcessedPerSecond: o.Throughput.ProcessedPerSecond,
		At: o.Timestamp.Time, Approximate: o.StatsAge != 0,
	}, nil
}

// Health is the broker's own account of itself.
type Health struct {
	Status   string // "healthy" when the broker can serve
	Version  string // as the broker says; informational only (0.15 always says 1.0.0)
	Server   string
	Database string
}

// Health reads GET /health, which needs no token.
func (a *Admin) Health(ctx context.Context) (Health, error) {
	var h wire.Health
	if err := a.read(ctx, at(route.Health), nil, "the health route", &h); err != nil {
		return Health{}, err
	}
	return Health{Status: h.Status, Version: h.Version, Server: h.Server, Database: h.Database}, nil
}
