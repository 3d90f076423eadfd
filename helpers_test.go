package queen

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// newTestClient is a Client for url whose transport retries fast; Close runs at cleanup.
func newTestClient(t testing.TB, url string, opts ...Option) *Client {
	t.Helper()
	all := append([]Option{WithRetry(2, time.Millisecond, 5*time.Millisecond)}, opts...)
	c, err := New(url, all...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// brokerAndClient starts a reference broker and a client of it.
func brokerAndClient(t testing.TB, opts ...queentest.Option) (*queentest.Server, *Client) {
	t.Helper()
	srv := queentest.NewServer(t, opts...)
	return srv, newTestClient(t, srv.URL())
}

// pushN pushes n messages {"p":partition,"i":0..n-1} to a partition, with transactionIds
// "<partition>-<i>".
func pushN(t testing.TB, c *Client, queue, partition string, n int) {
	t.Helper()
	items := make([]PushItem, n)
	for i := range items {
		items[i] = PushItem{Data: map[string]any{"p": partition, "i": i},
			TransactionID: fmt.Sprintf("%s-%d", partition, i)}
	}
	res, err := c.Queue(queue).Partition(partition).Push(context.Background(), items...)
	require.NoError(t, err)
	require.Len(t, res, n)
}

// configureQueue sets a queue's options through the broker's configure route.
func configureQueue(t testing.TB, c *Client, queue string, options map[string]any) {
	t.Helper()
	body := map[string]any{"queue": queue, "options": options}
	require.NoError(t, c.Do(context.Background(), http.MethodPost, "/api/v1/configure", nil, body, nil))
}

// deadLetter is the part of a dead letter the tests look at.
type deadLetter struct {
	TransactionID string `json:"transactionId"`
	ErrorMessage  string `json:"errorMessage"`
	RetryCount    int    `json:"retryCount"`
}

// deadLetters lists a queue's dead letters.
func deadLetters(t testing.TB, c *Client, queue string) []deadLetter {
	t.Helper()
	var page struct {
		Messages []deadLetter `json:"messages"`
	}
	q := map[string][]string{"queue": {queue}}
	require.NoError(t, c.Do(context.Background(), http.MethodGet, "/api/v1/dlq", q, nil, &page))
	return page.Messages
}

// drain pops everything left in the queue (queue mode, no wait) and returns the messages.
func drain(t testing.TB, c *Client, queue string) []*Message {
	t.Helper()
	var all []*Message
	for {
		msgs, err := c.Queue(queue).Batch(1000).Partitions(64).Pop(context.Background())
		require.NoError(t, err)
		if len(msgs) == 0 {
			return all
		}
		all = append(all, msgs...)
	}
}

// manualClock is a client clock that moves only with Advance.
type manualClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*manualTimer
	armed  chan time.Duration // when set, receives the length of every After timer made
}

type manualTimer struct {
	at      time.Time
	c       chan time.Time
	fn      func() // AfterFunc's: called in its own goroutine when due
	stopped bool
}

func newManualClock() *manualClock { return &manualClock{now: time.Now()} }

func (m *manualClock) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

func (m *manualClock) After(d time.Duration) (<-chan time.Time, func()) {
	t := m.add(d, nil)
	return t.c, m.stopper(t)
}

func (m *manualClock) AfterFunc(d time.Duration, f func()) func() {
	return m.stopper(m.add(d, f))
}

func (m *manualClock) add(d time.Duration, f func()) *manualTimer {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := &manualTimer{at: m.now.Add(d), c: make(chan time.Time, 1), fn: f}
	m.timers = append(m.timers, t)
	if m.armed != nil && f == nil {
		m.armed <- d
	}
	return t
}

func (m *manualClock) stopper(t *manualTimer) func() {
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		t.stopped = true
	}
}

// Advance moves the clock and fires the timers now due.
func (m *manualClock) Advance(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now = m.now.Add(d)
	kept := m.timers[:0]
	for _, t := range m.timers {
		switch {
		case t.stopped:
		case !t.at.After(m.now):
			if t.fn != nil {
				go t.fn()
			} else {
				t.c <- m.now
			}
		default:
			kept = append(kept, t)
		}
	}
	m.timers = kept
}

