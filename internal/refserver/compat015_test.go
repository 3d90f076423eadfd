package refserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/queenmq/queen-go/internal/testutil"
)

// The 0.15 mode's answers are checked against the captures of a real 0.15 broker: same
// status, same keys at every level, same JSON type for each value.

// capture015 is one exchange captured from a real 0.15 broker, kept verbatim in testdata.
type capture015 struct {
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Response string `json:"response"`
}

// captures015 are the transcript's pop, push, ack, extend and transaction exchanges (kept in
// the module's testdata), and, verbatim from the other captures, the ones that file leaves
// out, by what they show.
func captures015(t *testing.T) map[string]capture015 {
	t.Helper()
	raw, err := os.ReadFile("../../testdata/wire015_captures.json")
	if err != nil {
		t.Fatal(err)
	}
	var list []capture015
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatal(err)
	}
	byName := map[string]capture015{}
	for _, c := range list {
		// A title is the exchange's place in the transcript, then what it shows; of exchanges
		// that show the same (a pop, a failed ack), the first is kept.
		_, what, _ := strings.Cut(c.Title, " ")
		if _, dup := byName[what]; !dup {
			byName[what] = c
		}
	}
	for what, c := range map[string]capture015{
		"health":                                {Status: 200, Response: `{"database":"connected","queen":{"status":"active","worker_id":0},"server":"C++ Queen Server (libqueen)","shared_state":{"enabled":false,"maintenance_mode":false,"pop_maintenance_mode":false,"queue_config_cache":{"hit_rate":0.0,"hits":0,"misses":0,"size":0},"running":false,"server_health":{"heartbeats_received":0,"restarts_detected":0,"servers_alive":0,"servers_dead":0,"servers_tracked":0},"server_id":"vm:6634"},"status":"healthy","version":"1.0.0","worker_id":0}`},
		"configure with options":                {Status: 200, Response: `{"configured":true,"namespace":"","options":{"completedRetentionSeconds":0,"deadLetterQueue":true,"delayedProcessing":0,"dlqAfterMaxRetries":true,"encryptionEnabled":false,"leaseTime":30,"maxSize":0,"maxWaitTimeSeconds":0,"priority":0,"retentionEnabled":false,"retentionSeconds":0,"retryDelay":1000,"retryLimit":2,"ttl":3600,"windowBuffer":0},"partitionId":"25be3fb5-a82b-45ea-a81d-3feefb22c40c","queue":"smoke-basic","queueId":"4d2a94e2-b17a-4e9f-ae7b-f0175350713e","task":""}`},
		"dead letters of a queue that has none": {Status: 200, Response: `{"messages":[],"pagination":{"limit":100,"offset":0}}`},
		"unknown path":                          {Status: 404, Response: notFound015},
		"second failed ack files the message":   {Status: 200, Response: `[{"dlq":true,"error":null,"index":0,"leaseReleased":false,"partitionName":"p1","queueName":"smoke-dlq","success":true,"transactionId":"5d802a94-74a3-47aa-81a3-ba7b2d473c8f"}]`},
		"dead letters after two failed acks":    {Status: 200, Response: `{"messages":[{"consumerGroup":"g1","createdAt":"2026-11-29T21:46:36.677Z","data":{"will":"fail"},"errorMessage":"boom 2","failedAt":"2026-11-29T21:46:36.950Z","id":"01a22946-3500-7000-a777-52ea451cf116","partition":"p1","partitionId":"f3e5c1ac-60c4-4885-9a5b-e911102ba69d","producerSub":null,"queue":"smoke-dlq","retryCount":1,"transactionId":"5d802a94-74a3-47aa-81a3-ba7b2d473c8f"}],"pagination":{"limit":100,"offset":0}}`},
		"seek to a timestamp":                   {Status: 200, Response: `{"consumerGroup":"g1","partitionsUpdated":1,"queueName":"smoke-basic","seekToEnd":false,"success":true,"targetTimestamp":"1970-01-01T00:00:00.000Z"}`},
		"seek to the end":                       {Status: 200, Response: `{"consumerGroup":"g1","partitionsUpdated":1,"queueName":"smoke-basic","seekToEnd":true,"success":true,"targetTimestamp":null}`},
		"seek without a target":                 {Status: 400, Response: `{"error":"Must specify either 'toEnd': true or 'timestamp'"}`},
		"delete a group on one queue":           {Status: 200, Response: `{"consumerGroup":"g-new2","deletedPartitions":1,"metadataDeleted":true,"queueName":"smoke-sub","success":true}`},
		"delete a group on every queue":         {Status: 200, Response: `{"consumerGroup":"g-from","deletedPartitions":1,"metadataDeleted":true,"success":true}`},
		"delete a queue":                        {Status: 200, Response: `{"deleted":true,"existed":true,"queue":"spec-insp-115691"}`},
		"delete an unknown queue":               {Status: 200, Response: `{"deleted":true,"existed":false,"queue":"spec-insp-115691"}`},
		"delete an unknown group":               {Status: 200, Response: `{"consumerGroup":"spec-gC","deletedPartitions":0,"metadataDeleted":true,"success":true}`},
		"configure with retryLimit 0":           {Status: 200, Response: `{"configured":true,"namespace":"","options":{"completedRetentionSeconds":0,"deadLetterQueue":true,"delayedProcessing":0,"dlqAfterMaxRetries":false,"encryptionEnabled":false,"leaseTime":300,"maxSize":0,"maxWaitTimeSeconds":0,"priority":0,"retentionEnabled":false,"retentionSeconds":0,"retryDelay":1000,"retryLimit":0,"ttl":3600,"windowBuffer":0},"partitionId":"6fe37950-bb0b-468f-abe7-63ee63ce7ec0","queue":"smoke-qdlq","queueId":"148ec9b6-dc68-45ee-b98b-c950783dad17","task":""}`},
	} {
		byName[what] = c
	}
	return byName
}

