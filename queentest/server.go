package queentest

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/refserver"
)

// Server is a running reference broker: an in-memory engine behind the Queen HTTP API.
type Server struct {
	engine *broker.Engine
	manual *broker.ManualClock // nil unless WithManualClock
	ref    *refserver.Server

	faults    faults
	done      chan struct{} // closed by Close: fault delays and WaitIdle end
	closeOnce sync.Once
}

// shutdownGrace bounds how long Close waits for requests other than long polls, which the
// engine answers at once when it closes.
const shutdownGrace = 10 * time.Second

// NewServer starts a broker on a free loopback port and closes it when the test ends.
// A failure to start fails the test. Without WithCompat, the Queen version it behaves as is
// the QUEEN_COMPAT environment variable's ("0.15", or "2.0" or empty for the default); any
// other value fails the test, naming it.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s, err := Start(append(slices.Clone(opts), fromEnvironment())...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("queentest: closing the broker: %v", err)
		}
	})
	return s
}

// Start starts a broker listening on 127.0.0.1:0 (or WithAddr's address). Close stops it.
// A connection must send its request headers within 10s and a body within 30s of them, is
// closed after 120s idle, and at most WithMaxConns connections are served at once.
func Start(opts ...Option) (*Server, error) {
	s, addr, err := newServer(opts...)
	if err != nil {
		return nil, err
	}
	if err := s.ref.Listen(); err != nil {
		s.engine.Close()
		return nil, fmt.Errorf("queentest: listening on %s: %w", addr, err)
	}
	return s, nil
}

// newServer builds the engine and handler without listening, and returns the address Start
// listens on.
func newServer(opts ...Option) (*Server, string, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	mode, ok := broker.ModeOf(cfg.compat)
	switch {
	case ok:
	case cfg.compatFrom == compatEnv:
		return nil, "", fmt.Errorf(`queentest: %s=%q: unknown Queen version; want "2.0" (or empty) or "0.15"`, compatEnv, cfg.compat)
	default:
		return nil, "", fmt.Errorf(`queentest: WithCompat(%q): unknown Queen version; want "2.0" (or "") or "0.15"`, cfg.compat)
	}
	s := &Server{done: make(chan struct{})}
	s.faults.done = s.done
	var clock broker.Clock = broker.RealClock{}
	if cfg.manual {
		start := cfg.start
		if start.IsZero() {
			start = time.Now()
		}
		s.manual = broker.NewManualClock(start.Truncate(time.Microsecond))
		clock = s.manual
	}
	s.engine = broker.New(clock, broker.WithMode(mode))
	s.ref = refserver.New(s.engine, refserver.Config{
		Token: cfg.token, Logger: cfg.logger, Addr: cfg.addr, MaxConns: cfg.maxConns, Timeouts: cfg.timeouts,
		ManualClock: cfg.manual, Middleware: s.faults.wrap,
	})
	return s, cfg.addr, nil
}

// URL is the broker's base URL, such as "http://127.0.0.1:41234".
func (s *Server) URL() string { return s.ref.URL() }

// Handler serves the same broker, authentication included, for in-process use
// (httptest.NewServer(srv.Handler()), or a handler test without a socket).
func (s *Server) Handler() http.Handler { return s.ref.Handler() }

// Advance moves the broker's manual clock by d and fires the lease expiries now due, before
// it returns. It panics when the Server was not started WithManualClock.
func (s *Server) Advance(d time.Duration) {
	if s.manual == nil {
		panic("queentest: Advance needs a Server started WithManualClock")
	}
	s.manual.Advance(d)
}

// Now is the broker's current time: the manual clock's, or the wall clock's.
func (s *Server) Now() time.Time { return s.engine.Now() }

// Close stops the broker: it stops accepting connections, answers every waiting long poll
// with an empty result, waits for in-flight requests, and returns. It is idempotent.
// Requests still running after 10s are cut off, and Close then returns an error.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		return fmt.Errorf("shutting down: %w", err)
	}
	return nil
}

// Shutdown stops the broker as Close does, but gives in-flight requests only until ctx is
// done: then it closes the connections left and returns ctx's error. Only the first call of
// Close or Shutdown stops the broker; later calls return its result.
func (s *Server) Shutdown(ctx context.Context) error {
	s.closeOnce.Do(func() { close(s.done) }) // fault delays end first: Shutdown waits for them
	return s.ref.Shutdown(ctx)
}

// WaitingPops is how many long polls are parked in the broker right now. Tests use it to know
// a pop is waiting before they push, without sleeping.
func (s *Server) WaitingPops() int { return s.engine.WaitingPops() }
