package refserver

import (
	"net/http"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/wire"
)

// handleQueueList answers the queue list.
func (s *Server) handleQueueList(w http.ResponseWriter, r *http.Request) {
	q, err := parseQuery(r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	f := broker.QueueFilter{Namespace: q.get("namespace"), Task: q.get("task")}
	if f.Limit, err = q.limit(100); err != nil {
		writeFailure(w, err)
		return
	}
	if f.Offset, err = q.offset(); err != nil {
		writeFailure(w, err)
		return
	}
	writeJSON(w, http.StatusOK, queueListAnswer(s.engine.Queues(f), f))
}

func queueListAnswer(list broker.QueueList, f broker.QueueFilter) wire.QueueList {
	out := wire.QueueList{
		Queues:     make([]wire.QueueSummary, 0, len(list.Queues)),
		Pagination: wire.Pagination{Limit: int64(f.Limit), Offset: int64(f.Offset)},
		Total:      &list.Total,
	}
	for _, q := range list.Queues {
		c := q.Messages
		out.Queues = append(out.Queues, wire.QueueSummary{
			ID: q.ID, Name: q.Name, Namespace: q.Namespace, Task: q.Task, CreatedAt: wire.At(q.CreatedAt),
			Partitions: q.Partitions,
			Messages: wire.SummaryCounts{Total: c.Total, Pending: c.Pending, Processing: c.Processing,
				Completed: &c.Completed, DeadLetter: &c.DeadLetter},
		})
	}
	return out
}

// handleQueueDetail answers one queue's detail.
func (s *Server) handleQueueDetail(w http.ResponseWriter, r *http.Request) {
	name, err := pathName(r, "queue", "queue")
	if err != nil {
		writeFailure(w, err)
		return
	}
	d, err := s.engine.QueueDetail(name)
	if err != nil {
		writeFailure(w, err)
		return
	}
	writeJSON(w, http.StatusOK, queueDetailAnswer(&d))
}

func queueDetailAnswer(d *broker.QueueDetail) wire.QueueDetail {
	q := &d.Queue
	options := make(map[string]wire.Value, len(q.Options))
	for k, v := range q.Options {
		options[k] = v
	}
	out := wire.QueueDetail{
		Queue: wire.QueueDetailQueue{
			ID: q.ID, Name: q.Name, Namespace: q.Namespace, Task: q.Task, CreatedAt: wire.At(q.CreatedAt),
			Priority: q.Priority,
			Config: wire.QueueConfig{LeaseTime: q.LeaseTime, RetryLimit: q.RetryLimit, DeadLetterQueue: q.DeadLetterQueue,
				RetryDelay: q.RetryDelay, TTL: q.TTL, MaxQueueSize: q.MaxSize},
			Options: options,
		},
		Partitions: make([]wire.PartitionDetail, 0, len(d.Partitions)),
		Totals:     wire.QueueTotals{Messages: counts(d.Totals), Counts: counts(d.Totals)},
	}
	for i := range d.Partitions {
		p := &d.Partitions[i]
		out.Partitions = append(out.Partitions, wire.PartitionDetail{
			ID: p.ID, Name: p.Name, CreatedAt: wire.At(p.CreatedAt), LastOffset: &p.LastOffset,
			Messages: counts(p.Messages), Stats: counts(p.Messages),
			Cursor:       wire.PartitionCursor{TotalConsumed: p.TotalConsumed, BatchesConsumed: p.BatchesConsumed},
			LastActivity: wire.AtOrNil(p.LastActivity), OldestMessage: wire.AtOrNil(p.OldestMessage),
			NewestMessage: wire.AtOrNil(p.NewestMessage),
		})
	}
	return out
}

func counts(c broker.Counts) wire.Counts {
	return wire.Counts{Total: c.Total, Pending: c.Pending, Processing: c.Processing,
		Completed: c.Completed, Failed: c.Failed, DeadLetter: c.DeadLetter}
}

// handleOverview answers the broker-wide overview.
func (s *Server) handleOverview(w http.ResponseWriter, _ *http.Request) {
	o := s.engine.Overview()
	writeJSON(w, http.StatusOK, wire.Overview{
		Queues: o.Queues, Partitions: o.Partitions, Namespaces: o.Namespaces, Tasks: o.Tasks,
		Messages: counts(o.Messages), Lag: lag(&o), Throughput: throughput(&o), Timestamp: wire.At(o.Timestamp),
	})
}

func lag(o *broker.Overview) wire.Lag {
	return wire.Lag{Offset: wire.LagStats(o.OffsetLag), Time: wire.LagStats(o.TimeLag)}
}

func throughput(o *broker.Overview) wire.Throughput {
	return wire.Throughput{IngestedPerSecond: o.IngestedPerSecond, ProcessedPerSecond: o.ProcessedPerSecond}
}