// shape is a JSON value's structure: an object's keys with their shapes, an array's first
// element's shape, else the value's type.
func shape(t *testing.T, body string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		return "not JSON"
	}
	return shapeOf(v)
}

func shapeOf(v any) string {
	switch v := v.(type) {
	case map[string]any:
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range v {
				if !yield(k) {
					return
				}
			}
		})
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + ":" + shapeOf(v[k])
		}
		return "{" + strings.Join(parts, ",") + "}"
	case []any:
		if len(v) == 0 {
			return "[]"
		}
		return "[" + shapeOf(v[0]) + "...]"
	case nil:
		return "null"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	}
	return fmt.Sprintf("%T", v)
}

// wantCapture checks one answer against the capture of what it shows.
func wantCapture(t *testing.T, caps map[string]capture015, what string, got testutil.Response) {
	t.Helper()
	c, ok := caps[what]
	if !ok {
		t.Fatalf("no capture %s", what)
	}
	if got.Status != c.Status {
		t.Errorf("%s: status %d, want %d (body %s)", what, got.Status, c.Status, got.Body)
	}
	if !json.Valid([]byte(c.Response)) { // a non-JSON capture is compared byte for byte
		if string(got.Body) != c.Response {
			t.Errorf("%s: body %q, want %q", what, got.Body, c.Response)
		}
		return
	}
	if w, g := shape(t, c.Response), shape(t, string(got.Body)); w != g {
		t.Errorf("%s: shape differs from the 0.15 capture\n got: %s\nwant: %s\nbody: %s", what, g, w, got.Body)
	}
	if w := errorText(c.Response); w != "" && !strings.HasPrefix(w, "ERROR:") && errorText(string(got.Body)) != w {
		t.Errorf("%s: error %q, want 0.15's %q", what, errorText(string(got.Body)), w)
	}
}

// errorText is the "error" string of an object, or of an array's first element.
func errorText(body string) string {
	var v any
	_ = json.Unmarshal([]byte(body), &v)
	if a, ok := v.([]any); ok && len(a) > 0 {
		v = a[0]
	}
	if o, ok := v.(map[string]any); ok {
		s, _ := o["error"].(string)
		return s
	}
	return ""
}

