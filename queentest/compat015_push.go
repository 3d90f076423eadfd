package queentest

import (
	"net/http"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/wire"
)

// push015 stores a push as 0.15 does (O7): 200 with snake_case results and no offset, a
// duplicate without partition_id and trace_id, and a real 201 [] for an empty items array.
func (s *Server) push015(w http.ResponseWriter, items []broker.PushItem) {
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

// writeTransaction015 answers a transaction as 0.15 does (O23): push entries without status
// or offset, and a rollback as 200 {"error","success":false}.
func writeTransaction015(w http.ResponseWriter, res broker.TxResult) {
	if !res.Success {
		writeFailure015(w, res.Error)
		return
	}
	out := wire.Transaction015{Results: make([]any, len(res.Results)), Success: true, TransactionID: res.TransactionID}
	for i, e := range res.Results {
		if e.Type == "ack" {
			out.Results[i] = wire.TxAck015{DLQ: e.DLQ, Error: nullable(e.Error), Index: e.Index, LeaseReleased: e.LeaseReleased,
				PartitionID: e.PartitionID, Success: e.Success, TransactionID: e.TransactionID, Type: e.Type}
			continue
		}
		out.Results[i] = wire.TxPush015{Index: e.Index, MessageID: e.MessageID, PartitionID: e.PartitionID,
			QueueName: e.QueueName, Success: e.Success, TransactionID: e.TransactionID, Type: e.Type}
	}
	writeJSON(w, http.StatusOK, out)
}
