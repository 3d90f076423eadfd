package queentest

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// client speaks raw HTTP to a test broker.
type client struct {
	t     testing.TB
	base  string
	hc    *http.Client
	token string
}

func newClient(t testing.TB, srv *Server) *client {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	t.Cleanup(hc.CloseIdleConnections)
	return &client{t: t, base: srv.URL(), hc: hc}
}

// start is NewServer plus a client for it.
func start(t testing.TB, opts ...Option) (*Server, *client) {
	t.Helper()
	srv := NewServer(t, opts...)
	return srv, newClient(t, srv)
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends one request; body "" sends none.
func (c *client) do(method, path, body string) response {
	c.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, r)
	if err != nil {
		c.t.Fatalf("building %s %s: %v", method, path, err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s %s: reading body: %v", method, path, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

func (c *client) get(path string) response { c.t.Helper(); return c.do("GET", path, "") }
func (c *client) post(path string, body any) response {
	c.t.Helper()
	return c.do("POST", path, jsonText(c.t, body))
}
func (c *client) delete(path string) response { c.t.Helper(); return c.do("DELETE", path, "") }

// jsonText passes strings through and encodes anything else.
func jsonText(t testing.TB, v any) string {
	t.Helper()
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encoding %v: %v", v, err)
	}
	return string(b)
}

// want checks the status and decodes the JSON body into out (when out is not nil).
func (r response) want(t testing.TB, status int, out any) response {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	if out != nil {
		if m, ok := out.(*map[string]any); ok {
			*m = nil // decode afresh: Unmarshal would merge into a reused map
		}
		if err := json.Unmarshal(r.body, out); err != nil {
			t.Fatalf("decoding %s: %v", r.body, err)
		}
	}
	return r
}

// wantError checks a 4xx/5xx {"error":...} body whose text contains each of parts.
func (r response) wantError(t testing.TB, status int, parts ...string) {
	t.Helper()
	var body map[string]any
	r.want(t, status, &body)
	if len(body) != 1 {
		t.Fatalf("error body %s: want exactly the key error", r.body)
	}
	msg, ok := body["error"].(string)
	if !ok || msg == "" {
		t.Fatalf("error body %s: error must be a non-empty string", r.body)
	}
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Fatalf("error %q does not mention %q", msg, p)
		}
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q, want application/json", ct)
	}
}

// Wire shapes of the broker's answers, decoded loosely.
type pushResult struct {
	Index         int     `json:"index"`
	TransactionID string  `json:"transaction_id"`
	Status        string  `json:"status"`
	MessageID     string  `json:"message_id"`
	PartitionID   string  `json:"partition_id"`
	TraceID       *string `json:"trace_id"`
	QueueName     string  `json:"queueName"`
	Offset        int64   `json:"offset"`
}

type popMessage struct {
	ID              string          `json:"id"`
	TransactionID   string          `json:"transactionId"`
	TraceID         *string         `json:"traceId"`
	Data            json.RawMessage `json:"data"`
	CreatedAt       string          `json:"createdAt"`
	PartitionID     string          `json:"partitionId"`
	Partition       string          `json:"partition"`
	LeaseID         string          `json:"leaseId"`
	ConsumerGroup   string          `json:"consumerGroup"`
	Offset          int64           `json:"offset"`
	DeliveryAttempt int             `json:"deliveryAttempt"`
}

type popResult struct {
	Success           bool         `json:"success"`
	Queue             string       `json:"queue"`
	Partition         string       `json:"partition"`
	PartitionID       string       `json:"partitionId"`
	LeaseID           string       `json:"leaseId"`
	ConsumerGroup     string       `json:"consumerGroup"`
	PartitionsClaimed int          `json:"partitionsClaimed"`
	Messages          []popMessage `json:"messages"`
}

type ackResult struct {
	Index         int     `json:"index"`
	TransactionID string  `json:"transactionId"`
	Success       bool    `json:"success"`
	Error         *string `json:"error"`
	QueueName     *string `json:"queueName"`
	PartitionName *string `json:"partitionName"`
	LeaseReleased bool    `json:"leaseReleased"`
	DLQ           bool    `json:"dlq"`
}

type extendResult struct {
	Index     int     `json:"index"`
	LeaseID   string  `json:"leaseId"`
	Success   bool    `json:"success"`
	Error     *string `json:"error"`
	ExpiresAt *string `json:"expiresAt"`
}

type deadLetter struct {
	ID            string          `json:"id"`
	MessageID     string          `json:"messageId"`
	TransactionID string          `json:"transactionId"`
	PartitionID   string          `json:"partitionId"`
	Queue         string          `json:"queue"`
	Partition     string          `json:"partition"`
	ConsumerGroup string          `json:"consumerGroup"`
	ErrorMessage  string          `json:"errorMessage"`
	RetryCount    int             `json:"retryCount"`
	Data          json.RawMessage `json:"data"`
	CreatedAt     string          `json:"createdAt"`
	FailedAt      string          `json:"failedAt"`
}

