package queentest

import (
	"net/http"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/wire"
)

// handleAck answers POST /api/v1/ack with an array of one ack result (R66, R74, R75).
func (s *Server) handleAck(w http.ResponseWriter, r *http.Request) {
	o, err := readObject(w, r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	item, err := decodeAckItem(o, "", "", -1)
	if err != nil {
		writeFailure(w, err)
		return
	}
	if s.v015 {
		s.ack015(w, item)
		return
	}
	if item.TransactionID == "" && item.PartitionID == "" { // R78: a request-level fault
		writeError(w, http.StatusBadRequest, "transactionId and partitionId are required")
		return
	}
	results := s.engine.Ack([]broker.AckItem{item})
	writeJSON(w, http.StatusOK, ackAnswer(results))
}

// handleAckBatch answers POST /api/v1/ack/batch with one result per item, in array order
// (R82–R89).
func (s *Server) handleAckBatch(w http.ResponseWriter, r *http.Request) {
	o, err := readObject(w, r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	items, err := decodeAckBatch(o)
	if err != nil {
		writeFailure(w, err)
		return
	}
	if s.v015 {
		s.ackBatch015(w, r, items)
		return
	}
	if len(items) == 0 { // R87
		writeBody(w, http.StatusOK, []byte("[]"))
		return
	}
	results := s.engine.Ack(items)
	writeJSON(w, http.StatusOK, ackAnswer(results))
}

func decodeAckBatch(o object) ([]broker.AckItem, error) {
	group, _, err := o.str("consumerGroup")
	if err != nil {
		return nil, err
	}
	raw := o.raw("acknowledgments")
	if len(raw) == 0 || raw[0] != '[' {
		return nil, badRequest("acknowledgments array is required")
	}
	elems := splitArray(raw)
	items := make([]broker.AckItem, len(elems))
	for i, e := range elems {
		if !e.isObject() {
			return nil, badRequest("acknowledgments[%d] must be an object, got %s", i, kindOf(e.raw))
		}
		if items[i], err = decodeAckItem(e.members, group, "acknowledgments", i); err != nil {
			return nil, err
		}
	}
	return items, nil
}

// decodeAckItem reads one ack's fields, checking only their JSON types (R86, R131): missing
// ids and unknown statuses are per-item refusals the engine reports (R76, R78). The group is
// the batch's when it names one, else the item's; the engine takes none as queue mode (R23,
// R66, R82).
// Errors name the field as path[index].field, or just field when index < 0.
func decodeAckItem(o object, batchGroup, path string, index int) (broker.AckItem, error) {
	var it broker.AckItem
	for _, f := range o {
		var dst *string
		switch f.Key {
		case "transactionId":
			dst = &it.TransactionID
		case "partitionId":
			dst = &it.PartitionID
		case "leaseId":
			dst = &it.LeaseID
		case "status":
			dst = &it.Status
		case "consumerGroup":
			dst = &it.Group
		case "error":
			dst = &it.Error
		default:
			continue // unknown fields are ignored (§2.1)
		}
		s, _, err := rawString(f.Val, f.Key)
		if err != nil {
			if index >= 0 {
				return it, badRequest("%s[%d].%s", path, index, err.Error())
			}
			return it, err
		}
		*dst = s // a repeated key counts its last value
	}
	if batchGroup != "" { // the batch's group applies to every item
		it.Group = batchGroup
	}
	return it, nil
}

// ackAnswer is §2.3's ack results; a missing reason or partition is null.
func ackAnswer(results []broker.AckResult) []wire.AckResult {
	out := make([]wire.AckResult, len(results))
	for i := range results {
		a := &results[i]
		out[i] = wire.AckResult{Index: a.Index, TransactionID: a.TransactionID,
			AckOutcome: wire.AckOutcome{Success: a.Success, Error: nullable(a.Error), LeaseReleased: a.LeaseReleased, DLQ: a.DLQ},
			QueueName:  nullable(a.QueueName), PartitionName: nullable(a.PartitionName)}
	}
	return out
}
