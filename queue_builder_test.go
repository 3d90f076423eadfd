package queen_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
)

// Every invalid setting is refused by the terminal call, with an error wrapping ErrInvalidOption
// that names the setting, before any request is sent. A value out of range is refused by every
// terminal (Pop, Push, Consume with either handler), whatever it configures, so that a bad
// setting on a shared builder is found wherever it is used; a combination only by the terminals
// it concerns. (0, 0) turns RetryBackoff and AckEvery off, and is valid.
func TestInvalidSettingsAreRefusedBeforeAnythingIsSent(t *testing.T) {
	t.Parallel()
	_, tap, c := tapped(t, testmode.Modes[0])
	q := c.Queue("q")
	every := []string{"Pop", "Push", "Consume", "batch Consume"}
	pops := []string{"Pop", "Consume", "batch Consume"}
	cases := []struct {
		name      string
		b         queen.QueueBuilder
		want      string // the setting, as the error names it (case, spaces and _ aside)
		terminals []string
	}{
		{"Batch(0)", q.Batch(0), "batch", every},
		{"Batch(10001)", q.Batch(10001), "batch", every},
		{"Partitions(0)", q.Partitions(0), "partitions", every},
		{"Partitions(65)", q.Partitions(65), "partitions", every},
		{"Timeout(-1s)", q.Timeout(-time.Second), "timeout", every},
		{"Timeout(61s)", q.Timeout(61 * time.Second), "timeout", every},
		{"Concurrency(0)", q.Concurrency(0), "concurrency", every},
		{"LeaseTime(-1s)", q.LeaseTime(-time.Second), "lease", every},
		{"LeaseTime(1ms)", q.LeaseTime(time.Millisecond), "lease", every},
		{"IdleTimeout(-1s)", q.IdleTimeout(-time.Second), "idle", every},
		{"ShutdownTimeout(-1s)", q.ShutdownTimeout(-time.Second), "shutdown", every},
		{"RenewLease(-1s)", q.RenewLease(true, -time.Second), "renew", every},
		{"RetryBackoff(-1s, 1s)", q.RetryBackoff(-time.Second, time.Second), "retrybackoff", every},
		{"RetryBackoff(2s, 1s)", q.RetryBackoff(2*time.Second, time.Second), "retrybackoff", every},
		{"AckEvery(-1, 1s)", q.AckEvery(-1, time.Second), "ackevery", every},
		{"AckEvery(1, -1s)", q.AckEvery(1, -time.Second), "ackevery", every},
		{"HandlerTimeout(-1s)", q.HandlerTimeout(-time.Second), "handlertimeout", every},
		{"MaxInFlightBytes(-1)", q.MaxInFlightBytes(-1), "maxinflightbytes", every},
		// A batch handler's batch is acked when it returns: AckEvery there would do nothing.
		{"AckEvery on a batch Consume", q.AckEvery(10, time.Second), "ackevery", []string{"batch Consume"}},
		{"Limit(0)", q.Limit(0), "limit", every},
		{"Limit(-1)", q.Limit(-1), "limit", every},
		{"SubscriptionMode(new-only)", q.Group("g").SubscriptionMode("new-only"), "subscriptionmode", every},
		{"Use(nil)", q.Use(nil), "use", every},
		{"an empty queue name", c.Queue(""), "queue", every},
		{"Conflation without a group", q.Conflation(true), "conflation", pops},
		{"Conflation in queue mode", q.Group("__QUEUE_MODE__").Conflation(true), "conflation", pops},
		{"Conflation with AutoAck", q.Group("g").Conflation(true).AutoAck(true), "conflation", []string{"Pop"}},
		{"a discovery pop with a partition", c.Queue("").Namespace("n").Partition("p"), "partition", pops},
	}
	ended, cancel := context.WithCancel(t.Context())
	cancel() // a Consume that were not refused would return nil at once
	h := func(context.Context, *queen.Message) error { return nil }
	bh := func(context.Context, []*queen.Message) error { return nil }
	for _, tc := range cases {
		for _, terminal := range tc.terminals {
			var err error
			switch terminal {
			case "Pop":
				_, err = tc.b.Pop(t.Context())
			case "Push":
				_, err = tc.b.Push(t.Context(), queen.PushItem{Data: 1})
			case "Consume":
				err = tc.b.Each().Consume(ended, h)
			case "batch Consume":
				err = tc.b.Consume(ended, bh)
			}
			if assert.ErrorIs(t, err, queen.ErrInvalidOption, "%s: %s", tc.name, terminal) {
				norm := strings.ToLower(strings.NewReplacer(" ", "", "_", "").Replace(err.Error()))
				assert.Contains(t, norm, tc.want, "%s: %s names the setting: %v", tc.name, terminal, err)
			}
		}
	}
	assert.ErrorIs(t, q.Each().Consume(ended, nil), queen.ErrInvalidOption, "a nil Handler")
	assert.ErrorIs(t, q.Consume(ended, nil), queen.ErrInvalidOption, "a nil BatchHandler")
	assert.NoError(t, q.RetryBackoff(0, 0).AckEvery(0, 0).Each().Consume(ended, h), "(0, 0) turns each off")
	assert.Empty(t, tap.All(), "nothing was sent")
}

// The safe defaults' options, as a caller compiles against them.
func TestBoundsAndSafeDefaultsSignatures(t *testing.T) {
	t.Parallel()
	c, err := queen.New("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	b := c.Queue("q")
	var (
		_ func(bool, time.Duration) queen.QueueBuilder = b.RenewLease
		_ func(time.Duration) queen.QueueBuilder       = b.HandlerTimeout
		_ func(int64) queen.QueueBuilder               = b.MaxInFlightBytes
		_ error                                        = queen.ErrHandlerTimeout
	)
}