type dlqPage struct {
	Messages   []deadLetter `json:"messages"`
	Pagination struct {
		Limit  int64 `json:"limit"`
		Offset int   `json:"offset"`
	} `json:"pagination"`
	Total int `json:"total"`
}

// item is one push item; empty fields are left out.
type item struct {
	Queue         string `json:"queue"`
	Partition     string `json:"partition,omitempty"`
	Payload       any    `json:"payload,omitempty"`
	TransactionID string `json:"transactionId,omitempty"`
	TraceID       string `json:"traceId,omitempty"`
}

// push stores items and returns their results (201, R10).
func (c *client) push(items ...item) []pushResult {
	c.t.Helper()
	var out []pushResult
	c.post("/api/v1/push", map[string]any{"items": items}).want(c.t, http.StatusCreated, &out)
	if len(out) != len(items) {
		c.t.Fatalf("push of %d items answered %d results", len(items), len(out))
	}
	return out
}

// pushN pushes n messages {"n":i} to queue/partition with transactionIds prefix-i.
func (c *client) pushN(queue, partition, prefix string, n int) []pushResult {
	c.t.Helper()
	items := make([]item, n)
	for i := range items {
		items[i] = item{Queue: queue, Partition: partition, Payload: map[string]int{"n": i}, TransactionID: prefix + "-" + itoa(i)}
	}
	return c.push(items...)
}

// pop GETs a pop route; it returns nil for a 204 and fails on anything but 200 or 204.
func (c *client) pop(path string, params url.Values) *popResult {
	c.t.Helper()
	if len(params) > 0 {
		path += "?" + params.Encode()
	}
	r := c.get(path)
	switch r.status {
	case http.StatusNoContent:
		if len(r.body) != 0 {
			c.t.Fatalf("204 with a body: %q", r.body)
		}
		return nil
	case http.StatusOK:
		var out popResult
		r.want(c.t, http.StatusOK, &out)
		return &out
	}
	c.t.Fatalf("GET %s: status %d, body %s", path, r.status, r.body)
	return nil
}

// mustPop pops and fails when nothing came.
func (c *client) mustPop(path string, params url.Values) *popResult {
	c.t.Helper()
	res := c.pop(path, params)
	if res == nil || len(res.Messages) == 0 {
		c.t.Fatalf("GET %s?%s: nothing popped", path, params.Encode())
	}
	return res
}

func (c *client) ackBatch(body any) []ackResult {
	c.t.Helper()
	var out []ackResult
	c.post("/api/v1/ack/batch", body).want(c.t, http.StatusOK, &out)
	return out
}

// ackAll acks every message of a pop with status, under its lease.
func (c *client) ackAll(res *popResult, group, status string) []ackResult {
	c.t.Helper()
	acks := make([]map[string]any, len(res.Messages))
	for i, m := range res.Messages {
		acks[i] = map[string]any{"transactionId": m.TransactionID, "partitionId": m.PartitionID, "leaseId": m.LeaseID, "status": status}
	}
	body := map[string]any{"acknowledgments": acks}
	if group != "" {
		body["consumerGroup"] = group
	}
	out := c.ackBatch(body)
	for i, a := range out {
		if !a.Success {
			c.t.Fatalf("ack %d of %d refused: %v", i, len(out), deref(a.Error))
		}
	}
	return out
}

func (c *client) dlq(params url.Values) dlqPage {
	c.t.Helper()
	var page dlqPage
	path := "/api/v1/dlq"
	if len(params) > 0 {
		path += "?" + params.Encode()
	}
	c.get(path).want(c.t, http.StatusOK, &page)
	return page
}

func q(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func itoa(i int) string { return strconv.Itoa(i) }

// wantKeys checks that the object m has exactly the keys want.
func wantKeys(t testing.TB, what string, m map[string]any, want ...string) {
	t.Helper()
	got := slices.Sorted(maps.Keys(m))
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s keys = %v, want %v", what, got, want)
	}
}

// wantTime checks §2.1's written timestamp: RFC 3339 UTC, Z, exactly six fractional digits.
func wantTime(t testing.TB, what string, v any) time.Time {
	t.Helper()
	s, ok := v.(string)
	if !ok {
		t.Fatalf("%s = %v, want a timestamp string", what, v)
	}
	if len(s) != len("2026-11-29T21:33:13.427069Z") || s[len(s)-1] != 'Z' || s[19] != '.' {
		t.Fatalf("%s = %q, want RFC 3339 UTC with 6 fractional digits", what, s)
	}
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("%s = %q: %v", what, s, err)
	}
	return ts
}

// eventually waits, without sleeping, until cond holds: it re-checks each time the
// broker's state may have changed, yielding the processor in between, up to a real deadline.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		case <-tick.C:
		}
	}
}
