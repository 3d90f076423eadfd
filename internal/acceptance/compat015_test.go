package acceptance

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queenmq/queen-go/queentest"
)

// start015 is start in 0.15 mode.
func start015(t *testing.T, opts ...queentest.Option) *broker {
	t.Helper()
	b := start(t, append([]queentest.Option{queentest.WithCompat("0.15")}, opts...)...)
	b.pushOK = http.StatusOK
	return b
}

// sortedKeys fails unless body's top-level object keys come in alphabetical order, as 0.15's
// JSON library writes them.
func sortedKeys(t *testing.T, body []byte) {
	t.Helper()
	var keys []string
	depth, inStr, esc, start := 0, false, false, -1
	for i, c := range body {
		switch {
		case inStr:
			if esc {
				esc = false
			} else if c == '\\' {
				esc = true
			} else if c == '"' {
				inStr = false
				if depth == 1 && start >= 0 {
					rest := strings.TrimLeft(string(body[i+1:]), " ")
					if strings.HasPrefix(rest, ":") {
						keys = append(keys, string(body[start:i]))
					}
				}
				start = -1
			}
		case c == '"':
			inStr, start = true, i+1
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		}
	}
	if !slices.IsSorted(keys) {
		t.Fatalf("keys %v not in alphabetical order: %s", keys, body)
	}
}

