package refserver

// A push on 0.15. What differs from 2.0: it answers 200, not 201, with snake_case keys and no
// offset; a duplicate carries no partition_id and no trace_id; an empty items array is a
// real 201 []. The items are read and checked as on 2.0.

import (
	"net/http"

	"github.com/queenmq/queen-go/internal/wire"
)

// handlePush015 stores a push as 0.15 does: 200 with snake_case results and no offset, a
// duplicate without partition_id and trace_id, and a real 201 [] for an empty items array.
func (s *Server) handlePush015(w http.ResponseWriter, r *http.Request) {
	items, err := readPush(w, r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	if len(items) == 0 {
		writeBody(w, http.StatusCreated, []byte("[]"))
		return
	}
	results := s.engine.Push(items)
	out := make([]any, len(results))
	for i, p := range results {
		if p.Status == "duplicate" {
			out[i] = wire.PushDuplicate015{Index: i, MessageID: p.MessageID, QueueName: p.QueueName,
				Status: p.Status, TransactionID: p.TransactionID}
			continue
		}
		out[i] = wire.PushQueued015{Index: i, MessageID: p.MessageID, PartitionID: p.PartitionID,
			QueueName: p.QueueName, Status: p.Status, TraceID: nullable(p.TraceID), TransactionID: p.TransactionID}
	}
	writeJSON(w, http.StatusOK, out)
}
