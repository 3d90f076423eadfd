package refserver

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

// handleExtend015 answers a lease extension as 0.15 does: seconds defaults to 60, a
// non-numeric one is a 500, and expiresAt has milliseconds.
func (s *Server) handleExtend015(w http.ResponseWriter, r *http.Request) {
	leaseID := r.PathValue("leaseId")
	o, err := readObject(w, r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	seconds, ok, err := o.integer("seconds")
	if err != nil {
		writeTypeError015(w, "seconds", "number")
		return
	}
	if !ok {
		seconds = broker.DefaultExtendSeconds
	}
	res := s.engine.Extend(leaseID, int(min(max(seconds, 0), maxLeaseSeconds)))
	out := wire.Extend015{Error: nullable(res.Error), LeaseID: leaseID, Success: res.Success}
	if !res.ExpiresAt.IsZero() {
		out.ExpiresAt = &wire.Time015{Time: res.ExpiresAt}
	}
	writeJSON(w, http.StatusOK, []wire.Extend015{out})
}
