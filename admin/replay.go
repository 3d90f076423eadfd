package admin

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/wire"
)

// Replayed is the outcome of a replay: the copy pushed under TransactionID dlq:<id>.
type Replayed struct {
	ID            string `json:"id"`            // the dead letter replayed
	TransactionID string `json:"transactionId"` // dlq:<id>
	PartitionID   string `json:"partitionId"`   // where the copy is
	Offset        int64  `json:"offset"`        // the copy's offset; -1 when the broker does not say (0.15)
	Emulated      bool   `json:"emulated"`      // pushed by this package because the broker has no replay route (0.15)
	Duplicate     bool   `json:"duplicate"`     // emulated, and the copy existed already: nothing new was stored
}

// ReplayDeadLetter pushes a copy of the dead letter's message to the end of its original
// partition under the transaction id dlq:<id>. Every group reading the partition receives the
// copy, not only the one that gave up. The dead letter leaves the list; a second replay of the
// same id gives ErrNotFound and never a second copy.
//
// A 0.15 broker has no replay route: the replay is then emulated (see the package docs).
func (a *Admin) ReplayDeadLetter(ctx context.Context, id string) (Replayed, error) {
	if err := required("id", id); err != nil {
		return Replayed{}, err
	}
	var answer wire.ReplayAnswer
	err := a.call(ctx, at(route.ReplayDeadLetter, id), nil, nil, &answer)
	if isMissingRoute(err) {
		return a.emulateReplay(ctx, id)
	}
	if err != nil {
		return Replayed{}, notFound(err, "dead letter "+quote(id))
	}
	out := Replayed{
		ID:            answer.ID,
		TransactionID: answer.TransactionID,
		PartitionID:   answer.PartitionID,
		Offset:        -1,
	}
	if answer.Offset != nil {
		out.Offset = *answer.Offset
	}
	return out, nil
}

// emulateReplay replays on a broker without the replay route: it finds the dead letter in the
// list (where 0.15 ids are message ids) and pushes its data under dlq:<messageId>, which the
// broker's deduplication turns into a harmless duplicate on a repeat.
func (a *Admin) emulateReplay(ctx context.Context, id string) (Replayed, error) {
	all, err := a.AllDeadLetters(ctx, DLQQuery{})
	if err != nil {
		return Replayed{}, fmt.Errorf("admin: replaying dead letter %q: listing dead letters: %w", id, err)
	}
	var dl *DeadLetter
	for i := range all {
		if all[i].ID == id {
			dl = &all[i]
			break
		}
	}
	if dl == nil {
		return Replayed{}, fmt.Errorf("%w: dead letter %q is not in the broker's dead-letter list", ErrNotFound, id)
	}

	txID := "dlq:" + dl.MessageID
	data := dl.Data
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	body := wire.PushRequest{Items: []wire.PushItem{{
		Queue:         dl.Queue,
		Partition:     dl.Partition,
		Payload:       wire.Value(data),
		TransactionID: txID,
	}}}
	var results []wire.PushResult
	if err := a.call(ctx, at(route.Push), nil, body, &results); err != nil {
		return Replayed{}, fmt.Errorf("admin: replaying dead letter %q by a push to queue %q partition %q: %w", id, dl.Queue, dl.Partition, err)
	}
	if len(results) != 1 {
		return Replayed{}, fmt.Errorf("admin: replaying dead letter %q: the broker answered %d push results for 1 item", id, len(results))
	}
	r := results[0]
	switch r.Status {
	case "queued", "duplicate", "buffered":
	default:
		return Replayed{}, fmt.Errorf("admin: replaying dead letter %q: push status %q: %s", id, r.Status, r.Error)
	}
	out := Replayed{ID: id, TransactionID: txID, PartitionID: deref(r.PartitionID), Offset: -1, Emulated: true,
		Duplicate: r.Status == "duplicate"}
	if out.PartitionID == "" { // a 0.15 duplicate omits it
		out.PartitionID = dl.PartitionID
	}
	if r.Offset != nil {
		out.Offset = *r.Offset
	}
	return out, nil
}

// DeleteDeadLetter removes the dead letter without replaying it. An unknown id gives
// ErrNotFound; a 0.15 broker, which cannot delete dead letters, gives ErrUnsupported.
func (a *Admin) DeleteDeadLetter(ctx context.Context, id string) error {
	if err := required("id", id); err != nil {
		return err
	}
	if err := a.call(ctx, at(route.DeleteDeadLetter, id), nil, nil, nil); err != nil {
		if isMissingRoute(err) {
			return fmt.Errorf("%w: it cannot delete dead letters (deleting %q: %w)", ErrUnsupported, id, err)
		}
		return notFound(err, "dead letter "+quote(id))
	}
	return nil
}

// deref is *p, or the zero value for nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
