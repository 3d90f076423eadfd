package acceptance

import (
	"net/http"
	"strings"
	"testing"

	"github.com/queenmq/queen-go/queentest"
)

func TestErrorsAndRoutes(t *testing.T) {
	t.Parallel()
	t.Run("auth", func(t *testing.T) {
		b := start(t, queentest.WithToken("s3cret"))
		for name, header := range map[string]string{"none": "", "scheme": "Basic s3cret", "wrong": "Bearer nope", "raw": "s3cret"} {
			t.Run(name, func(t *testing.T) {
				req, _ := http.NewRequest("POST", b.srv.URL()+"/api/v1/push", strings.NewReader(`{"items":[{"queue":"q"}]}`))
				if header != "" {
					req.Header.Set("Authorization", header)
				}
				resp, err := b.hc.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized {
					t.Fatalf("status %d, want 401", resp.StatusCode)
				}
				if got := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
					t.Fatalf("WWW-Authenticate %q", got)
				}
			})
		}
		b.get("/api/v1/push").fails(http.StatusUnauthorized, "Authentication required")
		b.get("/api/v1/status/queues").fails(http.StatusUnauthorized, "Authentication required")
		b.get("/api/v1/nothing-here").fails(http.StatusUnauthorized)
		eq(t, b.get("/health").obj(http.StatusOK), "status", "healthy")
		b.token = "s3cret"
		b.get("/api/v1/status/queues/q").fails(http.StatusNotFound) // the earlier refused push stored nothing
		req, _ := http.NewRequest("GET", b.srv.URL()+"/api/v1/status/queues", nil)
		req.Header.Set("Authorization", "bEaReR s3cret")
		resp, err := b.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("case-insensitive scheme: status %d", resp.StatusCode)
		}
	})
	t.Run("unknown_paths_and_methods", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "p", 1)
		for _, p := range []string{
			"/nope", "/api/v1/resources/queues", "/api/v1/resources/namespaces", "/api/v1/resources/tasks",
			"/api/v1/status", "/api/v1/status/queues/q/messages", "/api/v1/status/analytics", "/api/v1/status/buffers",
			"/api/v1/analytics/x", "/api/v1/stats/refresh", "/metrics", "/metrics/prometheus",
		} {
			t.Run(p, func(t *testing.T) {
				if msg := b.at(t).get(p).fails(http.StatusNotFound); msg != "not found" {
					t.Fatalf("error %q", msg)
				}
			})
		}
		b.post("/api/v1/consumer-groups/g/queues/q/partitions/p/seek", obj{"toEnd": true}).fails(http.StatusNotFound, "not found")
		b.do("PUT", "/api/v1/consumer-groups/g/subscription", obj{}).fails(http.StatusNotFound)
		for _, c := range [][2]string{
			{"GET", "/api/v1/resources/queues/q"}, {"DELETE", "/api/v1/messages/x/y"},
			{"GET", "/api/v1/push"}, {"DELETE", "/api/v1/pop/queue/q"}, {"GET", "/api/v1/ack"},
			{"GET", "/api/v1/ack/batch"}, {"GET", "/api/v1/transaction"}, {"GET", "/api/v1/lease/x/extend"},
			{"POST", "/health"}, {"POST", "/api/v1/dlq"}, {"GET", "/api/v1/dlq/x/replay"},
			{"GET", "/api/v1/configure"}, {"POST", "/api/v1/status/queues"},
		} {
			t.Run(c[0]+c[1], func(t *testing.T) {
				if msg := b.at(t).do(c[0], c[1], nil).fails(http.StatusMethodNotAllowed); msg != "method not allowed" {
					t.Fatalf("error %q", msg)
				}
			})
		}
	})
	t.Run("wrong_json_types", func(t *testing.T) {
		b := start(t)
		for _, c := range [][2]string{
			{"/api/v1/push", `"x"`}, {"/api/v1/configure", `null`}, {"/api/v1/configure", `[]`},
			{"/api/v1/configure", `{"queue":"q","options":[]}`}, {"/api/v1/configure", `{"queue":"q","namespace":1}`},
			{"/api/v1/ack", `{"transactionId":"a","partitionId":"b","consumerGroup":[]}`},
			{"/api/v1/lease/x/extend", `null`},
		} {
			t.Run(c[0]+" "+c[1], func(t *testing.T) { b.at(t).post(c[0], c[1]).fails(http.StatusBadRequest) })
		}
		if msg := b.post("/api/v1/push", `{"items":[}`).fails(http.StatusBadRequest); !strings.HasPrefix(msg, "Invalid JSON: ") {
			t.Fatalf("error %q, want Invalid JSON: <detail>", msg)
		}
		// null counts as absent.
		c := b.post("/api/v1/configure", `{"queue":"q","namespace":null,"options":null}`).obj(http.StatusOK)
		eq(t, c, "namespace", "")
	})
	t.Run("delete_queue", func(t *testing.T) {
		b := start(t)
		b.post("/api/v1/configure", obj{"queue": "q", "options": obj{"retryLimit": 0}}).obj(http.StatusOK)
		b.pushN("q", "p", 2)
		b.failUntilDead("q", "p", "g", "")
		_, ms := b.leased("q", "r", "", 1)
		r := b.del("/api/v1/resources/queues/q").obj(http.StatusOK)
		hasKeys(t, r, "deleted", "queue")
		eq(t, r, "deleted", true)
		eq(t, r, "queue", "q")
		eq(t, b.get("/api/v1/dlq").obj(http.StatusOK), "total", 0)
		eq(t, b.extend(ms[0]["leaseId"].(string), obj{"seconds": 5}), "error", "Lease not found")
		b.del("/api/v1/resources/queues/q").fails(http.StatusNotFound, "queue not found")
		// Recreated, it starts afresh: offsets from 0 and no stored start for g.
		b.pushN("q", "p", 1)
		wantOffsets(t, msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=g&subscriptionMode=all")), 0)
	})
	t.Run("delete_group", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "a", 2)
		b.pushN("q2", "a", 1)
		b.pop("/api/v1/pop/queue/q?consumerGroup=g&subscriptionMode=all")
		p := b.pop("/api/v1/pop/queue/q2?consumerGroup=g&subscriptionMode=all")
		r := b.del("/api/v1/consumer-groups/g/queues/q").obj(http.StatusOK)
		hasKeys(t, r, "success", "consumerGroup", "queueName", "deletedPartitions", "metadataDeleted")
		eq(t, r, "success", true)
		eq(t, r, "queueName", "q")
		eq(t, r, "metadataDeleted", true)
		// Its start is forgotten: a new first pop decides again (new: nothing).
		b.get("/api/v1/pop/queue/q?consumerGroup=g").empty()
		r = b.del("/api/v1/consumer-groups/g?deleteMetadata=false").obj(http.StatusOK)
		hasKeys(t, r, "success", "consumerGroup", "deletedPartitions", "metadataDeleted")
		eq(t, r, "metadataDeleted", false)
		eq(t, b.extend(p["leaseId"].(string), obj{"seconds": 5}), "error", "Lease not found")
		b.del("/api/v1/consumer-groups/never").fails(http.StatusNotFound, "consumer group not found")
		b.del("/api/v1/consumer-groups/never/queues/q").fails(http.StatusNotFound, "consumer group not found")
		b.get("/api/v1/pop/queue/q").obj(http.StatusOK)
		eq(t, b.del("/api/v1/consumer-groups/__QUEUE_MODE__").obj(http.StatusOK), "success", true)
		b.del("/api/v1/consumer-groups/g?deleteMetadata=maybe").fails(http.StatusBadRequest)
	})
	t.Run("health", func(t *testing.T) {
		b := start(t)
		h := b.get("/health").obj(http.StatusOK)
		hasKeys(t, h, "database", "server", "status", "version")
		eq(t, h, "database", "memory")
		eq(t, h, "server", "queen-go reference broker")
		eq(t, h, "status", "healthy")
		eq(t, h, "version", "(devel)") // a test binary of this module has no version
	})
}
