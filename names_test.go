package queen_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// Invalid UTF-8 never leaves the client: refused data and names, and a handler's error text
// still acked as valid UTF-8.
func TestInvalidUTF8NeverLeavesTheClient(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		_, tap, c := tapped(t, m, queentest.WithManualClock())
		_, err := c.Queue("q").Push(testutil.Context(t), queen.PushItem{Data: "bad \xff"})
		assert.ErrorIs(t, err, queen.ErrInvalidOption, "a string with invalid UTF-8")
		_, err = c.Queue("q\xff").Push(testutil.Context(t), queen.PushItem{Data: 1})
		assert.ErrorIs(t, err, queen.ErrInvalidOption, "a queue name")
		_, err = c.Queue("q").Partition("p\xff").Push(testutil.Context(t), queen.PushItem{Data: 1})
		assert.ErrorIs(t, err, queen.ErrInvalidOption, "a partition name")
		assert.Zero(t, tap.Containing("/push"))

		push(t, c, "q", "", 0)
		msgs, err := c.Queue("q").Pop(testutil.Context(t))
		require.NoError(t, err)
		require.Len(t, msgs, 1)
		err = msgs[0].Nack(testutil.Context(t), errors.New("why \xff"))
		if err != nil {
			assert.ErrorIs(t, err, queen.ErrInvalidOption)
		}

		push(t, c, "q2", "", 0)
		require.NoError(t, c.Queue("q2").Limit(1).RetryBackoff(0, 0).Each().
			Consume(testutil.Context(t), func(context.Context, *queen.Message) error { return errors.New("boom \xff") }))
		acks := sentAcks(tap)
		require.NotEmpty(t, acks)
		last := acks[len(acks)-1]
		assert.Equal(t, "failed", last["status"], "the failure is still acked")
		for _, r := range tap.All() {
			assert.True(t, utf8.Valid(r.Body), "%s %s sent invalid UTF-8: %q", r.Method, r.Path, r.Body)
			assert.True(t, utf8.ValidString(r.RawQuery), "%s %s sent invalid UTF-8: %q", r.Method, r.Path, r.RawQuery)
		}
	})
}

// silentBroker fails the test on any request: every call below must be refused locally.
func silentBroker(t *testing.T) *queen.Client {
	t.Helper()
	_, url := brokerStub(t, func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a request was sent: %s %s", r.Method, r.URL.EscapedPath())
		writeJSON(w, http.StatusInternalServerError, `{"error":"unexpected"}`)
	})
	return stubClient(t, url, queen.WithRetry(0, 0, 0))
}

