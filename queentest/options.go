package queentest

import (
	"log/slog"
	"os"
	"time"

	"github.com/queenmq/queen-go/internal/refserver"
)

// Option configures a Server.
type Option func(*config)

type config struct {
	token      string
	manual     bool
	start      time.Time
	logger     *slog.Logger
	addr       string
	compat     string // the Queen version, "" for 2.0
	compatFrom string // what set it: "WithCompat", the environment variable, or "" for neither

	maxConns int // connections served at once; 0: no limit
	timeouts refserver.Timeouts
}

func defaultConfig() config {
	return config{
		logger:   slog.New(slog.DiscardHandler),
		addr:     "127.0.0.1:0",
		maxConns: refserver.DefaultMaxConns,
	}
}

// WithMaxConns sets how many connections the broker serves at once; further ones wait to be
// accepted until one closes. n <= 0 removes the limit. Default: 4096.
func WithMaxConns(n int) Option { return func(c *config) { c.maxConns = max(n, 0) } }

// WithToken makes every API request carry "Authorization: Bearer <tok>" (the scheme name is
// case-insensitive); others are answered 401 {"error":"Authentication required"} with no
// effect. /health stays open. Default: no authentication.
func WithToken(tok string) Option { return func(c *config) { c.token = tok } }

// WithManualClock stops the broker's clock: it moves only with (*Server).Advance, which fires
// the lease expiries that come due. Long-poll timeouts still run on real time, so a waiting pop
// never hangs a test. The clock starts at the real time of Start. Default: the wall clock.
func WithManualClock() Option { return func(c *config) { c.manual = true } }

// WithManualClockAt is WithManualClock starting at t, for tests that need fixed timestamps.
func WithManualClockAt(t time.Time) Option {
	return func(c *config) { c.manual, c.start = true, t }
}

// WithLogger sends the broker's logs to l: startup and shutdown at Info, one line per request
// at Debug. Default: discarded.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithAddr sets the TCP address Start listens on. Default: "127.0.0.1:0", a free loopback port.
func WithAddr(addr string) Option { return func(c *config) { c.addr = addr } }

// WithCompat makes the broker answer on the wire as the given Queen version does: "0.15"
// behaves as a real 0.15 broker (HTTP 200 where 201 or 204 was meant, errors as 200
// {"success":false}, no offsets or delivery attempts, its lease, ack and subscription
// semantics, its bugs included), so that a client can be tested against it without one.
// "" or "2.0" is the default, the 2.0 design. Start (and NewServer, which fails the test)
// refuses any other value with an error naming it.
//
// Without WithCompat, NewServer takes the version from the QUEEN_COMPAT environment variable,
// so that a suite runs against both generations with no change to its code
// (QUEEN_COMPAT=0.15 go test ./...); WithCompat wins over it, WithCompat("") included.
func WithCompat(version string) Option {
	return func(c *config) { c.compat, c.compatFrom = version, "WithCompat" }
}

// compatEnv is the environment variable NewServer reads the Queen version from when no
// WithCompat option is given: "0.15", or "2.0" or empty for the default.
const compatEnv = "QUEEN_COMPAT"

// fromEnvironment is the version compatEnv sets, as an option that WithCompat overrides.
func fromEnvironment() Option {
	return func(c *config) {
		if v, ok := os.LookupEnv(compatEnv); ok && c.compatFrom == "" {
			c.compat, c.compatFrom = v, compatEnv
		}
	}
}
