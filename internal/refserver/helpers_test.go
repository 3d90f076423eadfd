package refserver

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
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
	at     time.Time
}

type option func(*setup)

func withToken(tok string) option      { return func(s *setup) { s.cfg.Token = tok } }
func withLogger(l *slog.Logger) option { return func(s *setup) { s.cfg.Logger = l } }
func withMaxConns(n int) option        { return func(s *setup) { s.cfg.MaxConns = n } }
func withTimeouts(t Timeouts) option   { return func(s *setup) { s.cfg.Timeouts = t } }
func withMiddleware(m func(http.Handler) http.Handler) option {
	return func(s *setup) { s.cfg.Middleware = m }
}
func withManualClock() option               { return func(s *setup) { s.manual = true } }
func withManualClockAt(at time.Time) option { return func(s *setup) { s.manual, s.at = true, at } }

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

// newEngine builds the engine and the server of opts without listening.
func newEngine(opts ...option) (*testServer, *setup) {
	st := &setup{cfg: Config{Addr: "127.0.0.1:0", MaxConns: DefaultMaxConns}}
	for _, o := range opts {
		o(st)
	}
	ts := &testServer{}
	var clock broker.Clock = broker.RealClock{}
	if st.manual {
		at := st.at
		if at.IsZero() {
			at = time.Now()
		}
		ts.manual = broker.NewManualClock(at.Truncate(time.Microsecond))
		clock = ts.manual
	}
	ts.engine = broker.New(clock, broker.WithMode(st.mode))
	st.cfg.ManualClock = st.manual
	ts.Server = New(ts.engine, st.cfg)
	return ts, st
}

// newTestServer starts a server of opts on a free loopback port.
func newTestServer(t testing.TB, opts ...option) *testServer {
	t.Helper()
	ts, _ := newEngine(opts...)
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
