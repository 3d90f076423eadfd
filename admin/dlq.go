package admin

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"time"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/wire"
)

// DLQQuery filters and pages the dead-letter list. Every filter is optional; they combine with AND.
type DLQQuery struct {
	Queue         string
	ConsumerGroup string    // the group that gave up on the message
	Partition     string    // a partition name (ignored by 0.15 brokers)
	From, To      time.Time // inclusive bounds on FailedAt; zero: unbounded (ignored by 0.15 brokers)
	Limit         int       // page size; 0: the broker's default (100)
	Offset        int       // entries to skip; 0: none
}

// DLQPage is one page of dead letters, newest failure first.
type DLQPage struct {
	DeadLetters []DeadLetter `json:"deadLetters"`
	Total       int          `json:"total"` // matches before paging; -1 when the broker does not say (0.15)
	Limit       int          `json:"limit"`
	Offset      int          `json:"offset"`
}

// DeadLetter is a message a consumer group gave up on.
type DeadLetter struct {
	ID            string          `json:"id"`        // the dead letter's id: what ReplayDeadLetter and DeleteDeadLetter take (0.15: the message id)
	MessageID     string          `json:"messageId"` // the original message's id
	TransactionID string          `json:"transactionId"`
	Queue         string          `json:"queue"`
	Partition     string          `json:"partition"`
	PartitionID   string          `json:"partitionId"`
	ConsumerGroup string          `json:"consumerGroup"` // the group that gave up
	Error         string          `json:"error"`         // the error text of the ack that filed it
	RetryCount    int             `json:"retryCount"`
	Data          json.RawMessage `json:"data"`
	CreatedAt     time.Time       `json:"createdAt"` // when the message was pushed
	FailedAt      time.Time       `json:"failedAt"`  // when it was filed
}

// DeadLetters lists one page of dead letters.
func (a *Admin) DeadLetters(ctx context.Context, q DLQQuery) (DLQPage, error) {
	return a.deadLetters(ctx, q, true)
}

// deadLetters lists one page. A broker that does not page (0.15) lists everything, which cut
// trims to q.Limit.
func (a *Admin) deadLetters(ctx context.Context, q DLQQuery, cut bool) (DLQPage, error) {
	query, err := q.values()
	if err != nil {
		return DLQPage{}, err
	}
	var answer wire.DLQAnswer
	if err := a.call(ctx, at(route.DeadLetters), query, nil, &answer); err != nil {
		return DLQPage{}, notFound(err, "the dead-letter list")
	}
	page := DLQPage{
		DeadLetters: make([]DeadLetter, 0, len(answer.Messages)),
		Total:       -1,
		Limit:       q.Limit,
		Offset:      q.Offset,
	}
	if answer.Total != nil {
		page.Total = *answer.Total
	}
	if answer.Pagination != nil {
		page.Limit, page.Offset = int(answer.Pagination.Limit), int(answer.Pagination.Offset)
	}
	for _, w := range answer.Messages {
		page.DeadLetters = append(page.DeadLetters, deadLetter(w))
	}
	// A 0.15 broker lists everything whatever the limit; keep the page the caller asked for.
	if cut && answer.Total == nil && q.Limit > 0 && len(page.DeadLetters) > q.Limit {
		page.DeadLetters = page.DeadLetters[:q.Limit]
	}
	return page, nil
}

// AllDeadLetters lists every dead letter matching q (its Limit is the page size and its Offset
// is ignored), page by page. Against a 0.15 broker, which does not page, one request lists all.
// Dead letters replayed or deleted meanwhile shift the pages, so collect first, then act.
func (a *Admin) AllDeadLetters(ctx context.Context, q DLQQuery) ([]DeadLetter, error) {
	q.Offset = 0
	var all []DeadLetter
	for {
		page, err := a.deadLetters(ctx, q, false)
		if err != nil {
			return all, err
		}
		all = append(all, page.DeadLetters...)
		if page.Total < 0 || len(page.DeadLetters) == 0 || len(all) >= page.Total {
			return all, nil
		}
		q.Offset += len(page.DeadLetters)
	}
}

func (q DLQQuery) values() (url.Values, error) {
	if q.Limit < 0 {
		return nil, invalid("Limit", q.Limit, "must not be negative")
	}
	if q.Offset < 0 {
		return nil, invalid("Offset", q.Offset, "must not be negative")
	}
	if !q.From.IsZero() && !q.To.IsZero() && q.To.Before(q.From) {
		return nil, invalid("To", q.To.UTC().Format(time.RFC3339Nano), "is before From "+q.From.UTC().Format(time.RFC3339Nano))
	}
	for _, f := range [...]struct{ field, value string }{
		{"Queue", q.Queue}, {"ConsumerGroup", q.ConsumerGroup}, {"Partition", q.Partition},
	} {
		if err := optionalName(f.field, f.value); err != nil {
			return nil, err
		}
	}
	v := url.Values{}
	set := func(key, value string) {
		if value != "" {
			v.Set(key, value)
		}
	}
	set("queue", q.Queue)
	set("consumerGroup", q.ConsumerGroup)
	set("partition", q.Partition)
	if !q.From.IsZero() {
		v.Set("from", q.From.UTC().Format(time.RFC3339Nano))
	}
	if !q.To.IsZero() {
		v.Set("to", q.To.UTC().Format(time.RFC3339Nano))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Offset > 0 {
		v.Set("offset", strconv.Itoa(q.Offset))
	}
	return v, nil
}

func deadLetter(w wire.DeadLetter) DeadLetter {
	dl := DeadLetter{
		ID:            w.ID,
		MessageID:     w.MessageID,
		TransactionID: w.TransactionID,
		Queue:         w.Queue,
		Partition:     w.Partition,
		PartitionID:   w.PartitionID,
		ConsumerGroup: w.ConsumerGroup,
		Error:         w.ErrorMessage,
		RetryCount:    w.RetryCount,
		Data:          json.RawMessage(w.Data),
		CreatedAt:     w.CreatedAt.Time,
		FailedAt:      w.FailedAt.Time,
	}
	if dl.MessageID == "" { // 0.15: the listed id is the message's
		dl.MessageID = w.ID
	}
	return dl
}
