package refserver

import (
	"net/http"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/wire"
)

// handleGroupList answers the group list: one entry per group and queue, a page at a time.
func (s *Server) handleGroupList(w http.ResponseWriter, r *http.Request) {
	q, err := parseQuery(r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	queue, err := q.readName("queue")
	if err != nil {
		writeFailure(w, err)
		return
	}
	page, err := q.listPage()
	if err != nil {
		writeFailure(w, err)
		return
	}
	list := s.engine.ConsumerGroups(queue, page)
	out := make([]wire.GroupSummary, len(list))
	for i := range list {
		out[i] = groupSummaryAnswer(&list[i])
	}
	writeJSON(w, http.StatusOK, out)
}

// queueParam reads the queue a group read is narrowed to, "" for every queue.
func queueParam(r *http.Request) (string, error) {
	q, err := parseQuery(r)
	if err != nil {
		return "", err
	}
	return q.readName("queue")
}

func groupSummaryAnswer(g *broker.GroupSummary) wire.GroupSummary {
	out := wire.GroupSummary{Name: g.Name, QueueName: g.Queue, Topics: []string{g.Queue}, Members: g.Members,
		PartitionsWithLag: g.PartitionsWithLag, TotalLag: &g.TotalLag, MaxTimeLag: g.MaxTimeLag, State: g.State,
		Conflation: &g.Conflation}
	if sub := g.Subscription; sub != nil {
		out.SubscriptionMode = &sub.Mode
		out.SubscriptionTimestamp = wire.AtOrNil(sub.Timestamp)
		out.SubscriptionCreatedAt = wire.AtOrNil(sub.CreatedAt)
	}
	return out
}

// handleGroupDetail answers a group's partitions, by queue.
func (s *Server) handleGroupDetail(w http.ResponseWriter, r *http.Request) {
	group, err := pathName(r, "group", "group")
	if err != nil {
		writeFailure(w, err)
		return
	}
	queue, err := queueParam(r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	d, err := s.engine.ConsumerGroup(group, queue)
	if err != nil {
		writeFailure(w, err)
		return
	}
	out := make(wire.GroupDetail, len(d))
	for name, parts := range d {
		list := make([]wire.GroupPartition, len(parts))
		for i := range parts {
			p := &parts[i]
			list[i] = wire.GroupPartition{
				Partition: p.Partition, PartitionID: &p.PartitionID, Cursor: &p.Cursor, OffsetLag: p.OffsetLag,
				Pending: &p.Pending, Processing: &p.Processing, TimeLagSeconds: p.TimeLagSeconds,
				LeaseActive: p.LeaseActive, WorkerID: nullable(p.WorkerID), LeaseExpiresAt: wire.AtOrNil(p.LeaseExpiresAt),
				LastConsumedAt: wire.AtOrNil(p.LastConsumedAt), TotalConsumed: p.TotalConsumed, Retries: &p.Retries,
			}
		}
		out[name] = wire.GroupDetailQueue{Partitions: list}
	}
	writeJSON(w, http.StatusOK, out)
}

// handleLagging answers the lagging list.
func (s *Server) handleLagging(w http.ResponseWriter, r *http.Request) {
	q, err := parseQuery(r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	var lq broker.LaggingQuery
	if lq.MinLagSeconds, err = q.readInt("minLagSeconds", 0, maxInt, 3600, "must be a non-negative integer"); err != nil {
		writeFailure(w, err)
		return
	}
	if lq.Queue, err = q.readName("queue"); err != nil {
		writeFailure(w, err)
		return
	}
	if lq.Group, err = q.readName("consumerGroup"); err != nil {
		writeFailure(w, err)
		return
	}
	if lq.Page, err = q.listPage(); err != nil {
		writeFailure(w, err)
		return
	}
	list := s.engine.Lagging(lq)
	out := make([]wire.LaggingEntry, len(list))
	for i := range list {
		e := &list[i]
		out[i] = wire.LaggingEntry{ConsumerGroup: e.Group, QueueName: e.Queue, PartitionName: e.Partition,
			PartitionID: e.PartitionID, OffsetLag: e.OffsetLag, TimeLagSeconds: e.TimeLagSeconds, LagHours: e.LagHours,
			OldestUnconsumedAt: wire.AtOrNil(e.OldestUnconsumedAt), LastConsumedAt: wire.AtOrNil(e.LastConsumedAt),
			WorkerID: nullable(e.WorkerID)}
	}
	writeJSON(w, http.StatusOK, out)
}