// useManualClock gives c a manual clock and returns it with a channel that
// receives the outcome of every periodic renewal. Call it before Consume.
func useManualClock(c *Client) (*manualClock, <-chan error) {
	clock := newManualClock()
	renewed := make(chan error, 64)
	c.clock = clock
	c.renewer.observe = func(_ string, err error) { renewed <- err }
	return clock, renewed
}

// errorLog collects OnError calls.
type errorLog struct {
	mu   sync.Mutex
	msgs []*Message
	errs []error
}

func (e *errorLog) record(m *Message, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.msgs = append(e.msgs, m)
	e.errs = append(e.errs, err)
}

func (e *errorLog) all() ([]*Message, []error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]*Message(nil), e.msgs...), append([]error(nil), e.errs...)
}

func jsonLogger(w *testutil.LogBuffer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// closeOnce closes a channel at most once.
type closeOnce struct {
	once sync.Once
	ch   chan struct{}
}

func newCloseOnce() *closeOnce { return &closeOnce{ch: make(chan struct{})} }

func (c *closeOnce) close() { c.once.Do(func() { close(c.ch) }) }

func (c *closeOnce) done() <-chan struct{} { return c.ch }

// modeBrokerAndClient is brokerAndClient with the broker in mode m (2.0 or 0.15).
func modeBrokerAndClient(t testing.TB, m testmode.Mode, opts ...queentest.Option) (*queentest.Server, *Client) {
	t.Helper()
	return brokerAndClient(t, m.Options(opts...)...)
}

// deliveries counts on the client side how often each message reached a handler, so that a
// test's handler does not depend on deliveryAttempt, which 0.15 does not send. next also
// checks what the message reports: nothing (0) on 0.15, on 2.0 at least the handler's count
// (the broker also counts deliveries that were released unhandled).
type deliveries struct {
	mu sync.Mutex
	n  map[string]int
}

func (d *deliveries) next(t testing.TB, mode testmode.Mode, m *Message) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.n == nil {
		d.n = map[string]int{}
	}
	d.n[m.TransactionID]++
	n := d.n[m.TransactionID]
	if mode.V015 {
		assert.Zero(t, m.DeliveryAttempt, "%s's delivery attempt", m.TransactionID)
	} else {
		assert.GreaterOrEqual(t, m.DeliveryAttempt, n, "%s's delivery attempt", m.TransactionID)
	}
	return n
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

type payload struct {
	P string `json:"p"`
	I int    `json:"i"`
}

func decode(t testing.TB, m *Message) payload {
	var p payload
	if err := json.Unmarshal(m.Data, &p); err != nil {
		t.Errorf("decode %s: %v", m.TransactionID, err)
	}
	return p
}

// popQueries are the queries of the pops a spy saw, in order.
func popQueries(spy *testutil.Spy) []url.Values {
	var out []url.Values
	for _, r := range spy.Of(route.FamilyPop) {
		q, err := url.ParseQuery(r.RawQuery)
		if err != nil {
			panic(err)
		}
		out = append(out, q)
	}
	return out
}

// captures015 is the file of a real 0.15 broker's pop, push, ack, extend and transaction
// exchanges, kept verbatim: the seeds of the fuzz targets of their decoders.
const captures015 = "testdata/wire015_captures.json"

// seedAnswers adds the answers of every capture of the given kind to f's corpus, then the
// shapes every decoder must survive: empty, null, the wrong kind of value, a 0.15 error object.
func seedAnswers(f *testing.F, kind string, more ...string) {
	for _, c := range testutil.Captures(f, captures015, kind) {
		f.Add([]byte(c.Response))
	}
	for _, body := range append(more, ``, `null`, `{}`, `[]`, `[null]`, `"x"`, `7`, `{"success":false}`,
		`{"success":false,"error":"ERROR:  deadlock detected"}`, `[{"success":"yes"}]`, `{"messages":null}`) {
		f.Add([]byte(body))
	}
}

// answerRequest is the request an answer is read for, as its decoder sees it.
func answerRequest(r route.Route) *request {
	return &request{method: r.Method, path: r.Pattern, route: r}
}

// requireAPIError fails the test unless err is an *APIError: every answer a decoder cannot read
// is reported as the broker's error, never as a panic or a stray error type.
func requireAPIError(t *testing.T, err error) {
	t.Helper()
	var api *APIError
	require.ErrorAs(t, err, &api, "%v", err)
}
