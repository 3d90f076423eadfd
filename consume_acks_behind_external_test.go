package queen_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// requestLog is a transport that notes when each pop leaves and when each ack leaves and is
// answered, and can hold acks back until released.
type requestLog struct {
	next    http.RoundTripper
	release chan struct{} // non-nil: acks wait until it is closed
	mu      sync.Mutex
	events  []string // "pop", "ack>" (sent), "ack<" (answered), in order
}

func (l *requestLog) note(e string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *requestLog) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.Contains(r.URL.Path, "/pop") {
		l.note("pop")
		return l.next.RoundTrip(r)
	}
	if !strings.Contains(r.URL.Path, "/ack") {
		return l.next.RoundTrip(r)
	}
	l.note("ack>")
	if l.release != nil {
		select {
		case <-l.release:
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
	resp, err := l.next.RoundTrip(r)
	l.note("ack<")
	return resp, err
}

// answered counts the acks answered so far.
func (l *requestLog) answered() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, e := range l.events {
		if e == "ack<" {
			n++
		}
	}
	return n
}

// eachPopAfterAnAnsweredAck reports whether every pop but the first left once the acks of the
// pops before it had been answered, one message each, and returns the log.
func (l *requestLog) eachPopAfterAnAnsweredAck() (bool, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	pops, answered := 0, 0
	for _, e := range l.events {
		switch e {
		case "pop":
			if pops++; answered < pops-1 {
				return false, slices.Clone(l.events)
			}
		case "ack<":
			answered++
		}
	}
	return true, slices.Clone(l.events)
}

func loggedClient(t *testing.T, m testmode.Mode, log *requestLog) (*queentest.Server, *queen.Client) {
	t.Helper()
	srv := m.Server(t)
	log.next = http.DefaultTransport.(*http.Transport).Clone()
	c, err := queen.New(srv.URL(), queen.WithHTTPClient(&http.Client{Transport: log, Timeout: 30 * time.Second}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return srv, c
}

// With Concurrency 1 on a 2.0 broker, the next message is popped and handled while the last
// one's ack is still on its way: one message at a time in the handler, but the two round trips
// overlap instead of adding up.
func TestWithConcurrencyOneTheNextPopTravelsWhileTheLastAckDoes(t *testing.T) {
	t.Parallel()
	log := &requestLog{release: make(chan struct{})}
	srv, c := loggedClient(t, testmode.Modes[0], log)
	push(t, c, "q", "p1", "first")
	push(t, c, "q", "p2", "second")
	var mu sync.Mutex
	var handled []string
	answeredBeforeSecond := -1
	// Limit counts the first message once, handed out and waiting for its ack: the second
	// pop may go.
	err := c.Queue("q").Concurrency(1).Batch(1).Limit(2).Each().
		Consume(testutil.Context(t), func(_ context.Context, msg *queen.Message) error {
			mu.Lock()
			defer mu.Unlock()
			handled = append(handled, msg.Partition)
			if len(handled) == 2 {
				answeredBeforeSecond = log.answered()
				close(log.release) // the first ack has waited for the second message
			}
			return nil
		})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"p1", "p2"}, handled,
		"the second message came while the first one's ack was held back")
	assert.Zero(t, answeredBeforeSecond, "the second message was handled before the first ack's answer")
	assert.Zero(t, srv.Lag("q", ""), "both acks landed before Consume returned")
}

// Where the order of an ack and the next pop matters, the pop waits for the ack's answer: on
// a 0.15 broker, whose retry counters an ack resets; after a failure; and without long polls,
// where a pop that found the partition still leased would come back empty.
func TestTheNextPopWaitsForTheAckWhereTheirOrderMatters(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		mode testmode.Mode
		tune func(queen.QueueBuilder) queen.QueueBuilder
		fail bool
	}{
		"0.15": {mode: testmode.Modes[1]},
		"failure": {mode: testmode.Modes[0], fail: true,
			tune: func(b queen.QueueBuilder) queen.QueueBuilder { return b.RetryBackoff(0, 0) }},
		"no wait": {mode: testmode.Modes[0],
			tune: func(b queen.QueueBuilder) queen.QueueBuilder { return b.Wait(false) }},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			log := &requestLog{}
			_, c := loggedClient(t, tc.mode, log)
			for _, p := range []string{"p1", "p2", "p3"} {
				push(t, c, "q", p, p)
			}
			b := c.Queue("q").Concurrency(1).Batch(1).Limit(3)
			if tc.tune != nil {
				b = tc.tune(b)
			}
			err := b.Each().Consume(testutil.Context(t), func(context.Context, *queen.Message) error {
				if tc.fail {
					return errors.New("boom")
				}
				return nil
			})
			require.NoError(t, err)
			ok, events := log.eachPopAfterAnAnsweredAck()
			assert.True(t, ok, "each pop left after the last ack's answer: %v", events)
		})
	}
}
