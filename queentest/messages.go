package queentest

import (
	"net/http"

	"github.com/queenmq/queen-go/internal/broker"
)

// handleMessages answers GET /api/v1/messages, a browse that leases nothing (R164–R167).
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
	writeWire(w, list)
}

// parseBrowse validates every browse parameter (R164, R171), in the order the route lists them.
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

// handleMessage answers GET /api/v1/messages/{partitionId}/{transactionId} (R168).
func (s *Server) handleMessage(w http.ResponseWriter, r *http.Request) {
	d, err := s.engine.Message(r.PathValue("partitionId"), r.PathValue("transactionId"))
	if err != nil {
		writeFailure(w, err)
		return
	}
	writeWire(w, d)
}