// Names that the broker refuses, or that would alias another path, are refused before sending.
func TestBadNamesRefusedLocally(t *testing.T) {
	t.Parallel()
	c := silentBroker(t)
	bad := []string{".", "..", strings.Repeat("q", 2<<20), "a\x00b", "tab\tq", "bad\xffutf8"}
	for _, name := range bad {
		_, err := c.Queue(name).Push(t.Context(), queen.PushItem{Data: 1})
		assert.ErrorIs(t, err, queen.ErrInvalidOption, "push to queue %.20q", name)
		assert.ErrorContains(t, err, "Queue(")
		assert.Less(t, len(err.Error()), 400, "a huge name is clipped in the error")

		_, err = c.Queue(name).Pop(t.Context())
		assert.ErrorIs(t, err, queen.ErrInvalidOption, "pop of queue %.20q", name)
		_, err = c.Queue("orders").Partition(name).Pop(t.Context())
		assert.ErrorIs(t, err, queen.ErrInvalidOption, "pop of partition %.20q", name)
		assert.ErrorContains(t, err, "Partition(")
		_, err = c.Queue("orders").Group(name).Pop(t.Context())
		assert.ErrorIs(t, err, queen.ErrInvalidOption, "pop for group %.20q", name)
		assert.ErrorContains(t, err, "Group(")
		err = c.Queue("orders").Group(name).Consume(t.Context(), func(context.Context, []*queen.Message) error { return nil })
		assert.ErrorIs(t, err, queen.ErrInvalidOption, "consume for group %.20q", name)

		_, err = c.Transaction().PushTo("orders", name, queen.PushItem{Data: 1}).Commit(t.Context())
		assert.ErrorIs(t, err, queen.ErrInvalidOption, "transaction push to partition %.20q", name)
	}

	_, emptyURL := brokerStub(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	_, err := stubClient(t, emptyURL).Queue(strings.Repeat("q", 255)).Group("...").Pop(t.Context())
	assert.NoError(t, err, "255 bytes and \"...\" are allowed")
}

func TestBadNamesRefusedLocallyByAdmin(t *testing.T) {
	t.Parallel()
	a := admin.New(silentBroker(t))
	ctx := t.Context()
	checks := map[string]error{
		"DeleteConsumerGroupOnQueue": a.DeleteConsumerGroupOnQueue(ctx, "billing", ".."),
		"DeleteConsumerGroup":        a.DeleteConsumerGroup(ctx, ".."),
		"DeleteQueue":                a.DeleteQueue(ctx, "."),
		"ConfigureQueue":             a.ConfigureQueue(ctx, "a\x01", admin.QueueOptions{}),
		"SeekConsumerGroup":          a.SeekConsumerGroup(ctx, "..", "orders", admin.SeekToEnd()),
		"DeleteDeadLetter":           a.DeleteDeadLetter(ctx, ".."),
		"ReplayDeadLetter":           func() error { _, err := a.ReplayDeadLetter(ctx, "."); return err }(),
		"DeadLetters(ConsumerGroup)": func() error { _, err := a.DeadLetters(ctx, admin.DLQQuery{ConsumerGroup: ".."}); return err }(),
		"DeadLetters(Queue too long)": func() error {
			_, err := a.DeadLetters(ctx, admin.DLQQuery{Queue: strings.Repeat("q", 256)})
			return err
		}(),
	}
	for call, err := range checks {
		assert.ErrorIs(t, err, queen.ErrInvalidOption, call)
	}
}

// Text that would reach the broker as invalid UTF-8 is refused before anything is sent.
func TestInvalidUTF8RefusedLocally(t *testing.T) {
	t.Parallel()
	c := silentBroker(t)
	ctx := t.Context()
	q := c.Queue("orders")
	for name, item := range map[string]queen.PushItem{
		"raw data":       {Data: json.RawMessage("\"a\xffb\"")},
		"string data":    {Data: "a\xffb"},
		"transaction id": {Data: 1, TransactionID: "t\xff"},
	} {
		_, err := q.Push(ctx, item)
		assert.ErrorIs(t, err, queen.ErrInvalidOption, name)
	}
	m := &queen.Message{TransactionID: "t", PartitionID: "p", LeaseID: "l"}
	_, err := c.Ack(ctx, m, queen.StatusFailed, queen.WithError("boom \xff"))
	assert.ErrorIs(t, err, queen.ErrInvalidOption, "ack error text")
	assert.ErrorContains(t, err, "WithError")
	_, err = c.AckBatch(ctx, []queen.AckItem{{Message: m, Status: queen.StatusFailed, Error: "\xfe"}})
	assert.ErrorIs(t, err, queen.ErrInvalidOption, "batch ack error text")
	_, err = c.Transaction().Ack(m, queen.StatusFailed, queen.WithError("\xfe")).Commit(ctx)
	assert.ErrorIs(t, err, queen.ErrInvalidOption, "transaction ack error text")
}

// Every name is one escaped path segment, whatever it holds.
func TestPathSegmentsAreEscaped(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	_, url := brokerStub(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.EscapedPath())
		mu.Unlock()
		if r.Method == http.MethodGet {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		writeJSON(w, http.StatusOK, `{"success":true,"deleted":true}`)
	})
	c := stubClient(t, url)
	_, err := c.Queue("a/b c?").Partition("p#1%").Pop(t.Context())
	require.NoError(t, err)
	require.NoError(t, admin.New(c).DeleteConsumerGroupOnQueue(t.Context(), "g/..", "q/../x"))
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{
		"/api/v1/pop/queue/a%2Fb%20c%3F/partition/p%231%25",
		"/api/v1/consumer-groups/g%2F../queues/q%2F..%2Fx",
	}, got)
}
