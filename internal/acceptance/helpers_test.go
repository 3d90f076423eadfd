// Package acceptance checks the reference broker from the outside: a real queentest server,
// raw HTTP and JSON, one subtest per rule of the broker's behaviour.
package acceptance

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/queentest"
)

func TestMain(m *testing.M) { testmode.Main(m) }

// obj is a decoded JSON object; JSON numbers decode as float64.
type obj = map[string]any

// broker is a test server plus a raw HTTP client for it.
type broker struct {
	t     *testing.T
	srv   *queentest.Server
	hc    *http.Client
	token string
	// pushOK is a push's success status: 201, or 200 on 0.15.
	pushOK int
}

// start runs a fresh broker on a manual clock, so no rule depends on real time.
func start(t *testing.T, opts ...queentest.Option) *broker {
	t.Helper()
	t.Parallel()
	srv := queentest.NewServer(t, append([]queentest.Option{queentest.WithManualClock()}, opts...)...)
	hc := &http.Client{
		Transport:     &http.Transport{},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	t.Cleanup(hc.CloseIdleConnections)
	return &broker{t: t, srv: srv, hc: hc, pushOK: http.StatusCreated}
}

// reply is one HTTP answer.
type reply struct {
	t      *testing.T
	what   string
	status int
	header http.Header
	body   []byte
}

// do sends method path with body (a string is sent as is, nil sends nothing, anything else is
// encoded as JSON).
func (b *broker) do(method, path string, body any) reply {
	b.t.Helper()
	var r io.Reader
	switch v := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(v)
	case []byte:
		r = bytes.NewReader(v)
	default:
		enc, err := json.Marshal(v)
		if err != nil {
			b.t.Fatalf("encoding %v: %v", v, err)
		}
		r = bytes.NewReader(enc)
	}
	req, err := http.NewRequest(method, b.srv.URL()+path, r)
	if err != nil {
		b.t.Fatalf("building %s %s: %v", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if b.token != "" {
		req.Header.Set("Authorization", "Bearer "+b.token)
	}
	resp, err := b.hc.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatalf("%s %s: reading: %v", method, path, err)
	}
	return reply{t: b.t, what: method + " " + path, status: resp.StatusCode, header: resp.Header, body: data}
}

// at is b for subtest t, so failures stop t and not its parent.
func (b *broker) at(t *testing.T) *broker { c := *b; c.t = t; return &c }

func (b *broker) get(path string) reply            { b.t.Helper(); return b.do("GET", path, nil) }
func (b *broker) post(path string, body any) reply { b.t.Helper(); return b.do("POST", path, body) }
func (b *broker) del(path string) reply            { b.t.Helper(); return b.do("DELETE", path, nil) }

// status fails unless the answer has the status, and returns the answer.
func (r reply) wantStatus(want int) reply {
	r.t.Helper()
	if r.status != want {
		r.t.Fatalf("%s: status %d, want %d; body %s", r.what, r.status, want, r.body)
	}
	return r
}

// jsonType checks that a JSON answer says application/json (0.15 sends the same).
func (r reply) jsonType() {
	r.t.Helper()
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		r.t.Fatalf("%s: Content-Type %q on %s, want application/json", r.what, ct, r.body)
	}
}

// obj checks the status and decodes an object body.
func (r reply) obj(want int) obj {
	r.t.Helper()
	r.wantStatus(want)
	r.jsonType()
	var o obj
	if err := json.Unmarshal(r.body, &o); err != nil {
		r.t.Fatalf("%s: decoding object %s: %v", r.what, r.body, err)
	}
	return o
}

// arr checks the status and decodes an array of objects.
func (r reply) arr(want int) []obj {
	r.t.Helper()
	r.wantStatus(want)
	r.jsonType()
	var a []obj
	if err := json.Unmarshal(r.body, &a); err != nil {
		r.t.Fatalf("%s: decoding array %s: %v", r.what, r.body, err)
	}
	return a
}

// empty checks a 204 with no body.
func (r reply) empty() {
	r.t.Helper()
	r.wantStatus(http.StatusNoContent)
	if len(r.body) != 0 {
		r.t.Fatalf("%s: 204 with body %q", r.what, r.body)
	}
}

// fails checks a 4xx/5xx {"error":"..."} whose text contains each part.
func (r reply) fails(want int, parts ...string) string {
	r.t.Helper()
	o := r.obj(want)
	hasKeys(r.t, o, "error")
	msg, _ := o["error"].(string)
	if msg == "" {
		r.t.Fatalf("%s: error %v is not a non-empty string", r.what, o["error"])
	}
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			r.t.Fatalf("%s: error %q lacks %q", r.what, msg, p)
		}
	}
	return msg
}

// hasKeys fails unless o has exactly the keys.
func hasKeys(t *testing.T, o obj, keys ...string) {
	t.Helper()
	got := make([]string, 0, len(o))
	for k := range o {
		got = append(got, k)
	}
	slices.Sort(got)
	want := slices.Clone(keys)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("keys %v, want %v in %v", got, want, o)
	}
}

