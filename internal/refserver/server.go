package refserver

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/queenmq/queen-go/internal/broker"
)

// Config says how a Server serves.
type Config struct {
	// Token, when set, must come as "Authorization: Bearer <token>" on every API
	// request; /health stays open.
	Token string
	// Logger takes startup and shutdown at Info and one line per request at Debug; nil
	// discards them.
	Logger *slog.Logger
	// Addr is the TCP address Listen listens on.
	Addr string
	// MaxConns is how many connections are served at once, lowered to the process's open-file
	// limit less 64 (and logged) when above it. At the cap, a new connection closes the one idle
	// the longest; with none idle it waits to be accepted until one closes or turns idle. 0 (or
	// less) is no limit.
	MaxConns int
	// Timeouts bound each connection; a zero field takes its default.
	Timeouts Timeouts
	// ManualClock says, in the startup log, that the engine reads a manual clock.
	ManualClock bool
	// Middleware, when set, wraps the whole handler, outside the token check and the logs.
	Middleware func(http.Handler) http.Handler
}

// Timeouts bound a connection: no client may hold one, or the broker's descriptors, beyond
// them.
type Timeouts struct {
	Header time.Duration // to send the request headers
	Body   time.Duration // to send a body, from its headers
	Idle   time.Duration // between requests
}

// The defaults of a Config.
const (
	DefaultMaxConns      = 4096
	DefaultHeaderTimeout = 10 * time.Second
	DefaultBodyTimeout   = 30 * time.Second
	DefaultIdleTimeout   = 120 * time.Second
)

// Server is a reference broker's HTTP side over an engine.
type Server struct {
	engine  *broker.Engine
	cfg     Config
	logger  *slog.Logger
	handler http.Handler
	done    chan struct{} // closed by Shutdown: ends the waits only a stop ends

	http      *http.Server
	url       string
	onIdle    func() // called as a connection under MaxConns turns idle; tests only
	serveDone chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// New serves engine as its generation does; nothing listens until Listen.
func New(engine *broker.Engine, cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	t := &cfg.Timeouts
	t.Header = cmp.Or(t.Header, DefaultHeaderTimeout)
	t.Body = cmp.Or(t.Body, DefaultBodyTimeout)
	t.Idle = cmp.Or(t.Idle, DefaultIdleTimeout)
	s := &Server{engine: engine, cfg: cfg, logger: cfg.Logger, done: make(chan struct{})}
	gen := generationOf(engine.Mode())
	h := gen.routes(s)
	if cfg.Token != "" {
		h = closeRefused(gen.authorize(cfg.Token, h))
	}
	h = recoverPanics(s.logger, logRequests(s.logger, h))
	if cfg.Middleware != nil {
		h = cfg.Middleware(h)
	}
	s.handler = h
	return s
}

// generation is how one broker generation is served: its routes and its token check.
type generation struct {
	routes    func(*Server) http.Handler
	authorize func(token string, next http.Handler) http.Handler
}

func generationOf(m broker.Mode) generation {
	if m == broker.Mode015 {
		return generation{routes: (*Server).router015, authorize: requireToken015}
	}
	return generation{routes: (*Server).router20, authorize: requireToken}
}

// Handler serves the broker, the token check included, for in-process use.
func (s *Server) Handler() http.Handler { return s.handler }

// Listen listens on the Config's address and serves there until Shutdown. A connection must
// send its request headers, and a body after them, within the Config's timeouts, is closed
// once idle that long, and at most MaxConns connections are served at once.
func (s *Server) Listen() error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return err
	}
	s.url = "http://" + ln.Addr().String()
	t := s.cfg.Timeouts
	s.http = &http.Server{
		Handler:           bodyDeadline(t.Body, s.handler),
		ReadHeaderTimeout: t.Header,
		IdleTimeout:       t.Idle,
		ErrorLog:          slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn),
	}
	maxConns := s.cfg.MaxConns
	if maxConns > 0 {
		limit := openFileLimit()
		var fits bool
		if maxConns, fits = maxConnsWithin(maxConns, limit); !fits {
			s.logger.Warn("max-conns lowered below the open-file limit", "asked", s.cfg.MaxConns,
				"maxConns", maxConns, "openFileLimit", limit, "reserve", reserveFiles)
		}
		ll := newLimitListener(ln, maxConns)
		ll.onIdle = s.onIdle
		ln, s.http.ConnState = ll, ll.connState
	}
	s.serveDone = make(chan struct{})
	go func() {
		defer close(s.serveDone)
		_ = s.http.Serve(ln) // returns ErrServerClosed after Shutdown
	}()
	s.logger.Info("queen reference broker listening", "url", s.url, "auth", s.cfg.Token != "",
		"manualClock", s.cfg.ManualClock, "compat", s.engine.Mode().String(), "maxConns", maxConns)
	return nil
}

// URL is the base URL Listen serves, such as "http://127.0.0.1:41234"; "" before Listen.
func (s *Server) URL() string { return s.url }

// Shutdown stops the broker: it answers every waiting long poll with an empty result and
// closes the engine, stops accepting connections and waits for in-flight requests until ctx
// is done: then it closes the connections left and returns ctx's error. Only the first call
// stops the broker; later calls return its result.
func (s *Server) Shutdown(ctx context.Context) error {
	s.closeOnce.Do(func() {
		// Answer waiting pops first: Shutdown waits for every active request to finish.
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
