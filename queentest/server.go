package queentest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/broker"
)

// Server is a running reference broker: an in-memory engine behind the Queen HTTP API.
type Server struct {
	engine  *broker.Engine
	manual  *broker.ManualClock // nil unless WithManualClock
	clock   broker.Clock
	logger  *slog.Logger
	handler http.Handler
	http    *http.Server
	url     string

	cfg       config
	faults    faults
	done      chan struct{} // closed by Close: fault delays and WaitIdle end
	v015      bool          // WithCompat("0.15")
	serveDone chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// shutdownGrace bounds how long Close waits for requests other than long polls, which the
// engine answers at once when it closes.
const shutdownGrace = 10 * time.Second

// NewServer starts a broker on a free loopback port and closes it when the test ends.
// A failure to start fails the test.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s, err := Start(opts...)
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
	s := newServer(opts...)
	cfg := s.cfg
	if _, err := compatMode(cfg.compat); err != nil {
		s.engine.Close()
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		s.engine.Close()
		return nil, fmt.Errorf("queentest: listening on %s: %w", cfg.addr, err)
	}
	s.url = "http://" + ln.Addr().String()
	if cfg.maxConns > 0 {
		ln = newLimitListener(ln, cfg.maxConns)
	}
	s.http = &http.Server{
		Handler:           bodyDeadline(cfg.timeouts.body, s.handler),
		ReadHeaderTimeout: cfg.timeouts.header,
		IdleTimeout:       cfg.timeouts.idle,
		ErrorLog:          slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn),
	}
	s.serveDone = make(chan struct{})
	go func() {
		defer close(s.serveDone)
		_ = s.http.Serve(ln) // returns ErrServerClosed after Shutdown
	}()
	s.logger.Info("queen reference broker listening", "url", s.url, "auth", cfg.token != "", "manualClock", s.manual != nil, "compat", compatName(cfg.compat))
	return s, nil
}

// newServer builds the engine and handler without listening.
func newServer(opts ...Option) *Server {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	mode, _ := compatMode(cfg.compat) // Start reports an unknown version
	s := &Server{logger: cfg.logger, cfg: cfg, done: make(chan struct{}), v015: mode == broker.Mode015}
	s.faults.done = s.done
	if cfg.manual {
		start := cfg.start
		if start.IsZero() {
			start = time.Now()
		}
		s.manual = broker.NewManualClock(start.Truncate(time.Microsecond))
		s.clock = s.manual
	} else {
		s.clock = broker.RealClock{}
	}
	s.engine = broker.New(s.clock, broker.WithMode(mode))
	var h http.Handler = newRouter(s)
	switch {
	case cfg.token != "" && s.v015:
		h = requireToken015(cfg.token, h)
	case cfg.token != "":
		h = requireToken(cfg.token, h)
	}
	h = logRequests(s.logger, h)
	s.handler = s.faults.wrap(recoverPanics(s.logger, h))
	return s
}

// URL is the broker's base URL, such as "http://127.0.0.1:41234".
func (s *Server) URL() string { return s.url }

// Handler serves the same broker, authentication included, for in-process use
// (httptest.NewServer(srv.Handler()), or a handler test without a socket).
func (s *Server) Handler() http.Handler { return s.handler }

// Advance moves the broker's manual clock by d and fires the lease expiries now due, before
// it returns. It panics when the Server was not started WithManualClock.
func (s *Server) Advance(d time.Duration) {
	if s.manual == nil {
		panic("queentest: Advance needs a Server started WithManualClock")
	}
	s.manual.Advance(d)
}

// Now is the broker's current time: the manual clock's, or the wall clock's.
func (s *Server) Now() time.Time { return s.clock.Now() }

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
	s.closeOnce.Do(func() {
		// Answer waiting pops and end fault delays first: Shutdown waits for every active
		// request to finish.
		close(s.done)
		s.engine.Close()
		if s.http == nil {
			return
		}
		if err := s.http.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.closeErr = err
			_ = s.http.Close()
		}
		<-s.serveDone
		s.logger.Info("queen reference broker stopped", "url", s.url)
	})
	return s.closeErr
}

// WaitingPops is how many long polls are parked in the broker right now. Tests use it to know
// a pop is waiting before they push, without sleeping.
func (s *Server) WaitingPops() int { return s.engine.WaitingPops() }