// eq fails unless o[key] equals want (ints compare to JSON numbers).
func eq(t *testing.T, o obj, key string, want any) {
	t.Helper()
	got, ok := o[key]
	if !ok {
		t.Fatalf("key %q missing in %v", key, o)
	}
	if n, isInt := want.(int); isInt {
		want = float64(n)
	}
	if got != want {
		t.Fatalf("%s = %#v, want %#v (in %v)", key, got, want, o)
	}
}

func num(t *testing.T, o obj, key string) int {
	t.Helper()
	f, ok := o[key].(float64)
	if !ok {
		t.Fatalf("%s = %#v, want a number (in %v)", key, o[key], o)
	}
	return int(f)
}

func str(t *testing.T, o obj, key string) string {
	t.Helper()
	s, ok := o[key].(string)
	if !ok {
		t.Fatalf("%s = %#v, want a string (in %v)", key, o[key], o)
	}
	return s
}

func sub(t *testing.T, o obj, key string) obj {
	t.Helper()
	s, ok := o[key].(obj)
	if !ok {
		t.Fatalf("%s = %#v, want an object (in %v)", key, o[key], o)
	}
	return s
}

func list(t *testing.T, o obj, key string) []obj {
	t.Helper()
	raw, ok := o[key].([]any)
	if !ok {
		t.Fatalf("%s = %#v, want an array (in %v)", key, o[key], o)
	}
	out := make([]obj, len(raw))
	for i, e := range raw {
		if out[i], ok = e.(obj); !ok {
			t.Fatalf("%s[%d] = %#v, want an object", key, i, e)
		}
	}
	return out
}

// item is a push item in a partition, with a transactionId.
func item(queue, partition, txn string, data any) obj {
	o := obj{"queue": queue, "transactionId": txn}
	if partition != "" {
		o["partition"] = partition
	}
	if data != nil {
		o["payload"] = data
	}
	return o
}

// push pushes the items and requires 201 with one result each.
func (b *broker) push(items ...obj) []obj {
	b.t.Helper()
	res := b.post("/api/v1/push", obj{"items": items}).arr(b.pushOK)
	if len(res) != len(items) {
		b.t.Fatalf("push: %d results for %d items", len(res), len(items))
	}
	return res
}

// pushN pushes n messages t0..t(n-1) to queue/partition.
func (b *broker) pushN(queue, partition string, n int) []obj {
	b.t.Helper()
	items := make([]obj, n)
	for i := range items {
		items[i] = item(queue, partition, partition+"-t"+strconv.Itoa(i), obj{"i": i})
	}
	return b.push(items...)
}

// pop issues a pop and decodes a 200 answer; it fails on any other status.
func (b *broker) pop(path string) obj {
	b.t.Helper()
	return b.get(path).obj(http.StatusOK)
}

// msgs is the messages array of a pop answer.
func msgs(t *testing.T, p obj) []obj { t.Helper(); return list(t, p, "messages") }

// ack sends one ack and returns its single result.
func (b *broker) ack(body obj) obj {
	b.t.Helper()
	res := b.post("/api/v1/ack", body).arr(http.StatusOK)
	if len(res) != 1 {
		b.t.Fatalf("ack: %d results, want 1", len(res))
	}
	return res[0]
}

// ackMsg acks message m of a pop answer with status (and its leaseId unless leaseless).
func (b *broker) ackMsg(m obj, status string, leaseless bool) obj {
	b.t.Helper()
	body := obj{"transactionId": m["transactionId"], "partitionId": m["partitionId"], "status": status}
	if g, _ := m["consumerGroup"].(string); g != "" {
		body["consumerGroup"] = g
	}
	if !leaseless {
		body["leaseId"] = m["leaseId"]
	}
	return b.ack(body)
}

func (b *broker) advance(d time.Duration) { b.srv.Advance(d) }

// offsets lists the messages' offsets.
func offsets(t *testing.T, ms []obj) []int {
	t.Helper()
	out := make([]int, len(ms))
	for i, m := range ms {
		out[i] = num(t, m, "offset")
	}
	return out
}

func wantOffsets(t *testing.T, ms []obj, want ...int) {
	t.Helper()
	if got := offsets(t, ms); !slices.Equal(got, want) {
		t.Fatalf("offsets %v, want %v", got, want)
	}
}

func attempts(t *testing.T, ms []obj) []int {
	t.Helper()
	out := make([]int, len(ms))
	for i, m := range ms {
		out[i] = num(t, m, "deliveryAttempt")
	}
	return out
}

// isTime checks an RFC 3339 UTC timestamp with Z and microseconds.
func isTime(t *testing.T, o obj, key string) time.Time {
	t.Helper()
	s := str(t, o, key)
	ts, err := time.Parse("2006-01-02T15:04:05.000000Z", s)
	if err != nil {
		t.Fatalf("%s = %q: not RFC 3339 UTC with microseconds: %v", key, s, err)
	}
	return ts
}
