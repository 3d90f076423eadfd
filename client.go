package queen

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// Version is the SDK version, sent in the User-Agent header as "queen-go/<Version>".
const Version = "0.1.0"

// Transport defaults, used unless an Option says otherwise.
const (
	defaultRetryMax     = 4
	defaultRetryMinWait = 100 * time.Millisecond
	defaultRetryMaxWait = 5 * time.Second
	defaultHTTPTimeout  = 30 * time.Second
	// pollMargin is added to a long poll's timeout to form its HTTP deadline, so the broker's
	// own "nothing came" answer arrives before the client gives up.
	pollMargin = 5 * time.Second
)

// Client talks to one or more Queen brokers. It is safe for concurrent use; make one per
// process and share it. Close it when done.
//
// Every request carries the token (WithToken) and User-Agent "queen-go/<Version>". Connection
// errors, 429 and 5xx answers are retried (WithRetry) after a jittered exponential backoff
// that ends early when ctx is done, honouring a 429/503 Retry-After up to the maximum wait;
// other 4xx answers are returned at once as *APIError. With several brokers (WithServers),
// requests for one (queue, partition, group) go to the same healthy broker; a broker that
// fails to answer or answers 502/503/504 is skipped for 5s and the retry goes to another.
//
// Which calls are safe to repeat. A push is: every item carries a transactionId, so the broker
// stores a resent item once and answers "duplicate"; if its answer was lost and every resend
// fails too, the error wraps ErrOutcomeUnknown, as the items may be stored. A pop is: a pop whose answer was lost
// leases messages nobody receives, and they come back when that lease expires. A renewal is:
// it never shortens a lease. Acks (Ack, AckBatch, the Message methods), Transaction.Commit,
// and the admin calls that change state (replay, seek, deletes) are not: when their answer is
// lost (the connection dropped after the request was sent, or a timeout), the SDK resends them
// once per retry, and if the resend is refused or fails (an ack finding its lease already
// ended, a replay finding its dead letter gone) the error wraps ErrOutcomeUnknown, with the
// resend's answer, rather than reporting a failure that may have been a success. A 5xx answer
// is retried as usual, and counts as a lost answer too: a proxy's 502 or 504 may follow a
// request the broker applied. Redirects are never followed: a 3xx answer is an *APIError.
type Client struct {
	servers []*server
	token   string
	auth    string // "Bearer <token>", or "" without a token
	logger  *slog.Logger

	pollMargin  time.Duration // added to a long poll's timeout to form its deadline
	tryBound    time.Duration // the http.Client's Timeout: how long a try of another call may take
	maxResponse int64         // the largest answer body read (WithMaxResponseBytes)

	http     *retryablehttp.Client // requests bounded by the http.Client's Timeout
	poll     *retryablehttp.Client // long polls: bounded by their own deadline only
	ownedHTC *http.Client          // the http.Client New made itself, closed by Close

	mu       sync.Mutex
	closed   bool          // Close was called: no new consume loop starts
	done     chan struct{} // closed by Close: consume loops stop
	finished chan struct{} // closed once Close has returned
	shut     atomic.Bool   // Close has returned: every call answers ErrClosed
	loops    sync.WaitGroup
	clock    clock // the time of leases; tests set a manual one before use
	renewer  leaseRenewer
	starts   groupStarts       // "new" groups whose start the broker may not have stored yet
	counters partitionCounters // what the loops know of 0.15 partitions' retry counters

	hooks      hookSet      // WithHooks
	middleware []Middleware // WithMiddleware: around every loop's handler calls
}

// Option configures a Client in New.
type Option func(*clientConfig)

type clientConfig struct {
	servers  []string
	token    string
	hc       *http.Client
	logger   *slog.Logger
	retryMax int
	minWait  time.Duration
	maxWait  time.Duration
	// maxResponse is the largest answer body read.
	maxResponse int64
	err         error // the first invalid option, reported by New

	hooks      hookSet
	middleware []Middleware
}

// WithServers adds more brokers. Requests for the same (queue, partition, group) go to the
// same healthy broker; a broker that fails is skipped for a while and its requests fail over.
// Default: only the base URL given to New.
func WithServers(urls ...string) Option {
	return func(c *clientConfig) { c.servers = append(c.servers, urls...) }
}

// WithToken sends "Authorization: Bearer <token>" with every request. The token never appears
// in a log line or an error. Default: no token.
func WithToken(token string) Option {
	return func(c *clientConfig) { c.token = token }
}

// WithHTTPClient sets the http.Client (transport, TLS, proxies). Its Timeout bounds ordinary
// requests; long polls ignore it and use their own deadline (poll timeout plus a margin).
// Default: a pooled client sized for many concurrent long polls, with a 30s Timeout.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *clientConfig) {
		if hc == nil {
			c.fail(invalidOption("httpClient", "nil", "must not be nil"))
		}
		c.hc = hc
	}
}

