package refserver

// Acks on 0.15. What differs from 2.0: a missing transactionId or partitionId refuses the
// whole request with 0.15's own texts; an empty batch is never answered; one partitionId that
// is not a UUID fails the whole batch as PostgreSQL's error, in a 200; the engine's 0.15 acks
// apply the items.

import (
	"net/http"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/names"
	"github.com/queenmq/queen-go/internal/wire"
)

// 0.15's refusals of a whole ack request, word for word.
const (
	errTransactionIDRequired015 = "transactionId is required"
	errPartitionIDRequired015   = "partitionId is required to ensure message uniqueness"
	errBatchPartitionID015      = "Each acknowledgment must have a valid partitionId string to ensure message uniqueness"
	errBatchTransactionID015    = "Each acknowledgment must have a valid transactionId string"
)

// handleAck015 answers a single ack as 0.15 does.
func (s *Server) handleAck015(w http.ResponseWriter, r *http.Request) {
	item, err := readAck(w, r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	s.applyAcks015(w, []broker.AckItem{item}, true)
}

// handleAckBatch015 answers a batch ack as 0.15 does; an empty acknowledgments array is never
// answered.
func (s *Server) handleAckBatch015(w http.ResponseWriter, r *http.Request) {
	items, err := readAckBatch(w, r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	if len(items) == 0 {
		select { // until the client gives up or the broker closes
		case <-r.Context().Done():
		case <-s.done:
		}
		return
	}
	s.applyAcks015(w, items, false)
}

// applyAcks015 checks and applies the items of a single ack (single) or a batch. An item
// without an id refuses the whole request: a single ack's transactionId is checked first, a
// batch item's partitionId. One partitionId that is not a UUID fails the whole merged SQL call.
func (s *Server) applyAcks015(w http.ResponseWriter, items []broker.AckItem, single bool) {
	for _, it := range items {
		if msg := missingID015(it, single); msg != "" {
			WriteError(w, http.StatusBadRequest, msg)
			return
		}
	}
	for _, it := range items {
		if !names.IsUUID(it.PartitionID) {
			writeFailure015(w, "ERROR:  invalid input syntax for type uuid: \""+it.PartitionID+
				"\"\nCONTEXT:  PL/pgSQL function ack_messages_v2(jsonb) line 14 at FOR over SELECT rows\n")
			return
		}
	}
	results := s.engine.Ack(items)
	out := make([]wire.AckResult015, len(results))
	for i := range results {
		a := &results[i]
		out[i] = wire.AckResult015{DLQ: a.DLQ, Error: nullable(a.Error), Index: a.Index, LeaseReleased: a.LeaseReleased,
			PartitionName: nullable(a.PartitionName), QueueName: nullable(a.QueueName), Success: a.Success, TransactionID: a.TransactionID}
	}
	writeJSON(w, http.StatusOK, out)
}

// missingID015 is 0.15's refusal of an item that lacks an id, or "".
func missingID015(it broker.AckItem, single bool) string {
	switch {
	case single && it.TransactionID == "":
		return errTransactionIDRequired015
	case single && it.PartitionID == "":
		return errPartitionIDRequired015
	case it.PartitionID == "":
		return errBatchPartitionID015
	case it.TransactionID == "":
		return errBatchTransactionID015
	}
	return ""
}
