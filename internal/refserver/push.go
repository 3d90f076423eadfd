package refserver

import (
	"net/http"
	"strconv"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/names"
	"github.com/queenmq/queen-go/internal/wire"
)

// handlePush answers a push: 201 with one result per item, or 400 with
// nothing stored.
func (s *Server) handlePush(w http.ResponseWriter, r *http.Request) {
	items, err := readPush(w, r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	var results []broker.PushResult
	if len(items) > 0 {
		results = s.engine.Push(items)
	}
	answer := pushAnswer(results)
	writeAppended(w, http.StatusCreated, func(dst []byte) ([]byte, error) { return wire.AppendPushResults(dst, answer) })
}

// readPush reads a push's items.
func readPush(w http.ResponseWriter, r *http.Request) ([]broker.PushItem, error) {
	o, elems, err := readObjectSplitting(w, r, "items")
	if err != nil {
		return nil, err
	}
	return pushItemsOf(o.raw("items"), elems, "items")
}

// decodePushItems validates an items array all or nothing; path names it in errors.
func decodePushItems(raw wire.Value, path string) ([]broker.PushItem, error) {
	var elems []element
	if len(raw) > 0 && raw[0] == '[' {
		elems = splitArray(raw)
	}
	return pushItemsOf(raw, elems, path)
}

// pushItemsOf validates the items of raw, already split into elems, all or nothing.
func pushItemsOf(raw wire.Value, elems []element, path string) ([]broker.PushItem, error) {
	if len(raw) == 0 || raw[0] != '[' {
		return nil, badRequest("items array is required")
	}
	if err := checkPushItemCount(len(elems)); err != nil {
		return nil, err
	}
	items := make([]broker.PushItem, len(elems))
	for i, e := range elems {
		if !e.isObject() {
			return nil, badRequest("%s[%d] must be an object, got %s", path, i, wire.KindOf(e.raw))
		}
		if err := decodePushItem(e.members, &items[i], path, i); err != nil {
			return nil, err
		}
	}
	return items, nil
}

// decodePushItem checks one item; the first two texts are 0.15's, word for word.
func decodePushItem(o object, it *broker.PushItem, path string, index int) error {
	// The item's place, as errors name it; built only for an error, as a push has many items.
	at := func() string { return path + "[" + strconv.Itoa(index) + "]" }
	queue, ok, err := o.str("queue")
	if err != nil || !ok {
		return badRequest("Queue must be a string")
	}
	if queue == "" {
		return badRequest("Queue must be a non-empty string (%s.queue)", at())
	}
	if names.Problem(queue) != "" {
		return checkName(at()+".queue", queue)
	}
	it.Queue = queue
	if it.Partition, _, err = o.str("partition"); err != nil {
		return badRequest("Partition must be a string")
	}
	if it.Partition != "" && names.Problem(it.Partition) != "" {
		return checkName(at()+".partition", it.Partition)
	}
	if it.TransactionID, _, err = o.str("transactionId"); err != nil {
		return badRequest("%s.transactionId must be a string or null, got %s", at(), clip(o.raw("transactionId")))
	}
	trace, ok, err := o.str("traceId")
	if err != nil {
		return badRequest("%s.traceId must be a string or null, got %s", at(), clip(o.raw("traceId")))
	}
	if ok {
		if !names.IsUUID(trace) {
			return badRequest("%s.traceId must be a UUID in canonical form, got %q", at(), trace)
		}
		it.TraceID = trace
	}
	if p, ok := o.get("payload"); ok {
		// Any JSON value, null included; absent is stored as {}. The engine stores a copy,
		// so the stored message does not pin the request body.
		it.Payload = p
	}
	return nil
}

// pushAnswer is the push results: all eight keys, for queued and duplicate alike.
func pushAnswer(results []broker.PushResult) []wire.PushResult {
	out := make([]wire.PushResult, len(results))
	for i := range results {
		p := &results[i]
		out[i] = wire.PushResult{Index: p.Index, TransactionID: p.TransactionID, Status: p.Status,
			MessageID: p.MessageID, PartitionID: &p.PartitionID, TraceID: nullable(p.TraceID),
			QueueName: p.QueueName, Offset: &p.Offset}
	}
	return out
}
