package refserver

import (
	"net/http"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/wire"
)

// handleMessages answers a browse of a queue's messages, which leases nothing.
func (s *Server) handleMessages(w http.ResponseWriter, r *http.Request) {
	q, err := parseQuery(r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	bq, err := parseBrowse(q)
	if err != nil {
		writeFailure(w, err)
		return
	}
	list, err := s.engine.Browse(bq)
	if err != nil {
		writeFailure(w, err)
		return
	}
	out := wire.MessageList{Messages: make([]wire.MessageEntry, len(list.Messages)), Mode: groupKinds(list.Mode)}
	for i := range list.Messages {
		out.Messages[i] = messageEntry(&list.Messages[i])
	}
	writeJSON(w, http.StatusOK, out)
}

func groupKinds(k broker.GroupKinds) wire.MessageMode {
	return wire.MessageMode{HasQueueMode: k.HasQueueMode, BusGroupsCount: k.BusGroupsCount, Type: k.Type}
}

func messageEntry(e *broker.MessageEntry) wire.MessageEntry {
	return wire.MessageEntry{
		ID: e.ID, TransactionID: e.TransactionID, PartitionID: e.PartitionID, Partition: e.Partition,
		Queue: e.Queue, QueuePath: e.QueuePath, Namespace: e.Namespace, Task: e.Task, QueuePriority: e.QueuePriority,
		Offset: &e.Offset, TraceID: nullable(e.TraceID), CreatedAt: wire.At(e.CreatedAt), Status: e.Status,
		QueueStatus: e.QueueStatus, BusStatus: wire.BusStatus{ConsumedBy: e.ConsumedBy, TotalGroups: e.TotalGroups},
		LeaseExpiresAt: wire.AtOrNil(e.LeaseExpiresAt), Payload: e.Payload,
	}
}

// parseBrowse validates every browse parameter, in the order the route lists them.
func parseBrowse(q query) (bq broker.BrowseQuery, err error) {
	if q.get("queue") == "" {
		return bq, badRequest("queue is required")
	}
	if bq.Queue, err = q.readName("queue"); err != nil {
		return bq, err
	}
	if bq.Partition, err = q.readName("partition"); err != nil {
		return bq, err
	}
	switch bq.Status = q.get("status"); bq.Status {
	case "", "pending", "processing", "completed", "dead_letter":
	default:
		return bq, badRequest("status must be one of pending, processing, completed, dead_letter")
	}
	if bq.From, err = q.readTime("from"); err != nil {
		return bq, err
	}
	if bq.To, err = q.readTime("to"); err != nil {
		return bq, err
	}
	if q.get("fromOffset") != "" {
		n, err := q.readInt("fromOffset", 0, maxInt, 0, "must be a non-negative integer")
		if err != nil {
			return bq, err
		}
		if bq.Partition == "" {
			return bq, badRequest("fromOffset requires partition")
		}
		bq.FromOffset = &n
	}
	switch q.get("order") {
	case "", "desc":
	case "asc":
		bq.Ascending = true
	default:
		return bq, badRequest("order must be asc or desc")
	}
	if bq.Limit, err = q.limit(200); err != nil {
		return bq, err
	}
	if bq.Offset, err = q.offset(); err != nil {
		return bq, err
	}
	if bq.Payload, err = q.readBool("payload", false); err != nil {
		return bq, err
	}
	if ns := q.get("ns"); ns != "" {
		bq.Namespace = &ns
	}
	if task := q.get("task"); task != "" {
		bq.Task = &task
	}
	return bq, nil
}

// handleMessage answers one message's detail.
func (s *Server) handleMessage(w http.ResponseWriter, r *http.Request) {
	d, err := s.engine.Message(r.PathValue("partitionId"), r.PathValue("transactionId"))
	if err != nil {
		writeFailure(w, err)
		return
	}
	c := &d.Config
	out := wire.MessageDetail{
		MessageEntry: messageEntry(&d.MessageEntry), ErrorMessage: d.ErrorMessage, RetryCount: d.RetryCount,
		QueueConfig: wire.MessageQueueConf{LeaseTime: c.LeaseTime, RetryLimit: c.RetryLimit, RetryDelay: c.RetryDelay,
			TTL: c.TTL, Priority: c.Priority},
		Mode:           groupKinds(d.Mode),
		ConsumerGroups: make([]wire.MessageGroup, len(d.Groups)),
	}
	out.Mode.ConsumedByGroups = &d.ConsumedBy
	for i := range d.Groups {
		g := &d.Groups[i]
		out.ConsumerGroups[i] = wire.MessageGroup{Name: g.Name, Consumed: g.Consumed,
			LeaseExpiresAt: wire.AtOrNil(g.LeaseExpiresAt), Status: &g.Status, DeliveryAttempt: &g.DeliveryAttempt}
	}
	writeJSON(w, http.StatusOK, out)
}
