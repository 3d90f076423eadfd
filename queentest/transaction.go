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
	ops, err := decodeTransaction(o)
	if err != nil {
		writeFailure(w, err)
		return
	}
	writeJSON(w, http.StatusOK, transactionResponse(s.engine.Transaction(ops)))
}

// decodeTransaction reads the operations. A malformed request is an error (400, R129). An
// invalid push item is left to the engine as that operation's rollback reason, so the error
// names the first operation that fails in request order (R127).
func decodeTransaction(o object) ([]broker.TxOp, error) {
	raw := o.raw("operations")
	if len(raw) == 0 || raw[0] != '[' {
		return nil, badRequest("operations array required")
	}
	elems := jsonsplit.SplitArray(raw)
	if len(elems) == 0 {
		return nil, badRequest("operations array cannot be empty")
	}
	ops := make([]broker.TxOp, len(elems))
	for i, e := range elems {
		at := "operations[" + strconv.Itoa(i) + "]"
		op, err := asObject(e, at)
		if err != nil {
			return nil, err
		}
		typ, _, err := rawString(op.raw("type"), at+".type")
		if err != nil {
			return nil, err
		}
		ops[i].Type = typ
		switch typ {
		case "ack":
			if ops[i].Ack, err = decodeAckItem(op, "", "operations", i); err != nil {
				return nil, err
			}
		case "push":
			items, perr := decodePushItems(op.raw("items"), at+".items")
			if perr != nil {
				ops[i].Invalid = perr.Error()
			}
			ops[i].Push = items
		}
	}
	return ops, nil
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
		msg := res.Error
		out.Error = &msg
		return out // a rollback's results are empty
	}
	for _, e := range res.Results {
		if e.Type == "ack" {
			out.Results = append(out.Results, txEntry{
				"index": e.Index, "type": "ack", "success": e.Success,
				"transactionId": e.TransactionID, "partitionId": e.PartitionID,
				"error": e.Error, "dlq": e.DLQ, "leaseReleased": e.LeaseReleased,
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
