// Package admin runs the broker's administrative operations: moving a consumer group's cursors
// ([Admin.SeekConsumerGroup]), listing, replaying and deleting dead letters
// ([Admin.DeadLetters], [Admin.ReplayDeadLetter], [Admin.DeleteDeadLetter]), configuring and
// deleting queues ([Admin.UpdateQueue], [Admin.ConfigureQueue], [Admin.DeleteQueue]), and
// forgetting consumer groups ([Admin.DeleteConsumerGroup]).
//
// Quick start:
//
//	client, err := queen.New("http://127.0.0.1:6632")
//	if err != nil { ... }
//	a := admin.New(client)
//	page, err := a.DeadLetters(ctx, admin.DLQQuery{Queue: "orders", Limit: 50})
//	for _, dl := range page.DeadLetters {
//		if _, err := a.ReplayDeadLetter(ctx, dl.ID); err != nil { ... }
//	}
//	err = a.SeekConsumerGroup(ctx, "billing", "orders", admin.SeekToTime(since))
//	err = a.UpdateQueue(ctx, "orders", func(o *admin.QueueOptions) { o.RetryLimit = new(5) })
//
// A replayed dead letter goes to the end of its partition, where every group reading that
// partition receives it, not only the group that gave up on it.
//
// The operator's view is read-only: [Admin.Queues] and [Admin.QueueInfo] (depth per queue and
// partition), [Admin.ConsumerGroups] and [Admin.ConsumerGroup] (lag per group, queue and
// partition), [Admin.Lagging] (the partitions whose oldest owed message is older than a
// bound), [Admin.Messages] (a peek that leases nothing), [Admin.Overview] and [Admin.Health].
// Lag is what a group will still be handed: the messages after its cursor, leased or not, and
// the age of the oldest of them.
//
// Every call checks its arguments first and reports bad ones as an error wrapping
// [queen.ErrInvalidOption], naming the field and the value, before anything is sent. Unknown
// things are [ErrNotFound]; a change whose answer was lost is [queen.ErrOutcomeUnknown] (never
// also ErrNotFound, even when its resend was answered "not found").
//
// # Brokers of version 0.15
//
// The package works against Queen 2.0 brokers (and the bundled reference broker) and against
// 0.15 brokers, judging each answer by its status and body, never by a version setting:
//
//   - A dead letter listed by 0.15 has no id of its own: [DeadLetter].ID and DeadLetter.MessageID
//     are both the message id, [DLQPage].Total is -1, and the broker does not page (offset > 0
//     lists nothing, and limit is applied here instead).
//   - 0.15 has no replay route. ReplayDeadLetter then reads the dead letter from the list and
//     pushes its data to the same queue and partition under the transaction id dlq:<messageId>
//     ([Replayed].Emulated is true). The dead letter stays listed; replaying it again is
//     harmless, as the broker reports the push as a duplicate and stores no second copy.
//   - 0.15 has no delete route for dead letters: DeleteDeadLetter returns [ErrUnsupported].
//   - 0.15 seeks exclude a message stored exactly at the target time and move only the
//     partitions the group has read; 0.15 configures ignore [QueueOptions].DeadLetterQueue
//     false, default LeaseTime to 300 s instead of 60 s, and reset every option they are not
//     sent, which UpdateQueue sends back as it read them.
//   - 0.15's queue counts are background statistics, minutes old and not adding up:
//     [QueueInfo].Approximate is true, and counts it does not send are -1. Its group lag skips
//     partitions the group has no cursor in: [GroupQueue].Approximate is true, GroupQueue.Lag is
//     -1 from ConsumerGroups, TimeLag a lower bound, and [PartitionLag] fields it lacks are -1
//     or zero. Its lagging list is filtered and sorted here. Its message list has no offsets
//     (-1) and no payloads, which are then read message by message; listing oldest first is
//     ErrUnsupported. Its "not found" answers (a 200 with an error, or an empty body) give
//     ErrNotFound.
//   - A 0.15 database failure answered as 200 {"success":false,"error":...} is returned as a
//     *[queen.APIError] with StatusCode 200.
package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptrace"
	"net/url"
	"sync/atomic"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/wire"
)

var (
	// ErrNotFound wraps the broker's 404 for an unknown queue, consumer group or dead letter
	// (and a dead letter already replayed or deleted). The *queen.APIError is wrapped too. A
	// change whose answer was lost and whose resend was answered "not found" is
	// [queen.ErrOutcomeUnknown] instead, never both: the first request may have done it.
	ErrNotFound = errors.New("admin: not found")
	// ErrUnsupported reports an operation the broker has no route for (a 0.15 broker deleting a
	// dead letter, say). It matches errors.ErrUnsupported too, as an unsupported discovery pop
	// does, and the broker's *queen.APIError is wrapped as well.
	ErrUnsupported error = unsupportedError{}
)

// unsupportedError is ErrUnsupported: its own sentinel, and also errors.ErrUnsupported.
type unsupportedError struct{}

