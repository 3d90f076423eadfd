package queen

import (
	"context"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A named group in mode new whose first pops find the queue empty receives what is pushed
// next, on 0.15 as on 2.0: the loop sends subscriptionFrom, the broker's time of its first
// pop, until the broker has stored the start.
func TestConsumeNewGroupOn015ReceivesWhatIsPushedAfterItsFirstPop(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t, queentest.WithCompat("0.15"))
	pops := popQueries{answered: make(chan struct{}, 1)}
	_, base := testutil.NewSpy(t, pops.wrap(srv.Handler()))
	c := newTestClient(t, base)
	configureQueue(t, c, "fresh", map[string]any{})

	handled := make(chan string, 8)
	ctx, cancel := context.WithCancel(testutil.Context(t))
	defer cancel()
	done := testutil.Go(func() error {
		return c.Queue("fresh").Group("billing").Wait(false).Limit(5).Each().
			Consume(ctx, func(_ context.Context, m *Message) error {
				handled <- m.TransactionID
				return nil
			})
	})
	for range 2 {
		testutil.Recv(t, pops.answered, "an empty answer") // the queue was empty for the group's first pops
	}
	pushN(t, c, "fresh", "p", 5)
	for range 5 {
		testutil.Recv(t, handled, "a message pushed after the group's first pop")
	}
	require.NoError(t, testutil.Recv(t, done, "Consume"))

	sent := pops.all()
	assert.Equal(t, "new", sent[0].Get("subscriptionMode"), "the first pop says new")
	from, err := time.Parse(time.RFC3339, sent[1].Get("subscriptionFrom"))
	require.NoError(t, err, "later pops say from when: %v", sent[1])
	assert.False(t, sent[1].Has("subscriptionMode"))
	assert.WithinDuration(t, time.Now(), from, 10*time.Second)
}
