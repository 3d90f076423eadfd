package queen

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/queenmq/queen-go/internal/names"
	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/wire"
)

// Limits of one push request: the broker takes at most 10,000 items and a 32 MiB body.
// Longer pushes are split; the byte bound leaves room for the JSON around the payloads.
const (
	maxPushItems = 10000
	maxPushBytes = 16 << 20
)

// Push stores items in the builder's queue, each in its own Partition, else in the partition set
// by the builder's Partition ("Default" when unset), and returns one result per item, in order.
// Items without a TransactionID get a UUIDv7, so a push retried by the transport is deduplicated
// by the broker: a result's Status is "queued" for a new message and "duplicate" when the
// partition already held that transactionId (on 0.15 brokers also "buffered"). Pushes above
// 10,000 items or 16 MiB are sent as several requests; an error after the first means the
// earlier ones were stored (a retry of the whole call is safe thanks to the transactionIds).
func (b QueueBuilder) Push(ctx context.Context, items ...PushItem) ([]PushResult, error) {
	if err := b.validate(forPush); err != nil {
		return nil, err
	}
	encoded, err := pushItems("items", b.queue, b.partition, items)
	if err != nil {
		return nil, err
	}
	results := make([]PushResult, 0, len(items))
	for len(encoded) > 0 {
		n := pushChunkLen(encoded)
		got, err := b.client.pushChunk(ctx, affinityKey(b.queue, b.partition, ""), encoded[:n])
		if err != nil {
			return results, err
		}
		results = append(results, got...)
		encoded = encoded[n:]
	}
	return results, nil
}

// pushChunkLen is how many of items, from the first, one push request carries.
func pushChunkLen(items []wire.PushItem) int {
	return requestLen(len(items), maxPushItems, func(i int) int { return pushItemSize(&items[i]) })
}

// requestLen is how many of n items, from the first, one push request carries: at most limit,
// and no more than maxPushBytes of them (by size) unless the first alone is larger.
func requestLen(n, limit int, size func(i int) int) int {
	n = min(n, limit)
	total := 0
	for i := range n {
		total += size(i)
		if total > maxPushBytes && i > 0 {
			return i
		}
	}
	return n
}

// pushItemSize estimates an item's share of a push body.
func pushItemSize(w *wire.PushItem) int {
	return len(w.Payload) + len(w.Queue) + len(w.Partition) + len(w.TransactionID) + len(w.TraceID) + 80
}

// pushItems encodes and checks items before anything is sent: data must encode as JSON and a
// trace id must be a canonical UUID, which the broker requires (and a 0.15 broker fails other
// clients' pushes on one that is not). name prefixes the field names in errors.
func pushItems(name, queue, partition string, items []PushItem) ([]wire.PushItem, error) {
	if err := checkPushTarget(name, queue, partition); err != nil {
		return nil, err
	}
	encoded := make([]wire.PushItem, len(items))
	for i, it := range items {
		w, err := encodePushItem(name, i, queue, partition, it)
		if err != nil {
			return nil, err
		}
		encoded[i] = w
	}
	return encoded, nil
}

// encodePushItem checks and encodes one item for queue, in its own partition or else in
// partition; its field names in errors are name[index], or name alone when index < 0. The
// caller has checked queue and partition.
func encodePushItem(name string, index int, queue, partition string, it PushItem) (wire.PushItem, error) {
	field := func(f string) string {
		if index < 0 {
			return name + "." + f
		}
		return fmt.Sprintf("%s[%d].%s", name, index, f)
	}
	w := wire.PushItem{Queue: queue, Partition: partition, TransactionID: it.TransactionID, TraceID: it.TraceID}
	if it.Partition != "" {
		if err := checkNameField(field("partition"), it.Partition); err != nil {
			return wire.PushItem{}, err
		}
		w.Partition = it.Partition
	}
	if it.TraceID != "" && !names.IsUUID(it.TraceID) {
		return wire.PushItem{}, invalidOption(field("traceId"), it.TraceID,
			"must be a UUID in canonical form (8-4-4-4-12 hex digits)")
	}
	if err := checkText(field("transactionId"), it.TransactionID); err != nil {
		return wire.PushItem{}, err
	}
	payload, err := encodeData(it.Data)
	if err != nil {
		return wire.PushItem{}, fmt.Errorf("%w: %s: %v", ErrInvalidOption, field("data"), err)
	}
	w.Payload = wire.Value(payload)
	if w.TransactionID == "" {
		id, err := uuid.NewV7()
		if err != nil {
			return wire.PushItem{}, fmt.Errorf("queen: make transactionId: %w", err)
		}
		w.TransactionID = id.String()
	}
	return w, nil
}

// encodeData turns a PushItem's Data into the payload: raw JSON passes through (checked), any
// other value is JSON-encoded, and nil is null.
func encodeData(v any) (json.RawMessage, error) {
	switch d := v.(type) {
	case nil:
		return json.RawMessage("null"), nil
	case json.RawMessage:
		if !json.Valid(d) {
			return nil, fmt.Errorf("json.RawMessage is not valid JSON")
		}
		if !utf8.Valid(d) {
			return nil, fmt.Errorf("json.RawMessage is not valid UTF-8")
		}
		return d, nil
	case string:
		if !utf8.ValidString(d) {
			return nil, fmt.Errorf("string is not valid UTF-8")
		}
	}
	return json.Marshal(v)
}

// pushChunk sends one push request and matches its results to the items by position.
func (c *Client) pushChunk(ctx context.Context, affinity string, items []wire.PushItem) ([]PushResult, error) {
	raw, err := wire.Marshal(&wire.PushRequest{Items: items})
	if err != nil {
		return nil, fmt.Errorf("queen: encode push: %w", err)
	}
	// Resending a push is safe (its transactionIds deduplicate it), but once its answer was lost
	// a final failure must not read as "nothing stored": once marks it for ErrOutcomeUnknown.
	req := request{method: http.MethodPost, path: route.Push.Path(), body: raw, affinity: affinity,
		route: route.Push, items: len(items), once: true}
	buf := getBuffer()
	defer putBuffer(buf)
	if _, err := c.send(ctx, &req, buf); err != nil {
		return nil, err
	}
	return pushResults(buf.Bytes(), &req, items)
}

// pushResults reads the answer to a push of items: one result per item, matched by position,
// as a 0.15 broker may renumber the index it sends; an answer with another count of results is
// an *APIError.
func pushResults(body []byte, req *request, items []wire.PushItem) ([]PushResult, error) {
	var answer []wire.PushResult
	if err := decodeArray(body, req, &answer); err != nil {
		return nil, err
	}
	if len(answer) != len(items) {
		return nil, &APIError{StatusCode: http.StatusOK, Method: req.method, Path: req.path,
			Message: fmt.Sprintf("push answered %d results for %d items", len(answer), len(items))}
	}
	results := make([]PushResult, len(items))
	for i, w := range answer {
		r := &results[i]
		r.TransactionID = firstNonEmpty(w.TransactionID, items[i].TransactionID)
		r.MessageID, r.PartitionID, r.Status, r.Offset = w.MessageID, deref(w.PartitionID), w.Status, -1
		if w.Offset != nil {
			r.Offset = *w.Offset
		}
	}
	return results, nil
}