func (unsupportedError) Error() string        { return "admin: not supported by this broker" }
func (unsupportedError) Is(target error) bool { return target == errors.ErrUnsupported }

// Admin runs administrative operations through a queen.Client, with its auth, retries and
// failover. Safe for concurrent use.
type Admin struct {
	client *queen.Client
}

// New returns an Admin that sends its requests through client.
func New(client *queen.Client) *Admin {
	return &Admin{client: client}
}

// endpoint is a route with its names filled in: the method and the escaped path to send.
type endpoint struct{ method, path string }

// at is the endpoint of route r naming names, one per placeholder of its pattern, in order.
func at(r route.Route, names ...string) endpoint { return endpoint{r.Method, r.Path(names...)} }

// call sends one request with in as its body (when in is not nil) and decodes a 2xx answer into
// out (when out is not nil). A 200 that carries {"success":false,"error":...} is a broker
// failure (0.15 answers database errors so).
func (a *Admin) call(ctx context.Context, e endpoint, query url.Values, in, out any) error {
	var body json.RawMessage
	if in != nil {
		var err error
		if body, err = wire.Marshal(in); err != nil {
			return fmt.Errorf("admin: %s %s: encoding the request: %w", e.method, e.path, err)
		}
	}
	var raw json.RawMessage
	if err := a.client.Do(ctx, e.method, e.path, query, body, &raw); err != nil {
		return err
	}
	if err := refusedWithOK(raw, e); err != nil {
		return err
	}
	if out == nil || len(raw) == 0 {
		return nil
	}
	if err := wire.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("admin: %s %s: decoding the broker's answer: %w", e.method, e.path, err)
	}
	return nil
}

// refusedWithOK reports a 200 body shaped {"success":false,"error":...} as an *queen.APIError.
func refusedWithOK(raw json.RawMessage, e endpoint) error {
	var probe wire.Refusal
	if len(raw) == 0 || raw[0] != '{' || wire.Unmarshal(raw, &probe) != nil || !probe.Refused() {
		return nil
	}
	msg := "the broker answered success false without a reason"
	if probe.Error != nil && *probe.Error != "" {
		msg = *probe.Error
	}
	return &queen.APIError{StatusCode: 200, Message: msg, Method: e.method, Path: e.path}
}

// notFound turns a 404 into ErrNotFound (the broker's JSON error: no such thing) or
// ErrUnsupported (a non-JSON page: the broker has no such route). Other errors pass unchanged,
// and so does a 404 that answered the resend of a call whose first answer was lost: the first
// may have done what the resend found already done, so that error is queen.ErrOutcomeUnknown
// and never ErrNotFound.
func notFound(err error, what string) error {
	var apiErr *queen.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || errors.Is(err, queen.ErrOutcomeUnknown) {
		return err
	}
	if apiErr.NotJSON {
		return fmt.Errorf("%w: %s (%w)", ErrUnsupported, what, err)
	}
	return fmt.Errorf("%w: %s (%w)", ErrNotFound, what, err)
}

// isMissingRoute reports the non-JSON 404 with which a 0.15 broker answers a route it lacks.
func isMissingRoute(err error) bool {
	var apiErr *queen.APIError
	return errors.As(err, &apiErr) && apiErr.StatusCode == 404 && apiErr.NotJSON
}

// invalid builds an error wrapping queen.ErrInvalidOption that names the field and the value.
func invalid(field string, value any, why string) error {
	if s, ok := value.(string); ok {
		value = fmt.Sprintf("%q", s)
	}
	return fmt.Errorf("%w: %s=%v: %s", queen.ErrInvalidOption, field, value, why)
}

// required refuses an empty id, or one that would not stay one path segment ("." and "..").
func required(field, value string) error {
	switch value {
	case "":
		return invalid(field, value, "must not be empty")
	case ".", "..":
		return invalid(field, value, `must not be "." or ".."`)
	}
	return nil
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

// sendCount counts the requests of one call that were written to the broker. The client sends
// every attempt of a call with the call's ctx, so a count above one means that an earlier
// attempt was sent and got no answer that settled it: lost, or a 5xx or 429.
type sendCount struct{ written atomic.Int32 }

// countSends returns ctx, reporting each request written with it to the count.
func countSends(ctx context.Context) (context.Context, *sendCount) {
	c := &sendCount{}
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			if info.Err == nil {
				c.written.Add(1)
			}
		},
	}), c
}

// deletedNothing is the error of a deletion the broker answered with success and nothing
// deleted (how a 0.15 broker says "not found"): ErrNotFound, or queen.ErrOutcomeUnknown when the
// answer came to a resend, as the first request may have deleted it.
func (c *sendCount) deletedNothing(what, answer string) error {
	if c.written.Load() > 1 {
		return fmt.Errorf("%w: deleting %s: the request was sent again after no answer came, and the broker then deleted nothing (%s): the first request may have deleted it",
			queen.ErrOutcomeUnknown, what, answer)
	}
	return fmt.Errorf("%w: %s (the broker deleted nothing: %s)", ErrNotFound, what, answer)
}
