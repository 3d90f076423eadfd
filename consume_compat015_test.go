package queen

import (
	"context"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// popQueries records the query of every pop that reaches the broker.
type popQueries struct {
	mu       sync.Mutex
	list     []url.Values
	answered chan struct{} // when set, receives once per pop answered
}

func (p *popQueries) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if testutil.RouteOf(r).Family == route.FamilyPop {
			p.mu.Lock()
			p.list = append(p.list, r.URL.Query())
			p.mu.Unlock()
		}
		next.ServeHTTP(w, r)
		if p.answered != nil && testutil.RouteOf(r).Family == route.FamilyPop {
			select {
			case p.answered <- struct{}{}:
			default:
			}
		}
	})
}

func (p *popQueries) all() []url.Values {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]url.Values(nil), p.list...)
}

// A 0.15 broker ignores autopilot and leases one message per pop: the default loop sizes the
// batch itself once an answer shows it, so a backlog costs at most one pop per 10 messages
// (it cost one pop per message before).
func TestConsumeDefaultsBatchOn015(t *testing.T) {
	t.Parallel()
	const backlog = 1000
	srv := queentest.NewServer(t, queentest.WithCompat("0.15"))
	var pops popQueries
	proxy, base := testutil.NewSpy(t, pops.wrap(srv.Handler()))
	c := newTestClient(t, base)
	pushN(t, c, "sized", "p", backlog)

	var handled atomic.Int64
	err := c.Queue("sized").Limit(backlog).Each().Consume(testutil.Context(t), func(context.Context, *Message) error {
		handled.Add(1)
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, int64(backlog), handled.Load())
	sent := pops.all()
	t.Logf("0.15, default settings: %d pops and %d acks for %d messages (%.3f pops per message)",
		len(sent), len(proxy.Of(route.FamilyAck)), backlog, float64(len(sent))/backlog)
	assert.LessOrEqual(t, len(sent), backlog/10, "at most one pop per 10 messages")
	assert.False(t, sent[0].Has("batch"), "the first pop leaves the batch to autopilot")
	assert.Equal(t, "true", sent[0].Get("autopilot"))
	assert.NotEmpty(t, sent[1].Get("batch"), "then the client sizes it")
	assert.Empty(t, drain(t, c, "sized"))
}

// On a 2.0 broker the default loop keeps leaving the batch to the broker's autopilot.
func TestConsumeLeavesBatchToAutopilotOn20(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	var pops popQueries
	_, base := testutil.NewSpy(t, pops.wrap(srv.Handler()))
	c := newTestClient(t, base)
	pushN(t, c, "auto", "p", 300)
	err := c.Queue("auto").Limit(300).Each().Consume(testutil.Context(t), func(context.Context, *Message) error { return nil })
	require.NoError(t, err)
	for i, q := range pops.all() {
		assert.False(t, q.Has("batch"), "pop %d sent a batch", i)
	}
}

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
