package refserver

import (
	"fmt"
	"net/http"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/names"
	"github.com/queenmq/queen-go/internal/wire"
)

// handleAck answers a single ack with an array of one ack result.
func (s *Server) handleAck(w http.ResponseWriter, r *http.Request) {
	item, err := readAck(w, r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	if item.TransactionID == "" && item.PartitionID == "" { // a request-level fault
		WriteError(w, http.StatusBadRequest, "transactionId and partitionId are required")
		return
	}
	writeAckAnswer(w, s.engine.Ack([]broker.AckItem{item}))
}

// handleAckBatch answers a batch ack with one result per item, in array order.
func (s *Server) handleAckBatch(w http.ResponseWriter, r *http.Request) {
	items, err := readAckBatch(w, r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	if len(items) == 0 { // an empty batch acks nothing
		writeBody(w, http.StatusOK, []byte("[]"))
		return
	}
	writeAckAnswer(w, s.engine.Ack(items))
}

// readAck reads a single ack.
func readAck(w http.ResponseWriter, r *http.Request) (broker.AckItem, error) {
	o, err := readObject(w, r)
	if err != nil {
		return broker.AckItem{}, err
	}
	return decodeAckItem(o, "", "", -1)
}

// readAckBatch reads a batch ack's items, each taking the batch's group when it names one.
func readAckBatch(w http.ResponseWriter, r *http.Request) ([]broker.AckItem, error) {
	o, elems, err := readObjectSplitting(w, r, "acknowledgments")
	if err != nil {
		return nil, err
	}
	group, _, err := o.str("consumerGroup")
	if err != nil {
		return nil, err
	}
	if err := checkOptionalName("consumerGroup", group); err != nil {
		return nil, err
	}
	raw := o.raw("acknowledgments")
	if len(raw) == 0 || raw[0] != '[' {
		return nil, badRequest("acknowledgments array is required")
	}
	items := make([]broker.AckItem, len(elems))
	for i, e := range elems {
		if !e.isObject() {
			return nil, badRequest("acknowledgments[%d] must be an object, got %s", i, wire.KindOf(e.raw))
		}
		if items[i], err = decodeAckItem(e.members, group, "acknowledgments", i); err != nil {
			return nil, err
		}
	}
	return items, nil
}

// decodeAckItem reads one ack's fields, checking their JSON types and the group's name: missing
// ids and unknown statuses are per-item refusals the engine reports. The group is
// the batch's when it names one, else the item's; the engine takes none as queue mode.
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
			continue // unknown fields are ignored
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
	if it.Group != "" && names.Problem(it.Group) != "" { // checked before anything is applied
		field := "consumerGroup"
		if index >= 0 {
			field = fmt.Sprintf("%s[%d].%s", path, index, field)
		}
		return it, checkName(field, it.Group)
	}
	if batchGroup != "" { // the batch's group applies to every item
		it.Group = batchGroup
	}
	return it, nil
}

// writeAckAnswer answers an ack with its results.
func writeAckAnswer(w http.ResponseWriter, results []broker.AckResult) {
	answer := ackAnswer(results)
	writeAppended(w, http.StatusOK, func(dst []byte) ([]byte, error) { return wire.AppendAckResults(dst, answer) })
}

// ackAnswer is the ack results; a missing reason or partition is null.
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
