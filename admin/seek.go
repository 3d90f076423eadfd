package admin

import (
	"context"
	"time"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/wire"
)

// SeekTarget is where a seek moves a consumer group: a time (SeekToTime) or the end (SeekToEnd).
// The zero SeekTarget is refused.
type SeekTarget struct {
	at    time.Time
	toEnd bool
	set   bool
}

// SeekToTime targets the messages pushed at or after t: after the seek the group's next pops
// return exactly those, whatever the group had read before (a 0.15 broker excludes a message
// stored exactly at t).
func SeekToTime(t time.Time) SeekTarget { return SeekTarget{at: t, set: true} }

// SeekToEnd skips the backlog: after the seek the group receives only messages stored later.
func SeekToEnd() SeekTarget { return SeekTarget{toEnd: true, set: true} }

// String is the target as queenctl and error messages show it.
func (t SeekTarget) String() string {
	switch {
	case !t.set:
		return "none"
	case t.toEnd:
		return "end"
	default:
		return t.at.UTC().Format(time.RFC3339Nano)
	}
}

// SeekResult is the broker's account of a seek.
type SeekResult struct {
	ConsumerGroup     string    `json:"consumerGroup"`
	Queue             string    `json:"queue"`
	ToEnd             bool      `json:"toEnd"`
	Target            time.Time `json:"target"` // zero for a seek to the end
	PartitionsUpdated int       `json:"partitionsUpdated"`
}

// SeekConsumerGroup moves group's cursors in every partition of queue to the target. It also
// releases the group's live leases on the queue: batches in flight are abandoned, and acks
// carrying their lease ids are refused afterwards. An unknown queue gives ErrNotFound.
func (a *Admin) SeekConsumerGroup(ctx context.Context, group, queue string, to SeekTarget) error {
	_, err := a.Seek(ctx, group, queue, to)
	return err
}

// Seek is SeekConsumerGroup, with the broker's account of what it moved.
func (a *Admin) Seek(ctx context.Context, group, queue string, to SeekTarget) (SeekResult, error) {
	if err := validName("group", group); err != nil {
		return SeekResult{}, err
	}
	if err := validName("queue", queue); err != nil {
		return SeekResult{}, err
	}
	body := wire.SeekRequest{}
	switch {
	case !to.set:
		return SeekResult{}, invalid("to", to, "use SeekToTime or SeekToEnd")
	case to.toEnd:
		body.ToEnd = true
	case to.at.IsZero():
		return SeekResult{}, invalid("to", "0001-01-01T00:00:00Z", "zero time")
	default:
		body.Timestamp = to.at.UTC().Format(time.RFC3339Nano)
	}

	var answer wire.SeekAnswer
	if err := a.call(ctx, at(route.Seek, group, queue), nil, body, &answer); err != nil {
		return SeekResult{}, notFound(err, "queue "+quote(queue))
	}
	res := SeekResult{
		ConsumerGroup:     answer.ConsumerGroup,
		Queue:             answer.QueueName,
		ToEnd:             answer.SeekToEnd,
		PartitionsUpdated: answer.PartitionsUpdated,
	}
	res.Target = answer.TargetTimestamp.Value()
	return res, nil
}