// Test015AnswersMatchTheCaptures replays the transcript's flows against the 0.15 mode.
func Test015AnswersMatchTheCaptures(t *testing.T) {
	t.Parallel()
	caps := captures015(t)
	_, c := start(t, withCompat("0.15"))
	read := func(r testutil.Response, out any) testutil.Response {
		t.Helper()
		if err := json.Unmarshal(r.Body, out); err != nil {
			t.Fatalf("decoding %s: %v", r.Body, err)
		}
		return r
	}

	wantCapture(t, caps, "configure with options", c.Do("POST", "/api/v1/configure", `{"queue":"smoke-basic","options":{"leaseTime":30,"retryLimit":2,"deadLetterQueue":true,"dlqAfterMaxRetries":true}}`))
	wantCapture(t, caps, "push 3 messages to partition p1 (third with explicit transactionId, second with traceId)", c.Do("POST", "/api/v1/push", `{"items":[{"queue":"smoke-basic","partition":"p1","payload":{"n":1}},{"queue":"smoke-basic","partition":"p1","payload":{"n":2},"traceId":"0b6a3c1e-8c4e-4a8f-9a57-0f1f6a6c0d01"},{"queue":"smoke-basic","partition":"p1","payload":{"n":3,"s":"three"},"transactionId":"tx-basic-3"}]}`))
	wantCapture(t, caps, "push same explicit transactionId again (duplicate)", c.Do("POST", "/api/v1/push", `{"items":[{"queue":"smoke-basic","partition":"p1","payload":{"n":33},"transactionId":"tx-basic-3"}]}`))

	var pop struct {
		LeaseID  string `json:"leaseId"`
		Messages []struct {
			TransactionID string `json:"transactionId"`
			PartitionID   string `json:"partitionId"`
		} `json:"messages"`
	}
	wantCapture(t, caps, "pop partition p1, consumerGroup=g1, batch=10", read(c.Get("/api/v1/pop/queue/smoke-basic/partition/p1?consumerGroup=g1&batch=10"), &pop))
	if len(pop.Messages) != 3 {
		t.Fatalf("the pop of p1 popped %d messages, want 3", len(pop.Messages))
	}
	wantCapture(t, caps, "pop again while the lease is held", c.Get("/api/v1/pop/queue/smoke-basic/partition/p1?consumerGroup=g1&batch=10"))
	ack := func(i int, status string) string {
		return fmt.Sprintf(`{"transactionId":%q,"partitionId":%q,"leaseId":%q,"status":%q}`,
			pop.Messages[i].TransactionID, pop.Messages[i].PartitionID, pop.LeaseID, status)
	}
	wantCapture(t, caps, "ack first message, status completed", c.Do("POST", "/api/v1/ack", strings.Replace(ack(0, "completed"), "}", `,"consumerGroup":"g1"}`, 1)))
	wantCapture(t, caps, "extend lease", c.Do("POST", "/api/v1/lease/"+pop.LeaseID+"/extend", `{"seconds":120}`))
	wantCapture(t, caps, "extend lease, empty JSON object body (default seconds)", c.Do("POST", "/api/v1/lease/"+pop.LeaseID+"/extend", `{}`))
	var acks []map[string]any
	wantCapture(t, caps, "ack batch (remaining two)", read(c.Do("POST", "/api/v1/ack/batch", `{"consumerGroup":"g1","acknowledgments":[`+ack(1, "completed")+","+ack(2, "completed")+`]}`), &acks))
	if acks[0]["leaseReleased"] != false || acks[1]["leaseReleased"] != true {
		t.Errorf("the batch ack of the last two: the third ack of three ends the lease, got %v", acks)
	}
	wantCapture(t, caps, "ack the same message again after the batch released the lease (double ack)", c.Do("POST", "/api/v1/ack", strings.Replace(ack(0, "completed"), "}", `,"consumerGroup":"g1"}`, 1)))
	wantCapture(t, caps, "dead letters of a queue that has none", c.Get("/api/v1/dlq?queue=smoke-basic"))
	wantCapture(t, caps, "pop on drained queue (wait=false)", c.Get("/api/v1/pop/queue/smoke-basic/partition/p1?consumerGroup=g1&batch=10"))
	wantCapture(t, caps, "wildcard pop (any partition) on drained queue", c.Get("/api/v1/pop/queue/smoke-basic?consumerGroup=g1&batch=10"))
	wantCapture(t, caps, "long-poll on drained queue wait=true&timeout=2000", c.Get("/api/v1/pop/queue/smoke-basic/partition/p1?consumerGroup=g1&batch=10&wait=true&timeout=10"))
	wantCapture(t, caps, "wildcard long-poll wait=true&timeout=2000", c.Get("/api/v1/pop/queue/smoke-basic?consumerGroup=g1&batch=10&wait=true&timeout=10"))
	wantCapture(t, caps, "queue mode pop (no consumerGroup) on same queue, batch=2", c.Get("/api/v1/pop/queue/smoke-basic?batch=2"))

	wantCapture(t, caps, "ack with partitionId that is not a UUID", c.Do("POST", "/api/v1/ack", `{"transactionId":"x","partitionId":"p1","leaseId":"l","status":"completed","consumerGroup":"g1"}`))
	wantCapture(t, caps, "ack with unknown status value", c.Do("POST", "/api/v1/ack", fmt.Sprintf(`{"transactionId":%q,"partitionId":%q,"status":"weird","consumerGroup":"g1"}`, pop.Messages[0].TransactionID, pop.Messages[0].PartitionID)))
	wantCapture(t, caps, "ack with unknown transactionId", c.Do("POST", "/api/v1/ack", fmt.Sprintf(`{"transactionId":"does-not-exist","partitionId":%q,"consumerGroup":"g1"}`, pop.Messages[0].PartitionID)))
	wantCapture(t, caps, "ack missing partitionId", c.Do("POST", "/api/v1/ack", `{"transactionId":"t","leaseId":"l","status":"completed","consumerGroup":"g1"}`))
	wantCapture(t, caps, "ack missing transactionId", c.Do("POST", "/api/v1/ack", `{"partitionId":"a7a12460-cce8-4d27-8dca-1b5bfa51e09c","leaseId":"l"}`))
	wantCapture(t, caps, "ack batch without acknowledgments", c.Do("POST", "/api/v1/ack/batch", `{"consumerGroup":"g1"}`))
	wantCapture(t, caps, "ack batch item missing partitionId", c.Do("POST", "/api/v1/ack/batch", `{"consumerGroup":"g1","acknowledgments":[{"transactionId":"t"}]}`))
	wantCapture(t, caps, "extend a bogus leaseId", c.Do("POST", "/api/v1/lease/00000000-0000-0000-0000-000000000000/extend", `{"seconds":60}`))
	wantCapture(t, caps, "extend with no body", c.Do("POST", "/api/v1/lease/00000000-0000-0000-0000-000000000000/extend", ""))
	wantCapture(t, caps, "push without items", c.Do("POST", "/api/v1/push", `{"foo":1}`))
	wantCapture(t, caps, "push with empty items", c.Do("POST", "/api/v1/push", `{"items":[]}`))
	wantCapture(t, caps, "push with numeric partition", c.Do("POST", "/api/v1/push", `{"items":[{"queue":"smoke-lease","partition":1,"payload":{}}]}`))
	wantCapture(t, caps, "push without queue", c.Do("POST", "/api/v1/push", `{"items":[{"payload":{}}]}`))
	wantCapture(t, caps, "pop nonexistent queue", c.Get("/api/v1/pop/queue/no-such-queue?consumerGroup=g1"))
	wantCapture(t, caps, "pop nonexistent partition of existing queue", c.Get("/api/v1/pop/queue/smoke-basic/partition/nope?consumerGroup=g1"))
	wantCapture(t, caps, "pop nonexistent queue with wait=true&timeout=1000", c.Get("/api/v1/pop/queue/no-such-queue?consumerGroup=g1&wait=true&timeout=10"))
	wantCapture(t, caps, "unknown path", c.Get("/api/v1/pop?queue=smoke-basic&batch=1&wait=false"))
	wantCapture(t, caps, "unknown path", c.Get("/api/v1/nope"))
	wantCapture(t, caps, "unknown path", c.Do("POST", "/api/v1/dlq/x/replay", ""))
	wantCapture(t, caps, "unknown path", c.Do("DELETE", "/api/v1/dlq/x", ""))

	wantCapture(t, caps, "seek to a timestamp", c.Do("POST", "/api/v1/consumer-groups/g1/queues/smoke-basic/seek", `{"timestamp":"1970-01-01T00:00:00Z"}`))
	wantCapture(t, caps, "pop g1 after rewind", c.Get("/api/v1/pop/queue/smoke-basic/partition/p1?consumerGroup=g1&batch=10"))
	wantCapture(t, caps, "seek to the end", c.Do("POST", "/api/v1/consumer-groups/g1/queues/smoke-basic/seek", `{"toEnd":true}`))
	wantCapture(t, caps, "pop g1 after seek toEnd", c.Get("/api/v1/pop/queue/smoke-basic/partition/p1?consumerGroup=g1&batch=10"))
	wantCapture(t, caps, "seek without a target", c.Do("POST", "/api/v1/consumer-groups/g1/queues/smoke-basic/seek", `{}`))
	wantCapture(t, caps, "transaction with a single push operation", c.Do("POST", "/api/v1/transaction", `{"operations":[{"type":"push","items":[{"queue":"smoke-tx","partition":"p1","payload":{"t":1}}]}]}`))
	wantCapture(t, caps, "configure with retryLimit 0", c.Do("POST", "/api/v1/configure", `{"queue":"smoke-qdlq","options":{"retryLimit":0,"deadLetterQueue":true}}`))

	// C: two failed acks with retryLimit 1 file the message; the list shows it.
	c.Do("POST", "/api/v1/configure", `{"queue":"smoke-dlq","options":{"leaseTime":30,"retryLimit":1,"deadLetterQueue":true}}`)
	wantCapture(t, caps, "push 1 message", c.Do("POST", "/api/v1/push", `{"items":[{"queue":"smoke-dlq","partition":"p1","payload":{"will":"fail"}}]}`))
	for i := range 2 {
		wantCapture(t, caps, "pop", read(c.Get("/api/v1/pop/queue/smoke-dlq/partition/p1?consumerGroup=g1&batch=1"), &pop))
		r := c.Do("POST", "/api/v1/ack", strings.Replace(ack(0, "failed"), "}", fmt.Sprintf(`,"error":"boom %d","consumerGroup":"g1"}`, i+1), 1))
		if i == 1 {
			wantCapture(t, caps, "second failed ack files the message", read(r, &acks))
			if acks[0]["dlq"] != true {
				t.Errorf("the second failed with retryLimit 1 files the message, got %s", r.Body)
			}
		}
	}
	wantCapture(t, caps, "dead letters after two failed acks", c.Get("/api/v1/dlq?queue=smoke-dlq"))
	wantCapture(t, caps, "pop after DLQ", c.Get("/api/v1/pop/queue/smoke-dlq/partition/p1?consumerGroup=g1&batch=1"))

	// Group and queue deletions, known and unknown.
	c.Do("POST", "/api/v1/push", `{"items":[{"queue":"smoke-sub","partition":"p1","payload":{"h":1}}]}`)
	c.Get("/api/v1/pop/queue/smoke-sub?consumerGroup=g-new2&subscriptionMode=new&batch=10")
	c.Get("/api/v1/pop/queue/smoke-sub?consumerGroup=g-from&subscriptionFrom=1970-01-01T00:00:00Z&batch=10")
	wantCapture(t, caps, "delete a group on one queue", c.Delete("/api/v1/consumer-groups/g-new2/queues/smoke-sub"))
	wantCapture(t, caps, "delete a group on every queue", c.Delete("/api/v1/consumer-groups/g-from"))
	wantCapture(t, caps, "delete an unknown group", c.Delete("/api/v1/consumer-groups/nobody"))
	wantCapture(t, caps, "delete a queue", c.Delete("/api/v1/resources/queues/smoke-sub"))
	wantCapture(t, caps, "delete an unknown queue", c.Delete("/api/v1/resources/queues/smoke-sub"))
}