// WithLogger sets the logger for retries, failovers, consume loop troubles and other events.
// Default: warnings and errors go to slog.Default() (as it is when each is logged), so a
// broker the client cannot reach is never silent.
func WithLogger(l *slog.Logger) Option {
	return func(c *clientConfig) {
		if l == nil {
			c.fail(invalidOption("logger", "nil", "must not be nil"))
		}
		c.logger = l
	}
}

// WithRetry sets how often a request is retried on connection errors, 429 and 5xx (never on
// other 4xx), waiting a jittered exponential backoff from minWait up to maxWait between
// attempts. max 0 disables retries (the waits are then ignored). Default: 4 retries, 100ms to 5s.
func WithRetry(max int, minWait, maxWait time.Duration) Option {
	return func(c *clientConfig) {
		switch {
		case max < 0:
			c.fail(invalidOption("retry.max", max, "must not be negative"))
		case max == 0: // no retries: the waits do not matter
			minWait, maxWait = time.Millisecond, time.Millisecond
		case minWait <= 0:
			c.fail(invalidOption("retry.minWait", minWait, "must be positive"))
		case maxWait < minWait:
			c.fail(invalidOption("retry.maxWait", maxWait, "must be at least minWait"))
		}
		c.retryMax, c.minWait, c.maxWait = max, minWait, maxWait
	}
}

func (c *clientConfig) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// New makes a Client for the broker at baseURL (for example "http://127.0.0.1:6632").
// It validates the URLs and options and makes no network call.
func New(baseURL string, opts ...Option) (*Client, error) {
	cfg := clientConfig{
		servers:     []string{baseURL},
		logger:      slog.New(warnToDefault{}),
		retryMax:    defaultRetryMax,
		minWait:     defaultRetryMinWait,
		maxWait:     defaultRetryMaxWait,
		maxResponse: defaultMaxResponseBytes,
	}
	for _, opt := range opts {
		opt(&cfg)
	}
	if cfg.err != nil {
		return nil, cfg.err
	}
	if strings.ContainsAny(cfg.token, "\r\n") {
		return nil, fmt.Errorf("%w: token: must not contain line breaks", ErrInvalidOption)
	}
	c := &Client{token: cfg.token, logger: cfg.logger, done: make(chan struct{}),
		finished: make(chan struct{}), pollMargin: pollMargin,
		hooks: cfg.hooks, middleware: cfg.middleware, maxResponse: cfg.maxResponse}
	c.hooks.logger = cfg.logger
	c.clock = realClock{}
	c.renewer.client = c
	if cfg.token != "" {
		c.auth = "Bearer " + cfg.token
	}
	for _, raw := range cfg.servers {
		s, err := parseServer(raw)
		if err != nil {
			return nil, err
		}
		c.servers = append(c.servers, s)
	}
	hc := cfg.hc
	if hc == nil {
		hc = defaultHTTPClient()
		c.ownedHTC = hc
	}
	// Copies that send through hc as it is at each request, but never follow a redirect.
	mainHC := *hc
	c.tryBound = hc.Timeout
	mainHC.Transport, mainHC.CheckRedirect = liveTransport{hc: hc, auth: c.auth}, refuseRedirect
	pollHC := mainHC
	pollHC.Timeout = 0
	c.http = c.newRetryClient(&mainHC, cfg)
	c.poll = c.newRetryClient(&pollHC, cfg)
	return c, nil
}

// parseServer checks one broker URL: absolute http(s), a host, no query or fragment.
func parseServer(raw string) (*server, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: server URL %q: %v", ErrInvalidOption, raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, invalidOption("server URL", raw, "scheme must be http or https")
	}
	if u.Host == "" {
		return nil, invalidOption("server URL", raw, "needs a host")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, invalidOption("server URL", raw, "must not have a query or fragment")
	}
	u.User = nil
	base := strings.TrimSuffix(u.String(), "/")
	parsed, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("%w: server URL %q: %v", ErrInvalidOption, raw, err)
	}
	return &server{base: base, parsed: parsed, host: u.Host}, nil
}

// defaultHTTPClient keeps enough idle connections per broker for many concurrent long polls.
// When the program has replaced http.DefaultTransport (a proxy, a test double such as
// httpmock.Activate), requests go through the replacement, as with a plain http.Client.
func defaultHTTPClient() *http.Client {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return &http.Client{Transport: http.DefaultTransport, Timeout: defaultHTTPTimeout}
	}
	pooled := t.Clone()
	pooled.MaxIdleConns = 1024
	pooled.MaxIdleConnsPerHost = 512
	pooled.IdleConnTimeout = 90 * time.Second
	return &http.Client{Transport: pooled, Timeout: defaultHTTPTimeout}
}

// liveTransport sends through hc's Transport as it is when each request leaves, so the long-poll
// copy of a caller's http.Client follows later changes to it (a test double set after New).
// It writes the client's headers on each request as it leaves: written before, http.Client
// would copy them for every request, for the redirects it is told to refuse.
type liveTransport struct {
	hc   *http.Client
	auth string // the Authorization header's value, or "" without a token
}

