package testutil

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

	"github.com/queenmq/queen-go/internal/route"
)

// Client speaks raw HTTP and JSON to a broker under test, so that a test sees every status,
// header and byte the broker answers.
type Client struct {
	T     testing.TB
	Base  string // the broker's base URL
	HC    *http.Client
	Token string // sent as "Authorization: Bearer <Token>" when set
}

// NewClient is a Client of the broker at base, its connections closed when the test ends.
func NewClient(t testing.TB, base string) *Client {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	t.Cleanup(hc.CloseIdleConnections)
	return &Client{T: t, Base: base, HC: hc}
}

// Response is one answer, read whole.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends one request; body "" sends none.
func (c *Client) Do(method, path, body string) Response {
	c.T.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.Base+path, r)
	if err != nil {
		c.T.Fatalf("building %s %s: %v", method, path, err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.HC.Do(req)
	if err != nil {
		c.T.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.T.Fatalf("%s %s: reading body: %v", method, path, err)
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// Get sends a GET.
func (c *Client) Get(path string) Response { c.T.Helper(); return c.Do("GET", path, "") }

// Post sends body, a string as is or anything else encoded as JSON.
func (c *Client) Post(path string, body any) Response {
	c.T.Helper()
	return c.Do("POST", path, JSONText(c.T, body))
}

// Delete sends a DELETE.
func (c *Client) Delete(path string) Response { c.T.Helper(); return c.Do("DELETE", path, "") }

// JSONText passes strings through and encodes anything else.
func JSONText(t testing.TB, v any) string {
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

// Want checks the status and decodes the JSON body into out (when out is not nil).
func (r Response) Want(t testing.TB, status int, out any) Response {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body %s", r.Status, status, r.Body)
	}
	if out != nil {
		if m, ok := out.(*map[string]any); ok {
			*m = nil // decode afresh: Unmarshal would merge into a reused map
		}
		if err := json.Unmarshal(r.Body, out); err != nil {
			t.Fatalf("decoding %s: %v", r.Body, err)
		}
	}
	return r
}

// WantError checks a 4xx or 5xx {"error":...} body whose text contains each of parts.
func (r Response) WantError(t testing.TB, status int, parts ...string) {
	t.Helper()
	var body map[string]any
	r.Want(t, status, &body)
	if len(body) != 1 {
		t.Fatalf("error body %s: want exactly the key error", r.Body)
	}
	msg, ok := body["error"].(string)
	if !ok || msg == "" {
		t.Fatalf("error body %s: error must be a non-empty string", r.Body)
	}
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Fatalf("error %q does not mention %q", msg, p)
		}
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q, want application/json", ct)
	}
}

// The broker's answers, decoded loosely: a 0.15 broker's snake_case push keys are the ones
// read, and a member it leaves out decodes as zero.

// PushResult is one pushed item's result.
type PushResult struct {
	Index         int     `json:"index"`
	TransactionID string  `json:"transaction_id"`
	Status        string  `json:"status"`
	MessageID     string  `json:"message_id"`
	PartitionID   string  `json:"partition_id"`
	TraceID       *string `json:"trace_id"`
	QueueName     string  `json:"queueName"`
	Offset        int64   `json:"offset"`
}

// PopMessage is one popped message.
type PopMessage struct {
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

// PopResult is a pop's answer.
type PopResult struct {
	Success           bool         `json:"success"`
	Queue             string       `json:"queue"`
	Partition         string       `json:"partition"`
	PartitionID       string       `json:"partitionId"`
	LeaseID           string       `json:"leaseId"`
	ConsumerGroup     string       `json:"consumerGroup"`
	PartitionsClaimed int          `json:"partitionsClaimed"`
	Messages          []PopMessage `json:"messages"`
}

// AckResult is one ack's result.
type AckResult struct {
	Index         int     `json:"index"`
	TransactionID string  `json:"transactionId"`
	Success       bool    `json:"success"`
	Error         *string `json:"error"`
	QueueName     *string `json:"queueName"`
	PartitionName *string `json:"partitionName"`
	LeaseReleased bool    `json:"leaseReleased"`
	DLQ           bool    `json:"dlq"`
}

// ExtendResult is a lease extension's result.
type ExtendResult struct {
	Index     int     `json:"index"`
	LeaseID   string  `json:"leaseId"`
	Success   bool    `json:"success"`
	Error     *string `json:"error"`
	ExpiresAt *string `json:"expiresAt"`
}

// DeadLetter is one entry of the dead-letter list.
type DeadLetter struct {
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

// DLQPage is one page of the dead-letter list.
type DLQPage struct {
	Messages   []DeadLetter `json:"messages"`
	Pagination struct {
		Limit  int64 `json:"limit"`
		Offset int   `json:"offset"`
	} `json:"pagination"`
	Total int `json:"total"`
}

// Item is one push item; empty fields are left out.
type Item struct {
	Queue         string `json:"queue"`
	Partition     string `json:"partition,omitempty"`
	Payload       any    `json:"payload,omitempty"`
	TransactionID string `json:"transactionId,omitempty"`
	TraceID       string `json:"traceId,omitempty"`
}

// Push stores items and returns their results, failing the test unless the broker answers 201.
func (c *Client) Push(items ...Item) []PushResult {
	c.T.Helper()
	var out []PushResult
	c.Post(route.Push.Path(), map[string]any{"items": items}).Want(c.T, http.StatusCreated, &out)
	if len(out) != len(items) {
		c.T.Fatalf("push of %d items answered %d results", len(items), len(out))
	}
	return out
}

// PushN pushes n messages {"n":i} to queue/partition with transactionIds prefix-i.
func (c *Client) PushN(queue, partition, prefix string, n int) []PushResult {
	c.T.Helper()
	items := make([]Item, n)
	for i := range items {
		items[i] = Item{Queue: queue, Partition: partition, Payload: map[string]int{"n": i}, TransactionID: prefix + "-" + strconv.Itoa(i)}
	}
	return c.Push(items...)
}

// Pop GETs a pop route; it returns nil for a 204 and fails on anything but 200 or 204.
func (c *Client) Pop(path string, params url.Values) *PopResult {
	c.T.Helper()
	if len(params) > 0 {
		path += "?" + params.Encode()
	}
	r := c.Get(path)
	switch r.Status {
	case http.StatusNoContent:
		if len(r.Body) != 0 {
			c.T.Fatalf("204 with a body: %q", r.Body)
		}
		return nil
	case http.StatusOK:
		var out PopResult
		r.Want(c.T, http.StatusOK, &out)
		return &out
	}
	c.T.Fatalf("GET %s: status %d, body %s", path, r.Status, r.Body)
	return nil
}

// MustPop pops and fails when nothing came.
func (c *Client) MustPop(path string, params url.Values) *PopResult {
	c.T.Helper()
	res := c.Pop(path, params)
	if res == nil || len(res.Messages) == 0 {
		c.T.Fatalf("GET %s?%s: nothing popped", path, params.Encode())
	}
	return res
}

// AckBatch posts a batch ack and returns its results, failing the test unless it answers 200.
func (c *Client) AckBatch(body any) []AckResult {
	c.T.Helper()
	var out []AckResult
	c.Post(route.AckBatch.Path(), body).Want(c.T, http.StatusOK, &out)
	return out
}

// AckAll acks every message of a pop with status, under its lease, and fails the test when
// one is refused.
func (c *Client) AckAll(res *PopResult, group, status string) []AckResult {
	c.T.Helper()
	acks := make([]map[string]any, len(res.Messages))
	for i, m := range res.Messages {
		acks[i] = map[string]any{"transactionId": m.TransactionID, "partitionId": m.PartitionID, "leaseId": m.LeaseID, "status": status}
	}
	body := map[string]any{"acknowledgments": acks}
	if group != "" {
		body["consumerGroup"] = group
	}
	out := c.AckBatch(body)
	for i, a := range out {
		if !a.Success {
			c.T.Fatalf("ack %d of %d refused: %v", i, len(out), Deref(a.Error))
		}
	}
	return out
}

// DLQ reads one page of the dead-letter list.
func (c *Client) DLQ(params url.Values) DLQPage {
	c.T.Helper()
	var page DLQPage
	path := route.DeadLetters.Path()
	if len(params) > 0 {
		path += "?" + params.Encode()
	}
	c.Get(path).Want(c.T, http.StatusOK, &page)
	return page
}

// Query is the query parameters of name, value pairs.
func Query(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

// Deref is *s, or "<nil>".
func Deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// WantKeys checks that the object m has exactly the keys want.
func WantKeys(t testing.TB, what string, m map[string]any, want ...string) {
	t.Helper()
	got := slices.Sorted(maps.Keys(m))
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s keys = %v, want %v", what, got, want)
	}
}

// WantTime checks a written timestamp: RFC 3339 UTC, Z, exactly six fractional digits.
func WantTime(t testing.TB, what string, v any) time.Time {
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

// Eventually waits, without sleeping, until cond holds: it re-checks every millisecond,
// yielding the processor in between, and fails the test after Timeout.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(Timeout)
	defer deadline.Stop()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			t.Fatalf("timed out after %s waiting for %s", Timeout, what)
		case <-tick.C:
		}
	}
}
