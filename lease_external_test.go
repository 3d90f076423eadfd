package queen_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A lost lease cancels the handler's ctx with cause ErrLeaseLost, and no ack is sent for it.
func TestAcceptanceLostLease(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		srv, tap, c := tapped(t, m, queentest.WithManualClock())
		push(t, c, "q", "", 0)
		cause := make(chan error, 1)
		started := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			done <- c.Queue("q").RenewLease(true, 20*time.Millisecond).Limit(1).Each().
				Consume(testutil.Context(t), func(hctx context.Context, _ *queen.Message) error {
					close(started)
					<-hctx.Done()
					cause <- context.Cause(hctx)
					return hctx.Err()
				})
		}()
		testutil.Recv(t, started, "the handler")
		srv.Advance(time.Hour) // the lease expires: the next renewal is refused
		assert.ErrorIs(t, testutil.Recv(t, cause, "the handler's ctx to end"), queen.ErrLeaseLost)
		require.NoError(t, testutil.Recv(t, done, "Consume to return"))
		assert.Empty(t, statuses(tap), "no ack for a lost lease")
	})
}

// RenewLease extends by LeaseTime when set, else by 60 s, always sending {"seconds":N}.
func TestAcceptanceRenewLeaseExtendsBy(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		b    func(queen.QueueBuilder) queen.QueueBuilder
		want string
	}{
		"lease time": {func(b queen.QueueBuilder) queen.QueueBuilder { return b.LeaseTime(3 * time.Second) }, `{"seconds":3}`},
		"default":    {func(b queen.QueueBuilder) queen.QueueBuilder { return b }, `{"seconds":60}`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			extended := make(chan struct{}, 16)
			_, tap, c := tappedWith(t, testmode.Modes[0], []queen.Option{queen.WithHooks(queen.Hooks{
				Request: func(e queen.RequestEvent) {
					if strings.Contains(e.Route, "extend") {
						extended <- struct{}{}
					}
				}})}, queentest.WithManualClock())
			push(t, c, "q", "", 0)
			err := tc.b(c.Queue("q")).RenewLease(true, 5*time.Millisecond).Limit(1).Each().
				Consume(testutil.Context(t), func(context.Context, *queen.Message) error {
					testutil.Recv(t, extended, "a renewal")
					return nil
				})
			require.NoError(t, err)
			var bodies []string
			for _, r := range tap.All() {
				if strings.Contains(r.Path, "/extend") {
					bodies = append(bodies, string(r.Body))
				}
			}
			require.NotEmpty(t, bodies)
			assert.JSONEq(t, tc.want, bodies[0])
		})
	}
}
