package refserver

// Acks on 0.15. What differs from 2.0: a missing transactionId or partitionId refuses the
// whole request with 0.15's own texts; an empty batch is never answered; one partitionId that
// is not a UUID fails the whole batch as PostgreSQL's error, in a 200; the engine's 0.15 acks
// apply the items.

import (
	"net/http"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/names"
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
	switch {
	case item.TransactionID == "":
		WriteError(w, http.StatusBadRequest, errTransactionIDRequired015)
		return
	case item.PartitionID == "":
		WriteError(w, http.StatusBadRequest, errPartitionIDRequired015)
		return
	}
	s.applyAcks015(w, []broker.AckItem{item})
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
	for _, it := range items {
		switch {
		case it.PartitionID == "":
			WriteError(w, http.StatusBadRequest, errBatchPartitionID015)
			return
		case it.TransactionID == "":
			WriteError(w, http.StatusBadRequest, errBatchTransactionID015)
			return
		}
	}
	s.applyAcks015(w, items)
}

// applyAcks015 applies validated items. One partitionId that is not a UUID fails the whole merged
// SQL call.
func (s *Server) applyAcks015(w http.ResponseWriter, items []broker.AckItem) {
	for _, it := range items {
		if !names.IsUUID(it.PartitionID) {
			writeFailure015(w, "ERROR:  invalid input syntax for type uuid: \""+it.PartitionID+
				"\"\nCONTEXT:  PL/pgSQL function ack_messages_v2(jsonb) line 14 at FOR over SELECT rows\n")
			return
		}
	}
	results := s.engine.Ack(items)
	writeJSON(w, http.StatusOK, ackAnswer(results))
}
