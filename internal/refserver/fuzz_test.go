package refserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/route"
)

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

// No request, however malformed, panics the broker or gets an error body that is not JSON
// (R131, R134): a 2.0 broker answers no 5xx at all, a 0.15 broker only the 500s a real one
// answers (its JSON library's type errors and std::stoi's), and its HTML 404.
func FuzzEndpoints_NeverServerError(f *testing.F) {
	handlers := map[bool]http.Handler{}
	for _, v015 := range []bool{false, true} {
		opts := []option{}
		if v015 {
			opts = append(opts, withCompat("0.15"))
		}
		srv, _ := newEngine(opts...)
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