func TestCompat015(t *testing.T) {
	t.Parallel()
	t.Run("push_and_pop_shapes", func(t *testing.T) {
		b := start015(t)
		r := b.post("/api/v1/push", obj{"items": []obj{item("q", "p", "a", 1)}})
		res := r.arr(http.StatusOK)
		hasKeys(t, res[0], "index", "message_id", "partition_id", "queueName", "status", "trace_id", "transaction_id")
		sortedKeys(t, r.body[1:])
		dup := b.post("/api/v1/push", obj{"items": []obj{item("q", "p", "a", 2)}}).arr(http.StatusOK)[0]
		hasKeys(t, dup, "index", "message_id", "queueName", "status", "transaction_id")
		eq(t, dup, "status", "duplicate")
		if e := b.post("/api/v1/push", `{"items":[]}`).wantStatus(http.StatusCreated); string(e.body) != "[]" {
			t.Fatalf("empty push %s", e.body)
		}
		p := b.get("/api/v1/pop/queue/q?consumerGroup=g")
		o := p.obj(http.StatusOK)
		sortedKeys(t, p.body)
		hasKeys(t, o, "consumerGroup", "leaseId", "messages", "partition", "partitionId", "partitionsClaimed", "queue", "success")
		hasKeys(t, msgs(t, o)[0], "consumerGroup", "createdAt", "data", "id", "leaseId", "partition", "partitionId", "producerSub", "traceId", "transactionId")
	})
	t.Run("empty_pops", func(t *testing.T) {
		b := start015(t)
		e := b.get("/api/v1/pop/queue/nope").obj(http.StatusOK)
		hasKeys(t, e, "error", "messages", "success")
		fields(t, e, "error", "no_available_partition", "success", false)
		b.pushN("q", "p", 1)
		b.pop("/api/v1/pop/queue/q/partition/p")
		fields(t, b.get("/api/v1/pop/queue/q/partition/p").obj(http.StatusOK), "error", "lease_held")
		fields(t, b.get("/api/v1/pop/queue/q/partition/zz").obj(http.StatusOK), "error", "partition_not_found")
		w := b.get("/api/v1/pop/queue/q?wait=true&timeout=10").obj(http.StatusOK)
		fields(t, w, "success", true, "leaseId", nil, "partitionId", nil)
	})
	t.Run("batch_defaults_to_one_leaseSeconds_ignored", func(t *testing.T) {
		b := start015(t)
		b.pushN("q", "p", 3)
		ms := msgs(t, b.pop("/api/v1/pop/queue/q?autopilot=true&leaseSeconds=1"))
		if len(ms) != 1 {
			t.Fatalf("%d messages, want 1", len(ms))
		}
		b.advance(2 * time.Second)
		fields(t, b.get("/api/v1/pop/queue/q").obj(http.StatusOK), "success", false) // lease is the queue's 300 s
		b.advance(300 * time.Second)
		eq(t, msgs(t, b.pop("/api/v1/pop/queue/q"))[0], "transactionId", "p-t0")
	})
	t.Run("absent_routes", func(t *testing.T) {
		b := start015(t)
		for _, c := range [][2]string{{"GET", "/api/v1/pop?namespace=x"}, {"POST", "/api/v1/dlq/x/replay"}, {"DELETE", "/api/v1/dlq/x"}, {"GET", "/api/v1/nope"}} {
			r := b.do(c[0], c[1], nil).wantStatus(http.StatusNotFound)
			if !strings.Contains(string(r.body), "File Not Found") || r.header.Get("Content-Type") != "" {
				t.Fatalf("%s %s: 404 %q with Content-Type %q, want 0.15's HTML page", c[0], c[1], r.body, r.header.Get("Content-Type"))
			}
		}
	})
	t.Run("lax_parameters", func(t *testing.T) {
		b := start015(t)
		b.pushN("q", "p", 2)
		// Lax: no 400 for these on 0.15.
		for _, q := range []string{"timeout=70000", "batch=abc", "wait=yes", "subscriptionFrom=garbage"} {
			if r := b.get("/api/v1/pop/queue/q/partition/zz?consumerGroup=lax&" + q); r.status != http.StatusOK {
				t.Fatalf("%s: status %d (%s), want 0.15's lax 200", q, r.status, r.body)
			}
		}
		// new-only is all, and the default subscription is all.
		wantN := func(path string, n int) {
			t.Helper()
			if got := len(msgs(t, b.pop(path))); got != n {
				t.Fatalf("%s: %d messages, want %d", path, got, n)
			}
		}
		wantN("/api/v1/pop/queue/q?consumerGroup=a&subscriptionMode=new-only&batch=5", 2)
		wantN("/api/v1/pop/queue/q?consumerGroup=b&batch=5", 2)
		wantN("/api/v1/pop/queue/q?consumerGroup=c&subscriptionFrom=garbage&batch=5", 2)
	})
	t.Run("seek_answers", func(t *testing.T) {
		b := start015(t)
		b.pushN("q", "p", 1)
		b.pop("/api/v1/pop/queue/q?consumerGroup=g")
		fields(t, b.seek("g", "q", obj{"timestamp": "yesterday"}).obj(http.StatusOK), "success", false)
		b.seek("g", "q", `{"timestamp":5}`).wantStatus(http.StatusInternalServerError)
		b.seek("g", "q", `{}`).fails(http.StatusBadRequest, "Must specify either 'toEnd': true or 'timestamp'")
	})
	t.Run("ack_answers", func(t *testing.T) {
		b := start015(t)
		_, ms := b.leased("q", "p", "g", 1)
		b.post("/api/v1/ack", obj{"partitionId": ms[0]["partitionId"]}).fails(http.StatusBadRequest)
		r := b.ack(obj{"transactionId": ms[0]["transactionId"], "partitionId": ms[0]["partitionId"], "status": "weird", "consumerGroup": "g"})
		fields(t, r, "success", false, "error", nil)
		// Unfenced ack of a message outside any delivery is accepted.
		b.pushN("q", "p", 3)
		eq(t, b.ack(obj{"transactionId": "p-t2", "partitionId": ms[0]["partitionId"], "consumerGroup": "never"}), "success", true)
	})
	t.Run("extend", func(t *testing.T) {
		b := start015(t)
		_, ms := b.leased("q", "p", "", 1)
		lease := ms[0]["leaseId"].(string)
		r := b.extend(lease, obj{})
		eq(t, r, "success", true)
		b.post("/api/v1/lease/"+lease+"/extend", `{"seconds":"x"}`).wantStatus(http.StatusInternalServerError)
		b.post("/api/v1/lease/"+lease+"/extend", ``).fails(http.StatusBadRequest, "Empty request body")
		fields(t, b.extend("00000000-0000-0000-0000-000000000000", obj{"seconds": 5}), "success", false, "error", "Lease not found", "expiresAt", nil)
	})
	t.Run("push_created_queue_lease_300", func(t *testing.T) {
		b := start015(t)
		b.pushN("q", "p", 1)
		b.pop("/api/v1/pop/queue/q")
		b.advance(299 * time.Second)
		fields(t, b.get("/api/v1/pop/queue/q").obj(http.StatusOK), "success", false)
		b.advance(time.Second)
		b.pop("/api/v1/pop/queue/q")
	})
	t.Run("dead_letter_list", func(t *testing.T) {
		b := start015(t)
		b.post("/api/v1/configure", obj{"queue": "q", "options": obj{"retryLimit": 0}}).obj(http.StatusOK)
		pushed := b.pushN("q", "p", 1)[0]
		m := msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=g"))
		if len(m) == 0 {
			t.Fatal("nothing to fail")
		}
		eq(t, b.ackMsg(m[0], "failed", false), "dlq", true)
		d := b.get("/api/v1/dlq?queue=q").obj(http.StatusOK)
		hasKeys(t, d, "messages", "pagination")
		dl := list(t, d, "messages")[0]
		hasKeys(t, dl, "consumerGroup", "createdAt", "data", "errorMessage", "failedAt", "id", "partition", "partitionId", "producerSub", "queue", "retryCount", "transactionId")
		eq(t, dl, "id", pushed["message_id"])
	})
	t.Run("deletes_of_unknowns", func(t *testing.T) {
		b := start015(t)
		fields(t, b.del("/api/v1/resources/queues/nope").obj(http.StatusOK), "deleted", true, "existed", false)
		fields(t, b.del("/api/v1/consumer-groups/nobody").obj(http.StatusOK), "deletedPartitions", 0)
	})
	t.Run("bare_token_and_health", func(t *testing.T) {
		b := start015(t, queentest.WithToken("k"))
		b.token = ""
		b.get("/api/v1/dlq").wantStatus(http.StatusUnauthorized)
		h := b.get("/health").obj(http.StatusOK)
		fields(t, h, "version", "1.0.0", "status", "healthy")
		req, _ := http.NewRequest("GET", b.srv.URL()+"/api/v1/dlq", nil)
		req.Header.Set("Authorization", "k")
		resp, err := b.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("bare token: %d", resp.StatusCode)
		}
	})
}
