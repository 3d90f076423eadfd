package acceptance

import (
	"net/http"
	"strings"
	"testing"
)

var pushResultKeys = []string{"index", "transaction_id", "status", "message_id", "partition_id", "trace_id", "queueName", "offset"}

func TestPush(t *testing.T) {
	t.Parallel()
	t.Run("shape_and_Default_partition", func(t *testing.T) {
		b := start(t)
		res := b.push(item("q", "", "a", obj{"n": 1}), obj{"queue": "q", "partition": nil, "transactionId": "b"}, obj{"queue": "q", "partition": "", "transactionId": "c"})
		for i, r := range res {
			hasKeys(t, r, pushResultKeys...)
			eq(t, r, "index", i)
			eq(t, r, "status", "queued")
			eq(t, r, "queueName", "q")
			eq(t, r, "offset", i)
			eq(t, r, "trace_id", nil)
			if r["partition_id"] != res[0]["partition_id"] {
				t.Fatalf("item %d in another partition: %v", i, r)
			}
		}
		p := b.pop("/api/v1/pop/queue/q/partition/Default?batch=10")
		wantOffsets(t, msgs(t, p), 0, 1, 2)
	})
	t.Run("duplicates_keep_all_keys", func(t *testing.T) {
		b := start(t)
		first := b.push(item("q", "p", "a", 1))[0]
		res := b.push(item("q", "p", "a", 2), item("q", "p", "x", 3), item("q", "p", "x", 4), item("q", "other", "a", 5))
		hasKeys(t, res[0], pushResultKeys...)
		eq(t, res[0], "status", "duplicate")
		eq(t, res[0], "message_id", first["message_id"])
		eq(t, res[0], "partition_id", first["partition_id"])
		eq(t, res[0], "offset", 0)
		eq(t, res[1], "status", "queued")
		eq(t, res[1], "offset", 1) // the duplicate consumed no offset
		hasKeys(t, res[2], pushResultKeys...)
		eq(t, res[2], "status", "duplicate")
		eq(t, res[2], "offset", 1)
		eq(t, res[3], "status", "queued") // Same transactionId, another partition
		eq(t, res[3], "offset", 0)
	})
	t.Run("missing_transactionId_gets_uuid", func(t *testing.T) {
		b := start(t)
		res := b.push(obj{"queue": "q"}, obj{"queue": "q", "transactionId": nil}, obj{"queue": "q", "transactionId": ""})
		seen := map[string]bool{}
		for _, r := range res {
			id := str(t, r, "transaction_id")
			if len(id) != 36 || strings.Count(id, "-") != 4 || seen[id] {
				t.Fatalf("transaction_id %q: want a fresh UUID", id)
			}
			seen[id] = true
			eq(t, r, "status", "queued")
		}
	})
	t.Run("empty_items", func(t *testing.T) {
		b := start(t)
		r := b.post("/api/v1/push", `{"items":[]}`).wantStatus(http.StatusCreated)
		if strings.TrimSpace(string(r.body)) != "[]" {
			t.Fatalf("body %s, want []", r.body)
		}
	})
	t.Run("validation_all_or_nothing", func(t *testing.T) {
		b := start(t)
		bad := map[string]string{
			"not object":         `[]`,
			"items absent":       `{}`,
			"items not array":    `{"items":{}}`,
			"item not object":    `{"items":[{"queue":"q"},1]}`,
			"queue absent":       `{"items":[{"queue":"q"},{}]}`,
			"queue not string":   `{"items":[{"queue":"q"},{"queue":1}]}`,
			"queue empty":        `{"items":[{"queue":"q"},{"queue":""}]}`,
			"partition number":   `{"items":[{"queue":"q"},{"queue":"q","partition":1}]}`,
			"transactionId bool": `{"items":[{"queue":"q"},{"queue":"q","transactionId":true}]}`,
			"traceId number":     `{"items":[{"queue":"q"},{"queue":"q","traceId":7}]}`,
			"traceId not uuid":   `{"items":[{"queue":"q"},{"queue":"q","traceId":"abc"}]}`,
			"traceId braces":     `{"items":[{"queue":"q"},{"queue":"q","traceId":"{9f1c3c4e-6b7a-4c1d-9e2f-0a1b2c3d4e5f}"}]}`,
			"empty body":         ``,
			"not json":           `{"items":`,
			"null body":          `null`,
		}
		for name, body := range bad {
			t.Run(name, func(t *testing.T) {
				b.at(t).do("POST", "/api/v1/push", body).fails(http.StatusBadRequest)
			})
		}
		b.get("/api/v1/pop/queue/q?batch=10").empty()
		b.get("/api/v1/status/queues/q").fails(http.StatusNotFound)
		if msg := b.post("/api/v1/push", `{}`).fails(http.StatusBadRequest); msg != "items array is required" {
			t.Errorf("items absent: error %q, want the 0.15 text", msg)
		}
	})
	t.Run("traceId_and_payload_kept", func(t *testing.T) {
		b := start(t)
		tr := "9f1c3c4e-6b7a-4c1d-9e2f-0a1b2c3d4e5f"
		res := b.push(obj{"queue": "q", "transactionId": "a", "traceId": tr, "payload": []any{1, "x", nil}}, obj{"queue": "q", "transactionId": "b"}, obj{"queue": "q", "transactionId": "c", "payload": nil})
		eq(t, res[0], "trace_id", tr)
		ms := msgs(t, b.pop("/api/v1/pop/queue/q?batch=3"))
		eq(t, ms[0], "traceId", tr)
		if got := ms[0]["data"].([]any); len(got) != 3 || got[1] != "x" || got[2] != nil {
			t.Fatalf("data %v", ms[0]["data"])
		}
		if d, ok := ms[1]["data"].(obj); !ok || len(d) != 0 {
			t.Fatalf("absent payload: data %#v, want {}", ms[1]["data"])
		}
		eq(t, ms[2], "data", nil)
	})
	t.Run("push_created_queue_options", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "", 1)
		d := b.get("/api/v1/status/queues/q").obj(http.StatusOK)
		cfg := sub(t, sub(t, d, "queue"), "config")
		eq(t, cfg, "leaseTime", 60)
		eq(t, cfg, "retryLimit", 3)
		eq(t, cfg, "deadLetterQueue", true)
	})
	t.Run("configure_replaces_and_validates", func(t *testing.T) {
		b := start(t)
		c := b.post("/api/v1/configure", obj{"queue": "q", "namespace": "ns", "task": "tk", "options": obj{"leaseTime": 5, "retryLimit": 0, "deadLetterQueue": false, "ttl": 9}}).obj(http.StatusOK)
		hasKeys(t, c, "configured", "queueId", "partitionId", "queue", "namespace", "task", "options")
		eq(t, c, "configured", true)
		eq(t, sub(t, c, "options"), "ttl", 9)
		c2 := b.post("/api/v1/configure", obj{"queue": "q"}).obj(http.StatusOK)
		eq(t, c2, "namespace", "")
		eq(t, c2, "task", "")
		eq(t, c2, "partitionId", c["partitionId"])
		d := b.get("/api/v1/status/queues/q").obj(http.StatusOK)
		cfg := sub(t, sub(t, d, "queue"), "config")
		eq(t, cfg, "leaseTime", 60)
		eq(t, cfg, "retryLimit", 3)
		eq(t, cfg, "deadLetterQueue", true)
		eq(t, cfg, "ttl", nil)
		pid := b.push(item("q", "", "a", 1))[0]["partition_id"]
		if pid != c["partitionId"] {
			t.Fatalf("configure's partitionId %v is not Default's %v", c["partitionId"], pid)
		}
		for name, body := range map[string]string{
			"queue empty":        `{"queue":""}`,
			"queue missing":      `{}`,
			"leaseTime negative": `{"queue":"q","options":{"leaseTime":-1}}`,
			"leaseTime fraction": `{"queue":"q","options":{"leaseTime":1.5}}`,
			"retryLimit string":  `{"queue":"q","options":{"retryLimit":"3"}}`,
			"dlq string":         `{"queue":"q","options":{"deadLetterQueue":"true"}}`,
		} {
			t.Run(name, func(t *testing.T) { b.at(t).post("/api/v1/configure", body).fails(http.StatusBadRequest) })
		}
	})
}
