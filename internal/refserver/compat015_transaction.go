package refserver

// A transaction on 0.15. What differs from 2.0: push entries carry no status and no offset, ack
// entries no leaseReleased and no partitionId, and a rollback is a 200
// {"error","results":[],"success":false,"transactionId"}; the engine's 0.15 transactions
// decide what rolls back.

import (
	"net/http"

	"github.com/queenmq/queen-go/internal/wire"
)

// handleTransaction015 answers a transaction as 0.15 does.
func (s *Server) handleTransaction015(w http.ResponseWriter, r *http.Request) {
	res, err := s.transact(w, r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	if !res.Success {
		writeJSON(w, http.StatusOK, wire.TxFailure015{Error: res.Error, Results: []any{}, TransactionID: res.TransactionID})
		return
	}
	out := wire.Transaction015{Results: make([]any, len(res.Results)), Success: true, TransactionID: res.TransactionID}
	for i, e := range res.Results {
		if e.Type == "ack" {
			out.Results[i] = wire.TxAck015{DLQ: e.DLQ, Error: nullable(e.Error), Index: e.Index,
				Success: e.Success, TransactionID: e.TransactionID, Type: e.Type}
			continue
		}
		out.Results[i] = wire.TxPush015{Index: e.Index, MessageID: e.MessageID, PartitionID: e.PartitionID,
			QueueName: e.QueueName, Success: e.Success, TransactionID: e.TransactionID, Type: e.Type}
	}
	writeJSON(w, http.StatusOK, out)
}
