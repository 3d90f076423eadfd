package refserver

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/testutil"
)

// A panic inside a handler answers 500 {"error":...} and is logged.
func TestAPanicInAHandlerAnswers500AndIsLogged(t *testing.T) {
	t.Parallel()
	var logs testutil.LogBuffer
	h := recoverPanics(slog.New(slog.NewTextHandler(&logs, nil)), http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("engine bug")
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/dlq", nil))
	if rec.Code != http.StatusInternalServerError || rec.Body.String() != `{"error":"internal error"}` {
		t.Fatalf("got %d %s", rec.Code, rec.Body)
	}
	if !strings.Contains(logs.String(), "engine bug") {
		t.Fatalf("the panic was not logged: %s", logs.String())
	}
}

// Unknown paths answer 404 {"error":"not found"}, other methods 405 {"error":"method not allowed"}.
func TestUnknownPathsAnswer404AndOtherMethods405(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	notFound := [][2]string{
		{"GET", "/"},
		{"GET", "/api/v1"},
		{"GET", "/api/v1/status"},
		{"GET", "/api/v1/messages/p0-0"},
		{"GET", "/api/v1/status/queues/q/messages"},
		{"GET", "/api/v1/resources/queues"},
		{"GET", "/api/v1/analytics/queues"},
		{"POST", "/api/v1/consumer-groups/g/queues/q/partitions/p/seek"}, // there is no per-partition seek
		{"GET", "/api/v1/pop/queue"},
		{"GET", "/api/v1/pop/queue/q/partition"},
		{"GET", "/api/v1/pop/queue/q/partition/p/extra"},
		{"POST", "/api/v1/push/"},
		{"GET", "/healthz"},
	}
	for _, rt := range notFound {
		r := c.Do(rt[0], rt[1], "")
		if r.Status != http.StatusNotFound || string(r.Body) != `{"error":"not found"}` {
			t.Errorf("%s %s: %d %s, want 404 not found", rt[0], rt[1], r.Status, r.Body)
		}
	}
	notAllowed := [][2]string{
		{"POST", "/health"},
		{"GET", "/api/v1/push"},
		{"PUT", "/api/v1/configure"},
		{"POST", "/api/v1/pop/queue/q"},
		{"DELETE", "/api/v1/pop"},
		{"GET", "/api/v1/ack"},
		{"GET", "/api/v1/ack/batch"},
		{"GET", "/api/v1/lease/L/extend"},
		{"GET", "/api/v1/transaction"},
		{"POST", "/api/v1/dlq"},
		{"GET", "/api/v1/dlq/id/replay"},
		{"POST", "/api/v1/dlq/id"},
		{"GET", "/api/v1/consumer-groups/g/queues/q/seek"},
		{"POST", "/api/v1/consumer-groups/g"},
		{"GET", "/api/v1/resources/queues/q"},
	}
	for _, rt := range notAllowed {
		r := c.Do(rt[0], rt[1], "")
		if r.Status != http.StatusMethodNotAllowed || string(r.Body) != `{"error":"method not allowed"}` {
			t.Errorf("%s %s: %d %s, want 405 method not allowed", rt[0], rt[1], r.Status, r.Body)
		}
		if r.Header.Get("Allow") == "" {
			t.Errorf("%s %s: 405 without an Allow header", rt[0], rt[1])
		}
	}
}

// Path segments are percent-decoded.
func TestPathSegmentsArePercentDecoded(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.Push(testutil.Item{Queue: "a/b c", Partition: "p/1", TransactionID: "enc"})
	res := c.MustPop("/api/v1/pop/queue/a%2Fb%20c/partition/p%2F1", nil)
	if res.Queue != "a/b c" || res.Partition != "p/1" {
		t.Fatalf("popped from %q/%q", res.Queue, res.Partition)
	}
}

// The API serves no HEAD route. The mux would serve HEAD as GET, so a HEAD pop would
// lease messages whose answer nobody reads; it is refused and leases nothing.
func TestHeadIsNotServed(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.PushN("heads", "p", "h", 1)
	for _, path := range []string{"/api/v1/pop/queue/heads", "/api/v1/pop/queue/heads/partition/p", "/api/v1/dlq"} {
		r := c.Do("HEAD", path, "")
		if r.Status != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "GET" {
			t.Errorf("HEAD %s: %d, Allow %q; want 405, Allow GET", path, r.Status, r.Header.Get("Allow"))
		}
	}
	res := c.MustPop("/api/v1/pop/queue/heads", nil)
	if got := res.Messages[0].DeliveryAttempt; got != 1 {
		t.Errorf("deliveryAttempt after HEAD pops = %d, want 1: a HEAD leased the message", got)
	}
}

// Group deletion and the group reads share a path; other methods there are 405.
func TestGroupPathsServeOnlyTheirMethods(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	r := c.Do("POST", "/api/v1/consumer-groups/g1", "")
	if r.Status != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "DELETE, GET, HEAD" {
		t.Errorf("POST /api/v1/consumer-groups/g1: %d Allow %q, want 405 Allow DELETE, GET, HEAD", r.Status, r.Header.Get("Allow"))
	}
	r = c.Do("POST", "/api/v1/consumer-groups/lagging", "{}")
	if r.Status != http.StatusMethodNotAllowed {
		t.Errorf("POST /api/v1/consumer-groups/lagging: %d, want 405", r.Status)
	}
}

// fuzzSeeds are a request of every route of the route table, with a body where it takes one
// and the query parameters it reads.
var fuzzSeeds = map[route.Route]struct{ query, body string }{
	route.Health:             {},
	route.Push:               {body: `{"items":[{"queue":"q","partition":"p","payload":{"a":[1,2]},"traceId":"0b6a3c1e-8c4e-4a8f-9a57-0f1f6a6c0d01"}]}`},
	route.PopQueue:           {query: "batch=3&partitions=2&consumerGroup=g&subscriptionMode=all&autoAck=1"},
	route.PopPartition:       {query: "consumerGroup=g&subscriptionFrom=2026-01-01T00:00:00Z&leaseSeconds=9"},
	route.PopDiscovery:       {query: "namespace=n&task=t&leaseSeconds=9"},
	route.Ack:                {body: `{"transactionId":"t","partitionId":"p","status":"failed","error":"e"}`},
	route.AckBatch:           {body: `{"consumerGroup":"g","acknowledgments":[{"transactionId":"t","partitionId":"p","leaseId":"l"}]}`},
	route.Extend:             {body: `{"seconds":5}`},
	route.Transaction:        {body: `{"operations":[{"type":"ack","transactionId":"t","partitionId":"p"},{"type":"push","items":[{"queue":"q"}]}]}`},
	route.Configure:          {body: `{"queue":"q","options":{"leaseTime":1,"retryLimit":0,"deadLetterQueue":false,"x":{}}}`},
	route.DeadLetters:        {query: "queue=q&from=2026-01-01T00:00:00Z&limit=1&offset=2"},
	route.ReplayDeadLetter:   {},
	route.DeleteDeadLetter:   {},
	route.Seek:               {body: `{"timestamp":"2026-01-01T00:00:00Z"}`},
	route.DeleteGroup:        {query: "deleteMetadata=0"},
	route.DeleteGroupOnQueue: {query: "deleteMetadata=true"},
	route.DeleteQueue:        {},
	route.QueueList:          {query: "namespace=n&task=t&limit=5&offset=1"},
	route.QueueDetail:        {},
	route.GroupList:          {query: "queue=q"},
	route.Lagging:            {query: "minLagSeconds=0&queue=q&consumerGroup=g"},
	route.GroupDetail:        {query: "queue=q"},
	route.Messages:           {query: "queue=q&partition=p&status=pending&from=2026-01-01T00:00:00Z&order=asc&limit=2&payload=true"},
	route.Message:            {},
	route.Overview:           {},
	route.ResourceQueues:     {},
	route.ResourceQueue:      {},
	route.Namespaces:         {},
	route.Tasks:              {},
	route.Status:             {},
	route.StatusBuffers:      {},
	route.StatusAnalytics:    {},
	route.QueueMessages:      {},
	route.StatsRefresh:       {},
}

// fuzzPath is rt's path with each placeholder filled: a UUID where an id stands.
func fuzzPath(rt route.Route) string {
	var names []string
	for _, seg := range strings.Split(rt.Pattern, "/") {
		switch {
		case seg == "{partitionId}", seg == "{leaseId}", seg == "{id}":
			names = append(names, "0b6a3c1e-8c4e-4a8f-9a57-0f1f6a6c0d01")
		case strings.HasPrefix(seg, "{"):
			names = append(names, strings.Trim(seg, "{}")[:1])
		}
	}
	return rt.Path(names...)
}

// No request, however malformed, panics the broker or gets an error body that is not JSON:
// a 2.0 broker answers no 5xx at all, a 0.15 broker only the 500s a real one
// answers (its JSON library's type errors and std::stoi's), and its HTML 404.
func FuzzEndpoints_NeverServerError(f *testing.F) {
	handlers := map[bool]http.Handler{}
	for _, v015 := range []bool{false, true} {
		opts := []option{}
		if v015 {
			opts = append(opts, withCompat("0.15"))
		}
		srv := unstartedServer(opts...)
		f.Cleanup(func() { _ = srv.Close() })
		handlers[v015] = srv.Handler()
	}
	for _, rt := range route.All {
		seed, ok := fuzzSeeds[rt]
		if !ok {
			f.Fatalf("no seed for %s", rt.Mux())
		}
		path := fuzzPath(rt)
		if seed.query != "" {
			path += "?" + seed.query
		}
		f.Add(false, rt.Method, path, seed.body)
		f.Add(true, rt.Method, path, seed.body)
	}
	f.Fuzz(func(t *testing.T, v015 bool, method, path, body string) {
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \r\n\t#") {
			return
		}
		switch method {
		case "GET", "POST", "DELETE", "PUT":
		default:
			return
		}
		if strings.Contains(path, "wait=") { // keep every pop immediate
			return
		}
		// A 0.15 broker never answers an empty batch ack: the client gives up.
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, method, "http://broker"+path, strings.NewReader(body))
		if err != nil {
			return
		}
		rec := httptest.NewRecorder()
		handlers[v015].ServeHTTP(rec, req)
		if v015 && rec.Code == http.StatusNotFound && rec.Body.String() == notFound015 {
			return
		}
		if rec.Code < 400 {
			return
		}
		var e map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || len(e) != 1 || e["error"] == "" {
			t.Fatalf("%s %s: %d with body %q, want {\"error\":...}", method, path, rec.Code, rec.Body)
		}
		if rec.Code < 500 {
			return
		}
		msg, _ := e["error"].(string)
		if !v015 || !(strings.HasPrefix(msg, "[json.exception.") || msg == "stoi") {
			t.Fatalf("%s %s %q: %d %s", method, path, body, rec.Code, rec.Body)
		}
	})
}