func (l liveTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	// The request's own header, made for it; a retry sends the request again as it is.
	if h := r.Header; h["User-Agent"] == nil {
		// The values are the request's own too, in one array (its attempt's, when it has one),
		// so that a transport further down that edits one in place edits nothing else. The
		// keys are already canonical.
		var vals *[4]string
		if a := attemptOf(r.Context()); a != nil {
			vals = &a.headers
		} else {
			vals = new([4]string)
		}
		*vals = [...]string{userAgent, "application/json", "application/json", l.auth}
		h["User-Agent"], h["Accept"] = vals[0:1:1], vals[1:2:2]
		if r.Body != nil && r.Body != http.NoBody {
			h["Content-Type"] = vals[2:3:3]
		}
		if l.auth != "" {
			h["Authorization"] = vals[3:4:4]
		}
	}
	if t := l.hc.Transport; t != nil {
		return t.RoundTrip(r)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// Close stops every consume loop of this client (waiting until each has returned, with its
// last acks sent) and the lease renewer. Calls made after Close returns answer ErrClosed.
// Close is idempotent and returns nil; a second call waits for the first to finish.
//
// Close is bounded: running handlers get each loop's ShutdownTimeout, and an ack that gets no
// answer is sent again for at most 5s more, so Close returns within ShutdownTimeout plus 10s
// even when the broker answers nothing, as long as the handlers return when their ctx is
// cancelled (a handler that does not is logged every 10s, and Close waits for it). Each ack it
// gave up on is logged at error level; those messages are delivered again once their lease
// has run out. Shutdown(ctx) returns at ctx's end at the latest.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		<-c.finished
		return nil
	}
	c.closed = true
	close(c.done)
	c.mu.Unlock()

	// Stopping loops still send their last acks and releases, so requests are refused only
	// once every loop has returned.
	c.loops.Wait()
	c.renewer.stop()
	c.shut.Store(true)
	if c.ownedHTC != nil {
		c.ownedHTC.CloseIdleConnections()
	}
	close(c.finished)
	return nil
}

// Shutdown is Close bounded by ctx: it stops every consume loop and returns nil once they
// have all returned, or ctx's error if some still run when ctx ends (a handler that ignores
// its ctx, say). Those keep stopping in the background; Close waits for them.
func (c *Client) Shutdown(ctx context.Context) error {
	closed := make(chan struct{})
	go func() {
		_ = c.Close()
		close(closed)
	}()
	select {
	case <-closed:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// isClosed reports whether Close has finished; requests are then refused with ErrClosed.
func (c *Client) isClosed() bool { return c.shut.Load() }

// startLoop registers a consume loop. done closes when Close is called; the loop calls
// finish once it has fully returned, and Close waits for that.
func (c *Client) startLoop() (done <-chan struct{}, finish func(), err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, nil, ErrClosed
	}
	c.loops.Add(1)
	var once sync.Once
	return c.done, func() { once.Do(c.loops.Done) }, nil
}

// Do sends one request to the broker with the client's auth, retries and failover, for the
// endpoints the SDK does not wrap. path is the escaped path ("/api/v1/dlq"); in, when not nil,
// is sent as JSON (a json.RawMessage or []byte as is). A non-2xx answer is an *APIError. A 2xx
// body is decoded into out when out is not nil (out may be *json.RawMessage); a 204 or an
// empty body leaves out untouched.
//
// A call other than GET or HEAD whose answer was lost (the connection dropped after the
// request was sent, or a timeout) is resent, and if the resend fails too the error wraps
// ErrOutcomeUnknown: the first request may have been applied.
func (c *Client) Do(ctx context.Context, method, path string, query url.Values, in, out any) error {
	req := request{method: method, path: path, once: method != http.MethodGet && method != http.MethodHead}
	if len(query) > 0 {
		req.rawQuery = query.Encode()
	}
	switch v := in.(type) {
	case nil:
	case json.RawMessage:
		req.body = v
	case []byte:
		req.body = v
	default:
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("queen: %s %s: encode body: %w", method, path, err)
		}
		req.body = b
	}
	buf := getBuffer()
	defer putBuffer(buf)
	status, err := c.send(ctx, &req, buf)
	if err != nil {
		return err
	}
	if out == nil || status == http.StatusNoContent || buf.Len() == 0 {
		return nil
	}
	if err := json.Unmarshal(buf.Bytes(), out); err != nil {
		return fmt.Errorf("queen: %s %s: decode answer: %w", method, path, err)
	}
	return nil
}

// discardBody drains and closes a response body so its connection can be reused.
func discardBody(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, 1<<20))
	_ = body.Close()
}

// refuseRedirect makes a 3xx answer the call's answer: a redirected POST could be applied
// twice, or to the wrong route, so it becomes an *APIError instead.
func refuseRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
