package queentest

import (
	"net/http"
	"strconv"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/jsonsplit"
)

// handleTransaction answers POST /api/v1/transaction (R126–R130).
func (s *Server) handleTransaction(w http.ResponseWriter, r *http.Request) {
	o, err := readObject(w, r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	res, err := s.transact(o)
	if err != nil {
		writeFailure(w, err)
		return
	}
	writeJSON(w, http.StatusOK, transactionResponse(res))
}

// transact reads the operations and runs them. A malformed request is an error (400, R129).
// Malformed push items are their operation's rollback reason instead, unless an earlier
// operation fails first, so the error names the first operation that fails in request order
// (R127).
func (s *Server) transact(o object) (broker.TxResult, error) {
	raw := o.raw("operations")
	if len(raw) == 0 || raw[0] != '[' {
		return broker.TxResult{}, badRequest("operations array required")
	}
	elems := jsonsplit.SplitArray(raw)
	if len(elems) == 0 {
		return broker.TxResult{}, badRequest("operations array cannot be empty")
	}
	ops := make([]broker.TxOp, len(elems))
	refusedAt, reason := -1, ""
	for i, e := range elems {
		at := "operations[" + strconv.Itoa(i) + "]"
		op, err := asObject(e, at)
		if err != nil {
			return broker.TxResult{}, err
		}
		typ, _, err := rawString(op.raw("type"), at+".type")
		if err != nil {
			return broker.TxResult{}, err
		}
		ops[i].Type = typ
		switch typ {
		case "ack":
			if ops[i].Ack, err = decodeAckItem(op, "", "operations", i); err != nil {
				return broker.TxResult{}, err
			}
		case "push":
			items, perr := decodePushItems(op.raw("items"), at+".items")
			if perr != nil && refusedAt < 0 {
				refusedAt, reason = i, perr.Error()
			}
			ops[i].Push = items
		}
	}
	if refusedAt >= 0 {
		return s.engine.RefuseTransaction(ops, refusedAt, reason), nil
	}
	return s.engine.Transaction(ops), nil
}

type txResponse struct {
	TransactionID string    `json:"transactionId"`
	Success       bool      `json:"success"`
	Error         *string   `json:"error,omitempty"`
	Results       []txEntry `json:"results"`
}

// txEntry is one of §2.3's transaction results; ack and push entries have different keys.
type txEntry map[string]any

func transactionResponse(res broker.TxResult) txResponse {
	out := txResponse{TransactionID: res.TransactionID, Success: res.Success, Results: []txEntry{}}
	if !res.Success {
		out.Error = &res.Error
		return out // a rollback's results are empty
	}
	for _, e := range res.Results {
		if e.Type == "ack" {
			out.Results = append(out.Results, txEntry{
				"index": e.Index, "type": "ack", "success": e.Success,
				"transactionId": e.TransactionID, "partitionId": e.PartitionID,
				"error": nullable(e.Error), "dlq": e.DLQ, "leaseReleased": e.LeaseReleased,
			})
			continue
		}
		out.Results = append(out.Results, txEntry{
			"index": e.Index, "type": "push", "success": e.Success, "status": e.Status,
			"transactionId": e.TransactionID, "messageId": e.MessageID,
			"partitionId": e.PartitionID, "queueName": e.QueueName, "offset": e.Offset,
		})
	}
	return out
}
