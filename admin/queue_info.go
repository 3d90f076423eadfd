package admin

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"time"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/wire"
)

// QueueInfo is a queue as the broker reports it. Counts a broker does not send are -1.
type QueueInfo struct {
	Name, Namespace, Task string
	Partitions            []PartitionInfo // from QueueInfo; nil from Queues, which reports PartitionCount only
	Messages, Pending     int64           // messages stored; messages the slowest group has not been handed yet
	DeadLetters           int64           // dead letters stored for the queue's messages; -1 when not reported
	Config                QueueConfig     // from QueueInfo; zero from Queues

	ID             string
	CreatedAt      time.Time
	PartitionCount int64
	Processing     int64 // leased to the slowest group and not finished
	Completed      int64 // finished by the slowest group; -1 when not reported
	// Approximate is true when the counts come from a broker's background statistics (0.15):
	// they lag behind by up to minutes and need not add up.
	Approximate bool
}

// PartitionInfo is one partition of a queue.
type PartitionInfo struct {
	Name, ID string
	Messages int64     // stored in the partition
	Newest   time.Time // the newest message's creation time; zero for an empty partition

	Pending, Processing, Completed, DeadLetters int64
	LastOffset                                  int64     // -1 when empty or not reported
	Oldest                                      time.Time // the slowest group's oldest owed message; zero for none
	LastActivity                                time.Time // the last time a group consumed here; zero if never
}

// Queues lists every queue, newest first, with its counts. It pages through the broker's list.
func (a *Admin) Queues(ctx context.Context) ([]QueueInfo, error) {
	return a.QueuesIn(ctx, "", "")
}

// QueuesIn is Queues, keeping the queues whose namespace and task equal the given ones ("": any).
func (a *Admin) QueuesIn(ctx context.Context, namespace, task string) ([]QueueInfo, error) {
	const pageSize = 1000
	out := []QueueInfo{}
	seen := map[string]bool{}
	for page := 0; page < 1000; page++ {
		q := url.Values{"limit": {strconv.Itoa(pageSize)}, "offset": {strconv.Itoa(len(out))}}
		if namespace != "" {
			q.Set("namespace", namespace)
		}
		if task != "" {
			q.Set("task", task)
		}
		var list wire.QueueList
		err := a.read(ctx, at(route.QueueList), q, "the queue list", &list)
		if errors.Is(err, errEmpty) {
			break
		}
		if err != nil {
			return nil, err
		}
		for _, s := range list.Queues {
			if seen[s.Name] { // a queue created between two pages shifts the list
				continue
			}
			seen[s.Name] = true
			out = append(out, queueSummary(s))
		}
		if len(list.Queues) < pageSize || (list.Total != nil && int64(len(out)) >= *list.Total) {
			break
		}
	}
	return out, nil
}

func queueSummary(s wire.QueueSummary) QueueInfo {
	return QueueInfo{
		Name: s.Name, Namespace: s.Namespace, Task: s.Task, ID: s.ID, CreatedAt: s.CreatedAt.Time,
		PartitionCount: s.Partitions, Messages: s.Messages.Total, Pending: s.Messages.Pending,
		Processing: s.Messages.Processing, Completed: orUnknown(s.Messages.Completed),
		DeadLetters: orUnknown(s.Messages.DeadLetter),
		Approximate: s.Messages.Completed == nil,
	}
}

// QueueInfo describes one queue: its configuration and every partition with its counts.
// An unknown queue gives ErrNotFound.
func (a *Admin) QueueInfo(ctx context.Context, queue string) (QueueInfo, error) {
	if err := validName("queue", queue); err != nil {
		return QueueInfo{}, err
	}
	var d wire.QueueDetail
	err := a.read(ctx, at(route.QueueDetail, queue), nil, "queue "+quote(queue), &d)
	if errors.Is(err, errEmpty) {
		return QueueInfo{}, notFoundEmpty("queue " + quote(queue))
	}
	if err != nil {
		return QueueInfo{}, err
	}
	info := QueueInfo{
		Name: d.Queue.Name, Namespace: d.Queue.Namespace, Task: d.Queue.Task, ID: d.Queue.ID,
		CreatedAt: d.Queue.CreatedAt.Time, PartitionCount: int64(len(d.Partitions)),
		Messages: d.Totals.Total, Pending: d.Totals.Pending, Processing: d.Totals.Processing,
		Completed: d.Totals.Completed, DeadLetters: d.Totals.DeadLetter,
		Partitions: make([]PartitionInfo, 0, len(d.Partitions)),
		Config: QueueConfig{
			Queue: d.Queue.Name, QueueID: d.Queue.ID, Namespace: d.Queue.Namespace, Task: d.Queue.Task,
			LeaseTime:  time.Duration(d.Queue.Config.LeaseTime) * time.Second,
			RetryLimit: int(d.Queue.Config.RetryLimit), DeadLetterQueue: d.Queue.Config.DeadLetterQueue,
		},
	}
	for _, p := range d.Partitions {
		if p.LastOffset == nil {
			info.Approximate = true
		}
		if p.Name == "Default" {
			info.Config.PartitionID = p.ID
		}
		info.Partitions = append(info.Partitions, PartitionInfo{
			Name: p.Name, ID: p.ID, Messages: p.Messages.Total, Newest: p.NewestMessage.Value(),
			Pending: p.Messages.Pending, Processing: p.Messages.Processing, Completed: p.Messages.Completed,
			DeadLetters: p.Messages.DeadLetter, LastOffset: orUnknown(p.LastOffset),
			Oldest: p.OldestMessage.Value(), LastActivity: p.LastActivity.Value(),
		})
	}
	return info, nil
}
