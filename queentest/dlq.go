package queentest

import (
	"net/http"
	"strconv"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/jsonwrite"
)

const defaultDLQLimit = 100

// handleDLQList answers GET /api/v1/dlq (R98).
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
	writeWith(w, http.StatusOK, func(b []byte) []byte {
		b = append(b, `{"messages":[`...)
		for i := range list {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendDeadLetter(b, &list[i])
		}
		b = append(b, `],"pagination":{"limit":`...)
		b = strconv.AppendInt(b, limit, 10)
		b = append(b, `,"offset":`...)
		b = strconv.AppendInt(b, offset, 10)
		b = append(b, `},"total":`...)
		b = strconv.AppendInt(b, int64(total), 10)
		return append(b, '}')
	})
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

// appendDeadLetter writes §2.3's dead letter.
func appendDeadLetter(b []byte, d *broker.DeadLetter) []byte {
	b = append(b, `{"id":`...)
	b = jsonwrite.AppendString(b, d.ID)
	b = append(b, `,"messageId":`...)
	b = jsonwrite.AppendString(b, d.MessageID)
	b = append(b, `,"transactionId":`...)
	b = jsonwrite.AppendString(b, d.TransactionID)
	b = append(b, `,"partitionId":`...)
	b = jsonwrite.AppendString(b, d.PartitionID)
	b = append(b, `,"queue":`...)
	b = jsonwrite.AppendString(b, d.Queue)
	b = append(b, `,"partition":`...)
	b = jsonwrite.AppendString(b, d.Partition)
	b = append(b, `,"consumerGroup":`...)
	b = jsonwrite.AppendString(b, d.ConsumerGroup)
	b = append(b, `,"errorMessage":`...)
	b = jsonwrite.AppendString(b, d.ErrorMessage)
	b = append(b, `,"retryCount":`...)
	b = strconv.AppendInt(b, int64(d.RetryCount), 10)
	b = append(b, `,"data":`...)
	b = appendRaw(b, d.Data, "{}")
	b = append(b, `,"producerSub":null,"createdAt":`...)
	b = appendTime(b, d.CreatedAt)
	b = append(b, `,"failedAt":`...)
	b = appendTime(b, d.FailedAt)
	return append(b, '}')
}

// handleDLQReplay answers POST /api/v1/dlq/{id}/replay (R99, R100).
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
	writeWith(w, http.StatusOK, func(b []byte) []byte {
		b = append(b, `{"replayed":true,"id":`...)
		b = jsonwrite.AppendString(b, res.ID)
		b = append(b, `,"transactionId":`...)
		b = jsonwrite.AppendString(b, res.TransactionID)
		b = append(b, `,"partitionId":`...)
		b = jsonwrite.AppendString(b, res.PartitionID)
		b = append(b, `,"offset":`...)
		b = strconv.AppendInt(b, res.Offset, 10)
		return append(b, '}')
	})
}

// handleDLQDelete answers DELETE /api/v1/dlq/{id} (R101).
func (s *Server) handleDLQDelete(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := s.engine.DeleteDeadLetter(id); err != nil {
		writeFailure(w, err)
		return
	}
	writeWith(w, http.StatusOK, func(b []byte) []byte {
		b = append(b, `{"deleted":true,"id":`...)
		b = jsonwrite.AppendString(b, id)
		return append(b, '}')
	})
}
