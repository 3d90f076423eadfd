package queentest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// No request, however malformed, gets a 5xx or a non-JSON error body (R131, R134).
func FuzzEndpoints_NeverServerError(f *testing.F) {
	srv := newServer()
	defer srv.engine.Close()
	h := srv.Handler()
	seed := func(method, path, body string) { f.Add(method, path, body) }
	seed("POST", "/api/v1/push", `{"items":[{"queue":"q","partition":"p","payload":{"a":[1,2]},"traceId":"0b6a3c1e-8c4e-4a8f-9a57-0f1f6a6c0d01"}]}`)
	seed("POST", "/api/v1/configure", `{"queue":"q","options":{"leaseTime":1,"retryLimit":0,"deadLetterQueue":false,"x":{}}}`)
	seed("POST", "/api/v1/ack", `{"transactionId":"t","partitionId":"p","status":"failed","error":"e"}`)
	seed("POST", "/api/v1/ack/batch", `{"consumerGroup":"g","acknowledgments":[{"transactionId":"t","partitionId":"p","leaseId":"l"}]}`)
	seed("POST", "/api/v1/lease/x/extend", `{"seconds":5}`)
	seed("POST", "/api/v1/transaction", `{"operations":[{"type":"ack","transactionId":"t","partitionId":"p"},{"type":"push","items":[{"queue":"q"}]}]}`)
	seed("POST", "/api/v1/consumer-groups/g/queues/q/seek", `{"timestamp":"2026-01-01T00:00:00Z"}`)
	seed("GET", "/api/v1/pop/queue/q?batch=3&partitions=2&consumerGroup=g&subscriptionMode=all&autoAck=1", "")
	seed("GET", "/api/v1/pop?namespace=n&task=t&leaseSeconds=9", "")
	seed("GET", "/api/v1/dlq?queue=q&from=2026-01-01T00:00:00Z&limit=1&offset=2", "")
	seed("DELETE", "/api/v1/consumer-groups/g?deleteMetadata=0", "")
	seed("DELETE", "/api/v1/resources/queues/q", "")
	seed("POST", "/api/v1/dlq/x/replay", "")
	f.Fuzz(func(t *testing.T, method, path, body string) {
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
		req, err := http.NewRequest(method, "http://broker"+path, strings.NewReader(body))
		if err != nil {
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s %q: %d %s", method, path, body, rec.Code, rec.Body)
		}
		if rec.Code >= 400 {
			var e map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || len(e) != 1 || e["error"] == "" {
				t.Fatalf("%s %s: %d with body %q, want {\"error\":...}", method, path, rec.Code, rec.Body)
			}
		}
	})
}
