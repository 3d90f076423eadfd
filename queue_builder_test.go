package queen_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every invalid setting of API.md's list is refused by the terminal call, naming the setting,
// before any request.
func TestAcceptanceInvalidOptionsBeforeAnyRequest(t *testing.T) {
	t.Parallel()
	_, tap, c := tapped(t, testmode.Modes[0])
	q := c.Queue("q")
	h := func(context.Context, *queen.Message) error { return nil }
	bh := func(context.Context, []*queen.Message) error { return nil }
	cases := []struct {
		name string
		call func() error
		want string // the setting's name, as the error must say it
	}{
		{"Batch(0) pop", func() error { _, err := q.Batch(0).Pop(testutil.Context(t)); return err }, "batch"},
		{"Batch(0) consume", func() error { return q.Batch(0).Each().Consume(testutil.Context(t), h) }, "batch"},
		{"Batch(10001)", func() error { _, err := q.Batch(10001).Pop(testutil.Context(t)); return err }, "batch"},
		{"Partitions(65)", func() error { _, err := q.Partitions(65).Pop(testutil.Context(t)); return err }, "partitions"},
		{"Partitions(0)", func() error { return q.Partitions(0).Consume(testutil.Context(t), bh) }, "partitions"},
		{"Timeout(61s)", func() error { _, err := q.Timeout(61 * time.Second).Pop(testutil.Context(t)); return err }, "timeout"},
		{"Timeout(-1)", func() error { return q.Timeout(-time.Second).Each().Consume(testutil.Context(t), h) }, "timeout"},
		{"Concurrency(0)", func() error { return q.Concurrency(0).Each().Consume(testutil.Context(t), h) }, "concurrency"},
		{"LeaseTime(-1)", func() error { _, err := q.LeaseTime(-time.Second).Pop(testutil.Context(t)); return err }, "lease"},
		{"IdleTimeout(-1)", func() error { return q.IdleTimeout(-time.Second).Each().Consume(testutil.Context(t), h) }, "idle"},
		{"ShutdownTimeout(-1)", func() error { return q.ShutdownTimeout(-time.Second).Each().Consume(testutil.Context(t), h) }, "shutdown"},
		{"RenewLease(-1)", func() error { return q.RenewLease(true, -time.Second).Each().Consume(testutil.Context(t), h) }, "renew"},
		{"RetryBackoff(-1)", func() error { return q.RetryBackoff(-time.Second, time.Second).Each().Consume(testutil.Context(t), h) }, "backoff"},
		{"AckEvery(-1)", func() error { return q.AckEvery(-1, time.Second).Each().Consume(testutil.Context(t), h) }, "ackevery"},
		{"AckEvery(d<0)", func() error { return q.AckEvery(1, -time.Second).Each().Consume(testutil.Context(t), h) }, "ackevery"},
		{"Limit(-1)", func() error { return q.Limit(-1).Each().Consume(testutil.Context(t), h) }, "limit"},
		{"Conflation+AutoAck pop", func() error { _, err := q.Conflation(true).AutoAck(true).Pop(testutil.Context(t)); return err }, "conflation"},
		{"empty queue pop", func() error { _, err := c.Queue("").Pop(testutil.Context(t)); return err }, "queue"},
		{"empty queue push", func() error { _, err := c.Queue("").Push(testutil.Context(t), queen.PushItem{Data: 1}); return err }, "queue"},
		{"empty queue consume", func() error { return c.Queue("").Each().Consume(testutil.Context(t), h) }, "queue"},
		{"invalid raw JSON", func() error {
			_, err := q.Push(testutil.Context(t), queen.PushItem{Data: jsonRaw(`{"a":`)})
			return err
		}, "data"},
		{"invalid UTF-8 raw JSON", func() error {
			_, err := q.Push(testutil.Context(t), queen.PushItem{Data: jsonRaw("\"\xff\"")})
			return err
		}, "data"},
	}
	for _, tc := range cases {
		err := tc.call()
		if assert.ErrorIs(t, err, queen.ErrInvalidOption, tc.name) {
			norm := strings.ToLower(strings.NewReplacer(" ", "", "_", "").Replace(err.Error()))
			assert.Contains(t, norm, tc.want, "%s: the error names the setting: %v", tc.name, err)
		}
	}
	assert.Empty(t, tap.All(), "nothing was sent")
}

// API.md: invalid settings "are reported by the terminal call (Pop, Push, Consume) as an error
// wrapping ErrInvalidOption that names the setting, before any request is sent".
func TestInvalidSettingsOnEveryTerminal(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(204, ""))
	cases := map[string]queen.QueueBuilder{
		"batch":            c.Queue("q").Batch(0),
		"batch=10001":      c.Queue("q").Batch(10001),
		"partitions":       c.Queue("q").Partitions(65),
		"partitions=0":     c.Queue("q").Partitions(0),
		"timeout":          c.Queue("q").Timeout(61 * time.Second),
		"timeout<0":        c.Queue("q").Timeout(-time.Second),
		"concurrency":      c.Queue("q").Concurrency(0),
		"leaseTime":        c.Queue("q").LeaseTime(-time.Second),
		"idleTimeout":      c.Queue("q").IdleTimeout(-time.Second),
		"shutdownTimeout":  c.Queue("q").ShutdownTimeout(-time.Second),
		"renewLease":       c.Queue("q").RenewLease(true, -time.Second),
		"queue":            c.Queue(""),
		"subscriptionMode": c.Queue("q").Group("g").SubscriptionMode("new-only"),
	}
	for name, b := range cases {
		setting, _, _ := strings.Cut(name, "=")
		setting, _, _ = strings.Cut(setting, "<")
		terminals := map[string]error{}
		_, terminals["Pop"] = b.Pop(t.Context())
		_, terminals["Push"] = b.Push(t.Context(), queen.PushItem{Data: 1})
		terminals["Consume"] = b.Each().Consume(t.Context(), func(context.Context, *queen.Message) error { return nil })
		for terminal, err := range terminals {
			if assert.ErrorIs(t, err, queen.ErrInvalidOption, "%s: %s", name, terminal) {
				assert.Contains(t, strings.ToLower(err.Error()), strings.ToLower(setting), "%s: %s", name, terminal)
			}
		}
	}
	for _, group := range []string{"", "__QUEUE_MODE__"} {
		_, err := c.Queue("q").Group(group).Conflation(true).Pop(t.Context())
		require.ErrorIs(t, err, queen.ErrInvalidOption, "R37: conflation needs a named group, not %q", group)
		assert.Contains(t, err.Error(), "Conflation")
	}
	_, err := c.Queue("q").Group("g").Conflation(true).AutoAck(true).Pop(t.Context())
	require.ErrorIs(t, err, queen.ErrInvalidOption, "Conflation with AutoAck on a Pop")
	assert.Contains(t, err.Error(), "conflation")
	assert.Empty(t, rec.All(), "nothing is sent")
}
