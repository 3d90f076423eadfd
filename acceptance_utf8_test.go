package queen_test

import (
	"context"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// Invalid UTF-8 never leaves the client: refused data and names, and a handler's error text
// still acked as valid UTF-8.
func TestAcceptanceInvalidUTF8NeverSent(t *testing.T) {
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
