package admin

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"time"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/wire"
)

// MessageQuery selects messages to peek at.
type MessageQuery struct {
	Queue     string // required
	Partition string // "": every partition
	Limit     int    // 1..1000; 0: 200
	Offset    int    // entries to skip

	Status string // "", pending, processing, completed or dead_letter
	Oldest bool   // oldest first; the default is newest first (a 0.15 broker lists newest first only)
	// FromOffset, with Partition, starts the list at this offset: going up when Oldest, else down.
	// Paging one partition by offset neither misses nor repeats a message while others are
	// pushed (Offset shifts then). A broker without offsets (0.15) gives ErrUnsupported.
	FromOffset *int64
}

// StoredMessage is a message as stored, with its payload. Offset is -1 when the broker does
// not number messages (0.15).
type StoredMessage struct {
	ID, TransactionID, TraceID, Partition, PartitionID string
	Offset                                             int64
	CreatedAt                                          time.Time
	Data                                               json.RawMessage

	Queue  string
	Status string // pending, processing, completed or dead_letter
}

// Messages lists a queue's messages with their payloads, newest first unless q.Oldest. It is a
// peek: it leases nothing, and no group's cursor or delivery count moves. An unknown queue or
// partition gives ErrNotFound.
func (a *Admin) Messages(ctx context.Context, q MessageQuery) ([]StoredMessage, error) {
	if err := validName("Queue", q.Queue); err != nil {
		return nil, err
	}
	if err := optionalName("Partition", q.Partition); err != nil {
		return nil, err
	}
	switch {
	case q.Limit < 0 || q.Limit > 1000:
		return nil, invalid("Limit", q.Limit, "must be from 1 to 1000 (0: 200)")
	case q.Offset < 0:
		return nil, invalid("Offset", q.Offset, "must not be negative")
	}
	switch q.Status {
	case "", "pending", "processing", "completed", "dead_letter":
	default:
		return nil, invalid("Status", q.Status, "must be pending, processing, completed or dead_letter")
	}
	if q.FromOffset != nil {
		switch {
		case q.Partition == "":
			return nil, invalid("FromOffset", *q.FromOffset, "needs Partition")
		case *q.FromOffset < 0:
			return nil, invalid("FromOffset", *q.FromOffset, "must not be negative")
		}
	}
	limit := q.Limit
	if limit == 0 {
		limit = 200
	}
	v := url.Values{"queue": {q.Queue}, "limit": {strconv.Itoa(limit)}, "payload": {"true"},
		"from": {"1970-01-01T00:00:00Z"}} // 0.15 lists the last hour unless told
	if q.Offset > 0 {
		v.Set("offset", strconv.Itoa(q.Offset))
	}
	if q.Partition != "" {
		v.Set("partition", q.Partition)
	}
	if q.Status != "" {
		v.Set("status", q.Status)
	}
	if q.Oldest {
		v.Set("order", "asc")
	}
	if q.FromOffset != nil {
		v.Set("fromOffset", strconv.FormatInt(*q.FromOffset, 10))
	}
	var list wire.MessageList
	what := "queue " + quote(q.Queue)
	if q.Partition != "" {
		what += " partition " + quote(q.Partition)
	}
	err := a.read(ctx, at(route.Messages), v, what, &list)
	if errors.Is(err, errEmpty) {
		return []StoredMessage{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]StoredMessage, 0, len(list.Messages))
	numbered := true
	for _, e := range list.Messages {
		numbered = numbered && e.Offset != nil
		out = append(out, storedMessage(e))
	}
	if (q.Oldest || q.FromOffset != nil) && !numbered { // 0.15 ignores order and fromOffset
		return nil, unsupported("listing oldest first or from an offset: the broker does not number messages")
	}
	for i := range out {
		if out[i].Data != nil {
			continue
		}
		// A broker that sends no payloads in lists (0.15) has them in the message detail.
		d, err := a.message(ctx, out[i].PartitionID, out[i].TransactionID)
		if errors.Is(err, ErrNotFound) { // gone since it was listed
			continue
		}
		if err != nil {
			return nil, err
		}
		out[i].Data = json.RawMessage(d.Payload)
	}
	return out, nil
}

func storedMessage(e wire.MessageEntry) StoredMessage {
	m := StoredMessage{
		ID: e.ID, TransactionID: e.TransactionID, Partition: e.Partition, PartitionID: e.PartitionID,
		Offset: orUnknown(e.Offset), CreatedAt: e.CreatedAt.Time, Queue: e.Queue, Status: e.Status,
	}
	if e.TraceID != nil {
		m.TraceID = *e.TraceID
	}
	if len(e.Payload) > 0 {
		m.Data = json.RawMessage(e.Payload)
	}
	return m
}

// Message reads one message by its partition id and transaction id, with its payload.
// An unknown one gives ErrNotFound.
func (a *Admin) Message(ctx context.Context, partitionID, transactionID string) (StoredMessage, error) {
	if err := required("partitionID", partitionID); err != nil {
		return StoredMessage{}, err
	}
	if err := required("transactionID", transactionID); err != nil {
		return StoredMessage{}, err
	}
	d, err := a.message(ctx, partitionID, transactionID)
	if err != nil {
		return StoredMessage{}, err
	}
	m := storedMessage(d.MessageEntry)
	m.Data = json.RawMessage(d.Payload)
	return m, nil
}

func (a *Admin) message(ctx context.Context, partitionID, transactionID string) (wire.MessageDetail, error) {
	var d wire.MessageDetail
	what := "message " + quote(transactionID) + " in partition " + quote(partitionID)
	err := a.read(ctx, at(route.Message, partitionID, transactionID), nil, what, &d)
	if errors.Is(err, errEmpty) {
		return d, notFoundEmpty(what)
	}
	return d, err
}
