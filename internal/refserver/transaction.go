package refserver

import (
	"net/http"
	"strconv"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/wire"
)

// handleTransaction applies ack and push operations all or nothing.
func (s *Server) handleTransaction(w http.ResponseWriter, r *http.Request) {
	res, err := s.transact(w, r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	writeJSON(w, http.StatusOK, transactionAnswer(res))
}

// transact reads the operations and runs them. A malformed request is an error (400).
// Malformed push items are their operation's rollback reason instead, unless an earlier
// operation fails first, so the error names the first operation that fails in request order.
func (s *Server) transact(w http.ResponseWriter, r *http.Request) (broker.TxResult, error) {
	o, err := readObject(w, r)
	if err != nil {
		return broker.TxResult{}, err
	}
	raw := o.raw("operations")
	if len(raw) == 0 || raw[0] != '[' {
		return broker.TxResult{}, badRequest("operations array required")
	}
	elems := splitArray(raw)
	if len(elems) == 0 {
		return broker.TxResult{}, badRequest("operations array cannot be empty")
	}
	ops := make([]broker.TxOp, len(elems))
	refusedAt, reason := -1, ""
	for i, e := range elems {
		at := "operations[" + strconv.Itoa(i) + "]"
		if !e.isObject() {
			return broker.TxResult{}, badRequest("%s must be an object, got %s", at, wire.KindOf(e.raw))
		}
		op := e.members
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

// transactionAnswer is the transaction result; a rollback has its error and no results.
func transactionAnswer(res broker.TxResult) wire.TransactionAnswer {
	out := wire.TransactionAnswer{TransactionID: res.TransactionID, Success: res.Success,
		Results: make([]wire.TransactionEntry, 0, len(res.Results))}
	if !res.Success {
		out.Error = &res.Error
		return out
	}
	for i := range res.Results {
		e := &res.Results[i]
		entry := wire.TransactionEntry{Index: e.Index, Type: e.Type, Success: e.Success,
			TransactionID: e.TransactionID, PartitionID: e.PartitionID}
		if e.Type == "ack" {
			entry.AckEntry = &wire.AckEntry{Error: nullable(e.Error), DLQ: e.DLQ, LeaseReleased: e.LeaseReleased}
		} else {
			entry.PushEntry = &wire.PushEntry{Status: e.Status, MessageID: e.MessageID, QueueName: e.QueueName, Offset: &e.Offset}
		}
		out.Results = append(out.Results, entry)
	}
	return out
}
