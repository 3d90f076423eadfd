package queen

import (
	"context"
	"net/http"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/wire"
)

// Limits of one push request: the broker takes at most 10,000 items and a 32 MiB body.
// Longer pushes are split; the byte bound, on the items as encoded, leaves room to spare.
const (
	maxPushItems = 10000
	maxPushBytes = 16 << 20
)

// Push stores items in the builder's queue, each in its own Partition, else in the partition set
// by the builder's Partition ("Default" when unset), and returns one result per item, in order.
// Items without a TransactionID get a UUIDv7, so a push retried by the transport is deduplicated
// by the broker: a result's Status is "queued" for a new message and "duplicate" when the
// partition already held that transactionId (on 0.15 brokers also "buffered"). Pushes above
// 10,000 items or 16 MiB (as encoded) are sent as several requests; an error after the first
// means the earlier ones were stored (a retry of the whole call is safe thanks to the
// transactionIds).
func (b QueueBuilder) Push(ctx context.Context, items ...PushItem) ([]PushResult, error) {
	if err := b.validate(forPush); err != nil {
		return nil, err
	}
	if err := checkPushTarget("items", b.queue, b.partition); err != nil {
		return nil, err
	}
	body := getPushBody()
	defer putPushBody(body)
	for i := range items {
		if err := body.add("items", i, b.queue, b.partition, &items[i]); err != nil {
			return nil, err
		}
	}
	affinity := affinityKey(b.queue, b.partition, "")
	results := make([]PushResult, 0, len(items))
	for first := 0; first < len(items); {
		n := body.requestLen(first)
		var err error
		results, err = b.client.push(ctx, affinity, body.request(first, n), n, results,
			func(i int) string { return body.transactionID(items, first+i) }, false)
		if err != nil {
			return results, err
		}
		first += n
	}
	return results, nil
}

// push sends one push request, whose body carries n items, and appends their results to dst;
// idOf(i) is item i's transactionId, for a result that does not echo it. oneTry: the transport
// does not retry it.
func (c *Client) push(ctx context.Context, affinity string, body []byte, n int, dst []PushResult, idOf func(i int) string, oneTry bool) ([]PushResult, error) {
	// Resending a push is safe (its transactionIds deduplicate it), but once its answer was lost
	// a final failure must not read as "nothing stored": once marks it for ErrOutcomeUnknown.
	req := request{method: http.MethodPost, path: route.Push.Path(), body: body, affinity: affinity,
		route: route.Push, items: n, once: true, oneTry: oneTry}
	buf := getBuffer()
	defer putBuffer(buf)
	if _, err := c.send(ctx, &req, buf); err != nil {
		return dst, err
	}
	return readPushResults(buf, &req, n, dst, idOf)
}

// pushItems checks and encodes items for a request that carries them as values (a transaction's
// push operation). name prefixes the field names in errors.
func pushItems(name, queue, partition string, items []PushItem) ([]wire.PushItem, error) {
	if err := checkPushTarget(name, queue, partition); err != nil {
		return nil, err
	}
	encoded := make([]wire.PushItem, len(items))
	for i := range items {
		w, err := encodePushItem(name, i, queue, partition, &items[i])
		if err != nil {
			return nil, err
		}
		encoded[i] = w
	}
	return encoded, nil
}

// encodePushItem checks and encodes one item for queue, in its own partition or else in
// partition, as appendPushItem does; its field names in errors are name[index]. The caller has
// checked queue and partition.
func encodePushItem(name string, index int, queue, partition string, it *PushItem) (wire.PushItem, error) {
	if err := checkPushItem(name, index, it); err != nil {
		return wire.PushItem{}, err
	}
	w := wire.PushItem{Queue: queue, Partition: partition, TransactionID: it.TransactionID, TraceID: it.TraceID}
	if it.Partition != "" {
		w.Partition = it.Partition
	}
	payload, err := appendPayload(nil, it.Data)
	if err != nil {
		return wire.PushItem{}, invalidData(name, index, err)
	}
	w.Payload = payload
	if w.TransactionID == "" {
		w.TransactionID = newID()
	}
	return w, nil
}
