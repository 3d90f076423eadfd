package refserver

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/testutil"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testServer is a reference server listening on a loopback port over an engine of its own,
// shut down when the test ends.
type testServer struct {
	*Server
	engine *broker.Engine
	manual *broker.ManualClock // nil on the wall clock
}

// setup is how a test's server is built.
type setup struct {
	cfg    Config
	mode   broker.Mode
	manual bool
	engine []broker.Option
}

type option func(*setup)

func withToken(tok string) option { return func(s *setup) { s.cfg.Token = tok } }

func withMaxConns(n int) option { return func(s *setup) { s.cfg.MaxConns = n } }

func withLogger(l *slog.Logger) option { return func(s *setup) { s.cfg.Logger = l } }

func withTimeouts(t Timeouts) option { return func(s *setup) { s.cfg.Timeouts = t } }

func withMiddleware(m func(http.Handler) http.Handler) option {
	return func(s *setup) { s.cfg.Middleware = m }
}

func withManualClock() option { return func(s *setup) { s.manual = true } }

// withEngine adds options to the engine's.
func withEngine(opts ...broker.Option) option {
	return func(s *setup) { s.engine = append(s.engine, opts...) }
}

// withCompat makes the engine behave as the given Queen version.
func withCompat(version string) option {
	return func(s *setup) {
		m, ok := broker.ModeOf(version)
		if !ok {
			panic("unknown version " + version)
		}
		s.mode = m
	}
}

// unstartedServer builds the engine and the server of opts without listening.
func unstartedServer(opts ...option) *testServer {
	st := &setup{cfg: Config{Addr: "127.0.0.1:0", MaxConns: DefaultMaxConns}}
	for _, o := range opts {
		o(st)
	}
	ts := &testServer{}
	var clock broker.Clock = broker.RealClock{}
	if st.manual {
		ts.manual = broker.NewManualClock(time.Now().Truncate(time.Microsecond))
		clock = ts.manual
	}
	ts.engine = broker.New(clock, append([]broker.Option{broker.WithMode(st.mode)}, st.engine...)...)
	st.cfg.ManualClock = st.manual
	ts.Server = New(ts.engine, st.cfg)
	return ts
}

// newTestServer starts a server of opts on a free loopback port.
func newTestServer(t testing.TB, opts ...option) *testServer {
	t.Helper()
	ts := unstartedServer(opts...)
	if err := ts.Listen(); err != nil {
		ts.engine.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ts.Close(); err != nil {
			t.Errorf("shutting the broker down: %v", err)
		}
	})
	return ts
}

// start is newTestServer plus a client for it.
func start(t testing.TB, opts ...option) (*testServer, *testutil.Client) {
	t.Helper()
	srv := newTestServer(t, opts...)
	return srv, testutil.NewClient(t, srv.URL())
}

// Close shuts the server down, giving in-flight requests 10 s.
func (s *testServer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.Shutdown(ctx)
}

// Advance moves the manual clock.
func (s *testServer) Advance(d time.Duration) { s.manual.Advance(d) }

// Now is the engine's time.
func (s *testServer) Now() time.Time { return s.engine.Now() }

// Lag is how many messages of queue lie after group's cursors.
func (s *testServer) Lag(queue, group string) int64 {
	lag, _, _ := s.engine.Progress(queue, group)
	return lag
}

// WaitingPops is how many long polls are parked.
func (s *testServer) WaitingPops() int { return s.engine.WaitingPops() }

func itoa(i int) string { return strconv.Itoa(i) }

func readAll(t testing.TB, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return []byte(b.String())
}

// exampleState builds the introspection example over HTTP on a manual clock: queue orders
// (Default empty, p0, p1, p2) read by fast, slow, late and queue mode, 30 s after the first
// push; plus the empty queue returns.
func exampleState(t *testing.T) (*testServer, *testutil.Client, map[string]string) {
	t.Helper()
	srv, c := start(t, withManualClock())
	c.Post("/api/v1/configure", `{"queue":"orders","namespace":"shop","task":"fulfil","options":{"leaseTime":600,"retryLimit":1}}`).Want(t, http.StatusOK, nil)
	c.Post("/api/v1/configure", `{"queue":"returns","namespace":"shop","task":"refund"}`).Want(t, http.StatusOK, nil)
	ids := map[string]string{}
	for _, p := range []struct {
		name string
		n    int
	}{{"p0", 4}, {"p1", 3}, {"p2", 2}} {
		ids[p.name] = c.PushN("orders", p.name, p.name, p.n)[0].PartitionID
	}
	if c.Pop("/api/v1/pop/queue/orders/partition/p2", testutil.Query("consumerGroup", "late", "subscriptionMode", "new")) != nil {
		t.Fatal("late popped something")
	}
	c.AckAll(c.MustPop("/api/v1/pop/queue/orders/partition/p0", testutil.Query("consumerGroup", "slow", "subscriptionMode", "all", "batch", "2")), "slow", "completed")
	c.MustPop("/api/v1/pop/queue/orders/partition/p1", testutil.Query("consumerGroup", "slow", "subscriptionMode", "all", "batch", "2"))
	for range 2 {
		c.AckAll(c.MustPop("/api/v1/pop/queue/orders/partition/p0", testutil.Query("batch", "1")), "", "failed")
	}
	ids["queueLease"] = c.MustPop("/api/v1/pop/queue/orders/partition/p0", testutil.Query("batch", "2")).LeaseID
	fast := c.MustPop("/api/v1/pop/queue/orders/partition/p2", testutil.Query("consumerGroup", "fast", "subscriptionMode", "all", "batch", "10"))
	c.AckBatch(map[string]any{"consumerGroup": "fast", "acknowledgments": []map[string]any{
		{"transactionId": "p2-0", "partitionId": ids["p2"], "leaseId": fast.LeaseID, "status": "completed"},
		{"transactionId": "p2-1", "partitionId": ids["p2"], "leaseId": fast.LeaseID, "status": "dlq"},
	}})
	srv.Advance(3 * time.Second)
	c.Push(testutil.Item{Queue: "orders", Partition: "p0", TransactionID: "p0-4", Payload: map[string]int{"n": 4}},
		testutil.Item{Queue: "orders", Partition: "p2", TransactionID: "p2-2", Payload: map[string]int{"n": 2}})
	for _, p := range []string{"p0", "p1", "p2"} {
		c.AckAll(c.MustPop("/api/v1/pop/queue/orders/partition/"+p, testutil.Query("consumerGroup", "fast", "subscriptionMode", "all", "batch", "10")), "fast", "completed")
	}
	srv.Advance(27 * time.Second)
	return srv, c, ids
}

func obj(t *testing.T, v any, what string) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s = %v, want an object", what, v)
	}
	return m
}

func arr(t *testing.T, v any, what string) []any {
	t.Helper()
	l, ok := v.([]any)
	if !ok {
		t.Fatalf("%s = %v, want an array", what, v)
	}
	return l
}

var countKeys = []string{"total", "pending", "processing", "completed", "failed", "deadLetter"}