// client015 is a raw client for a 0.15-mode broker, whose pushes answer 200.
type client015 struct{ *testutil.Client }

func start015(t *testing.T, opts ...option) (*testServer, client015) {
	t.Helper()
	srv, c := start(t, append([]option{withCompat("0.15")}, opts...)...)
	return srv, client015{c}
}

func (c client015) Push(queue, partition string, txIDs ...string) {
	c.T.Helper()
	items := make([]testutil.Item, len(txIDs))
	for i, id := range txIDs {
		items[i] = testutil.Item{Queue: queue, Partition: partition, Payload: map[string]string{"tx": id}, TransactionID: id}
	}
	c.Post("/api/v1/push", map[string]any{"items": items}).Want(c.T, http.StatusOK, nil)
}

// Pop answers the popped transactionIds and the whole answer.
func (c client015) Pop(path string, params url.Values) ([]string, *testutil.PopResult) {
	c.T.Helper()
	var res testutil.PopResult
	c.Get(path+"?"+params.Encode()).Want(c.T, http.StatusOK, &res)
	var ids []string
	for _, m := range res.Messages {
		ids = append(ids, m.TransactionID)
	}
	return ids, &res
}

func (c client015) Ack(res *testutil.PopResult, group string, statuses ...string) []testutil.AckResult {
	c.T.Helper()
	acks := make([]map[string]any, len(statuses))
	for i, st := range statuses {
		m := res.Messages[i]
		acks[i] = map[string]any{"transactionId": m.TransactionID, "partitionId": m.PartitionID, "leaseId": m.LeaseID, "status": st}
	}
	return c.AckBatch(map[string]any{"consumerGroup": group, "acknowledgments": acks})
}

func wantIDs(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("%s: popped %v, want %v", what, got, want)
	}
}

// A bare token is accepted too.
func Test015AcceptsTheBareToken(t *testing.T) {
	t.Parallel()
	_, c := start015(t, withToken("s3cret"))
	for _, h := range []string{"s3cret", "Bearer s3cret"} {
		req, _ := http.NewRequest("GET", c.Base+"/api/v1/dlq", nil)
		req.Header.Set("Authorization", h)
		resp, err := c.HC.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("Authorization %q: %d", h, resp.StatusCode)
		}
	}
	c.Get("/api/v1/dlq").WantError(t, http.StatusUnauthorized)
}
