package refserver

import (
	"net/http"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/wire"
)

const defaultDLQLimit = 100

// handleDLQList answers the dead-letter list.
func (s *Server) handleDLQList(w http.ResponseWriter, r *http.Request) {
	q, err := parseQuery(r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	dq, limit, offset, err := parseDLQQuery(q)
	if err != nil {
		writeFailure(w, err)
		return
	}
	list, total := s.engine.DeadLetters(dq)
	answer := wire.DLQAnswer{Messages: make([]wire.DeadLetter, len(list)),
		Pagination: &wire.Pagination{Limit: limit, Offset: offset}, Total: &total}
	for i := range list {
		answer.Messages[i] = deadLetterAnswer(&list[i])
	}
	writeJSON(w, http.StatusOK, answer)
}

// parseDLQQuery also returns limit and offset as sent, for the pagination echo; the engine
// gets them capped, which changes no answer (no list is that long) and keeps its sums small.
func parseDLQQuery(q query) (dq broker.DLQQuery, limit, offset int64, err error) {
	dq = broker.DLQQuery{Queue: q.get("queue"), Group: q.get("consumerGroup"), Partition: q.get("partition")}
	for _, f := range [...]struct{ field, name string }{{"queue", dq.Queue}, {"consumerGroup", dq.Group}, {"partition", dq.Partition}} {
		if err := checkOptionalName(f.field, f.name); err != nil {
			return dq, 0, 0, err
		}
	}
	if limit, err = q.intIn("limit", 1, maxInt, defaultDLQLimit, "must be a positive integer"); err != nil {
		return dq, 0, 0, err
	}
	if offset, err = q.intIn("offset", 0, maxInt, 0, "must be an integer of at least 0"); err != nil {
		return dq, 0, 0, err
	}
	dq.Limit, dq.Offset = int(min(limit, maxInt32)), int(min(offset, maxInt32))
	from, ok, err := q.timestamp("from")
	if err != nil {
		return dq, 0, 0, err
	}
	if ok {
		dq.From = &from
	}
	to, ok, err := q.timestamp("to")
	if err != nil {
		return dq, 0, 0, err
	}
	if ok {
		dq.To = &to
	}
	return dq, limit, offset, nil
}

// deadLetterAnswer is one dead letter as the list answers it.
func deadLetterAnswer(d *broker.DeadLetter) wire.DeadLetter {
	return wire.DeadLetter{ID: d.ID, MessageID: d.MessageID, TransactionID: d.TransactionID,
		PartitionID: d.PartitionID, Queue: d.Queue, Partition: d.Partition, ConsumerGroup: d.ConsumerGroup,
		ErrorMessage: d.ErrorMessage, RetryCount: d.RetryCount, Data: dataOr(d.Data, "{}"),
		CreatedAt: wire.At(d.CreatedAt), FailedAt: wire.At(d.FailedAt)}
}

// handleDLQReplay pushes a dead letter back and forgets it.
func (s *Server) handleDLQReplay(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	res, err := s.engine.Replay(id)
	if err != nil {
		writeFailure(w, err)
		return
	}
	if res.ID == "" {
		res.ID = id
	}
	if res.TransactionID == "" {
		res.TransactionID = "dlq:" + id
	}
	writeJSON(w, http.StatusOK, wire.ReplayAnswer{Replayed: true, ID: res.ID, TransactionID: res.TransactionID,
		PartitionID: res.PartitionID, Offset: &res.Offset})
}

// handleDLQDelete forgets a dead letter.
func (s *Server) handleDLQDelete(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := s.engine.DeleteDeadLetter(id); err != nil {
		writeFailure(w, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.DeleteDeadLetterAnswer{Deleted: true, ID: id})
}
