package refserver

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/queenmq/queen-go/internal/testutil"
)

// The 0.15 mode's answers are checked against the captures of a real 0.15 broker
// (wire-0.15.md): same status, same keys at every level, same JSON type for each value.

// capture015 is one exchange of wire-0.15.md.
type capture015 struct {
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Response string `json:"response"`
}

// captures015 are the transcript's pop, push, ack, extend and transaction exchanges (kept in
// the module's testdata) and, verbatim from wire-0.15.md and wire-0.15-introspection.md, the
// ones that file leaves out.
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
	byID := map[string]capture015{}
	for _, c := range list {
		id, _, _ := strings.Cut(c.Title, " ")
		if _, dup := byID[id]; !dup { // C3.1 and C3.2 appear twice (pop, then ack): keep the pop
			byID[id] = c
		}
	}
	for id, c := range map[string]capture015{
		"A1":      {Status: 200, Response: `{"database":"connected","queen":{"status":"active","worker_id":0},"server":"C++ Queen Server (libqueen)","shared_state":{"enabled":false,"maintenance_mode":false,"pop_maintenance_mode":false,"queue_config_cache":{"hit_rate":0.0,"hits":0,"misses":0,"size":0},"running":false,"server_health":{"heartbeats_received":0,"restarts_detected":0,"servers_alive":0,"servers_dead":0,"servers_tracked":0},"server_id":"vm:6634"},"status":"healthy","version":"1.0.0","worker_id":0}`},
		"A2":      {Status: 200, Response: `{"configured":true,"namespace":"","options":{"completedRetentionSeconds":0,"deadLetterQueue":true,"delayedProcessing":0,"dlqAfterMaxRetries":true,"encryptionEnabled":false,"leaseTime":30,"maxSize":0,"maxWaitTimeSeconds":0,"priority":0,"retentionEnabled":false,"retentionSeconds":0,"retryDelay":1000,"retryLimit":2,"ttl":3600,"windowBuffer":0},"partitionId":"25be3fb5-a82b-45ea-a81d-3feefb22c40c","queue":"smoke-basic","queueId":"4d2a94e2-b17a-4e9f-ae7b-f0175350713e","task":""}`},
		"A8":      {Status: 200, Response: `{"messages":[],"pagination":{"limit":100,"offset":0}}`},
		"B10":     {Status: 404, Response: notFound015},
		"C3.2ack": {Status: 200, Response: `[{"dlq":true,"error":null,"index":0,"leaseReleased":false,"partitionName":"p1","queueName":"smoke-dlq","success":true,"transactionId":"5d802a94-74a3-47aa-81a3-ba7b2d473c8f"}]`},
		"C4":      {Status: 200, Response: `{"messages":[{"consumerGroup":"g1","createdAt":"2026-11-29T21:46:36.677Z","data":{"will":"fail"},"errorMessage":"boom 2","failedAt":"2026-11-29T21:46:36.950Z","id":"01a22946-3500-7000-a777-52ea451cf116","partition":"p1","partitionId":"f3e5c1ac-60c4-4885-9a5b-e911102ba69d","producerSub":null,"queue":"smoke-dlq","retryCount":1,"transactionId":"5d802a94-74a3-47aa-81a3-ba7b2d473c8f"}],"pagination":{"limit":100,"offset":0}}`},
		"F3":      {Status: 200, Response: `{"consumerGroup":"g1","partitionsUpdated":1,"queueName":"smoke-basic","seekToEnd":false,"success":true,"targetTimestamp":"1970-01-01T00:00:00.000Z"}`},
		"F4":      {Status: 200, Response: `{"consumerGroup":"g1","partitionsUpdated":1,"queueName":"smoke-basic","seekToEnd":true,"success":true,"targetTimestamp":null}`},
		"F5":      {Status: 400, Response: `{"error":"Must specify either 'toEnd': true or 'timestamp'"}`},
		"F9":      {Status: 200, Response: `{"consumerGroup":"g-new2","deletedPartitions":1,"metadataDeleted":true,"queueName":"smoke-sub","success":true}`},
		"F10":     {Status: 200, Response: `{"consumerGroup":"g-from","deletedPartitions":1,"metadataDeleted":true,"success":true}`},
		"IC1":     {Status: 200, Response: `{"deleted":true,"existed":true,"queue":"spec-insp-115691"}`},
		"IC3":     {Status: 200, Response: `{"deleted":true,"existed":false,"queue":"spec-insp-115691"}`},
		"IC6":     {Status: 200, Response: `{"consumerGroup":"spec-gC","deletedPartitions":0,"metadataDeleted":true,"success":true}`},
		"J1":      {Status: 200, Response: `{"configured":true,"namespace":"","options":{"completedRetentionSeconds":0,"deadLetterQueue":true,"delayedProcessing":0,"dlqAfterMaxRetries":false,"encryptionEnabled":false,"leaseTime":300,"maxSize":0,"maxWaitTimeSeconds":0,"priority":0,"retentionEnabled":false,"retentionSeconds":0,"retryDelay":1000,"retryLimit":0,"ttl":3600,"windowBuffer":0},"partitionId":"6fe37950-bb0b-468f-abe7-63ee63ce7ec0","queue":"smoke-qdlq","queueId":"148ec9b6-dc68-45ee-b98b-c950783dad17","task":""}`},
	} {
		byID[id] = c
	}
	return byID
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

// wantCapture checks one answer against the capture named id.
func wantCapture(t *testing.T, caps map[string]capture015, id string, got testutil.Response) {
	t.Helper()
	c, ok := caps[id]
	if !ok {
		t.Fatalf("no capture %s", id)
	}
	if got.Status != c.Status {
		t.Errorf("%s: status %d, want %d (body %s)", id, got.Status, c.Status, got.Body)
	}
	if !json.Valid([]byte(c.Response)) { // a non-JSON capture is compared byte for byte
		if string(got.Body) != c.Response {
			t.Errorf("%s: body %q, want %q", id, got.Body, c.Response)
		}
		return
	}
	if w, g := shape(t, c.Response), shape(t, string(got.Body)); w != g {
		t.Errorf("%s: shape differs from the 0.15 capture\n got: %s\nwant: %s\nbody: %s", id, g, w, got.Body)
	}
	if w := errorText(c.Response); w != "" && !strings.HasPrefix(w, "ERROR:") && errorText(string(got.Body)) != w {
		t.Errorf("%s: error %q, want 0.15's %q", id, errorText(string(got.Body)), w)
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

// TestCompat015AnswersMatchTheCaptures replays the transcript's flows against the 0.15 mode.
func TestCompat015AnswersMatchTheCaptures(t *testing.T) {
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

	wantCapture(t, caps, "A1", c.Get("/health"))
	wantCapture(t, caps, "A2", c.Do("POST", "/api/v1/configure", `{"queue":"smoke-basic","options":{"leaseTime":30,"retryLimit":2,"deadLetterQueue":true,"dlqAfterMaxRetries":true}}`))
	wantCapture(t, caps, "A3", c.Do("POST", "/api/v1/push", `{"items":[{"queue":"smoke-basic","partition":"p1","payload":{"n":1}},{"queue":"smoke-basic","partition":"p1","payload":{"n":2},"traceId":"0b6a3c1e-8c4e-4a8f-9a57-0f1f6a6c0d01"},{"queue":"smoke-basic","partition":"p1","payload":{"n":3,"s":"three"},"transactionId":"tx-basic-3"}]}`))
	wantCapture(t, caps, "A3b", c.Do("POST", "/api/v1/push", `{"items":[{"queue":"smoke-basic","partition":"p1","payload":{"n":33},"transactionId":"tx-basic-3"}]}`))

	var pop struct {
		LeaseID  string `json:"leaseId"`
		Messages []struct {
			TransactionID string `json:"transactionId"`
			PartitionID   string `json:"partitionId"`
		} `json:"messages"`
	}
	wantCapture(t, caps, "A4", read(c.Get("/api/v1/pop/queue/smoke-basic/partition/p1?consumerGroup=g1&batch=10"), &pop))
	if len(pop.Messages) != 3 {
		t.Fatalf("A4 popped %d messages, want 3", len(pop.Messages))
	}
	wantCapture(t, caps, "A4b", c.Get("/api/v1/pop/queue/smoke-basic/partition/p1?consumerGroup=g1&batch=10"))
	ack := func(i int, status string) string {
		return fmt.Sprintf(`{"transactionId":%q,"partitionId":%q,"leaseId":%q,"status":%q}`,
			pop.Messages[i].TransactionID, pop.Messages[i].PartitionID, pop.LeaseID, status)
	}
	wantCapture(t, caps, "A5", c.Do("POST", "/api/v1/ack", strings.Replace(ack(0, "completed"), "}", `,"consumerGroup":"g1"}`, 1)))
	wantCapture(t, caps, "A6", c.Do("POST", "/api/v1/lease/"+pop.LeaseID+"/extend", `{"seconds":120}`))
	wantCapture(t, caps, "A6b", c.Do("POST", "/api/v1/lease/"+pop.LeaseID+"/extend", `{}`))
	var acks []map[string]any
	wantCapture(t, caps, "A7", read(c.Do("POST", "/api/v1/ack/batch", `{"consumerGroup":"g1","acknowledgments":[`+ack(1, "completed")+","+ack(2, "completed")+`]}`), &acks))
	if acks[0]["leaseReleased"] != false || acks[1]["leaseReleased"] != true {
		t.Errorf("A7: the third ack of three ends the lease, got %v", acks)
	}
	wantCapture(t, caps, "A7b", c.Do("POST", "/api/v1/ack", strings.Replace(ack(0, "completed"), "}", `,"consumerGroup":"g1"}`, 1)))
	wantCapture(t, caps, "A8", c.Get("/api/v1/dlq?queue=smoke-basic"))
	wantCapture(t, caps, "A9", c.Get("/api/v1/pop/queue/smoke-basic/partition/p1?consumerGroup=g1&batch=10"))
	wantCapture(t, caps, "A9c", c.Get("/api/v1/pop/queue/smoke-basic?consumerGroup=g1&batch=10"))
	wantCapture(t, caps, "A10", c.Get("/api/v1/pop/queue/smoke-basic/partition/p1?consumerGroup=g1&batch=10&wait=true&timeout=10"))
	wantCapture(t, caps, "A10b", c.Get("/api/v1/pop/queue/smoke-basic?consumerGroup=g1&batch=10&wait=true&timeout=10"))
	wantCapture(t, caps, "A11", c.Get("/api/v1/pop/queue/smoke-basic?batch=2"))

	wantCapture(t, caps, "B3b", c.Do("POST", "/api/v1/ack", `{"transactionId":"x","partitionId":"p1","leaseId":"l","status":"completed","consumerGroup":"g1"}`))
	wantCapture(t, caps, "B3c", c.Do("POST", "/api/v1/ack", fmt.Sprintf(`{"transactionId":%q,"partitionId":%q,"status":"weird","consumerGroup":"g1"}`, pop.Messages[0].TransactionID, pop.Messages[0].PartitionID)))
	wantCapture(t, caps, "B3", c.Do("POST", "/api/v1/ack", fmt.Sprintf(`{"transactionId":"does-not-exist","partitionId":%q,"consumerGroup":"g1"}`, pop.Messages[0].PartitionID)))
	wantCapture(t, caps, "B4", c.Do("POST", "/api/v1/ack", `{"transactionId":"t","leaseId":"l","status":"completed","consumerGroup":"g1"}`))
	wantCapture(t, caps, "B4b", c.Do("POST", "/api/v1/ack", `{"partitionId":"a7a12460-cce8-4d27-8dca-1b5bfa51e09c","leaseId":"l"}`))
	wantCapture(t, caps, "B4c", c.Do("POST", "/api/v1/ack/batch", `{"consumerGroup":"g1"}`))
	wantCapture(t, caps, "B4e", c.Do("POST", "/api/v1/ack/batch", `{"consumerGroup":"g1","acknowledgments":[{"transactionId":"t"}]}`))
	wantCapture(t, caps, "B5", c.Do("POST", "/api/v1/lease/00000000-0000-0000-0000-000000000000/extend", `{"seconds":60}`))
	wantCapture(t, caps, "B5b", c.Do("POST", "/api/v1/lease/00000000-0000-0000-0000-000000000000/extend", ""))
	wantCapture(t, caps, "B7", c.Do("POST", "/api/v1/push", `{"foo":1}`))
	wantCapture(t, caps, "B7b", c.Do("POST", "/api/v1/push", `{"items":[]}`))
	wantCapture(t, caps, "B7d", c.Do("POST", "/api/v1/push", `{"items":[{"queue":"smoke-lease","partition":1,"payload":{}}]}`))
	wantCapture(t, caps, "B7e", c.Do("POST", "/api/v1/push", `{"items":[{"payload":{}}]}`))
	wantCapture(t, caps, "B9", c.Get("/api/v1/pop/queue/no-such-queue?consumerGroup=g1"))
	wantCapture(t, caps, "B9b", c.Get("/api/v1/pop/queue/smoke-basic/partition/nope?consumerGroup=g1"))
	wantCapture(t, caps, "B9c", c.Get("/api/v1/pop/queue/no-such-queue?consumerGroup=g1&wait=true&timeout=10"))
	wantCapture(t, caps, "B10", c.Get("/api/v1/pop?queue=smoke-basic&batch=1&wait=false"))
	wantCapture(t, caps, "B10", c.Get("/api/v1/nope"))
	wantCapture(t, caps, "B10", c.Do("POST", "/api/v1/dlq/x/replay", ""))
	wantCapture(t, caps, "B10", c.Do("DELETE", "/api/v1/dlq/x", ""))

	wantCapture(t, caps, "F3", c.Do("POST", "/api/v1/consumer-groups/g1/queues/smoke-basic/seek", `{"timestamp":"1970-01-01T00:00:00Z"}`))
	wantCapture(t, caps, "F3b", c.Get("/api/v1/pop/queue/smoke-basic/partition/p1?consumerGroup=g1&batch=10"))
	wantCapture(t, caps, "F4", c.Do("POST", "/api/v1/consumer-groups/g1/queues/smoke-basic/seek", `{"toEnd":true}`))
	wantCapture(t, caps, "F4b", c.Get("/api/v1/pop/queue/smoke-basic/partition/p1?consumerGroup=g1&batch=10"))
	wantCapture(t, caps, "F5", c.Do("POST", "/api/v1/consumer-groups/g1/queues/smoke-basic/seek", `{}`))
	wantCapture(t, caps, "H1", c.Do("POST", "/api/v1/transaction", `{"operations":[{"type":"push","items":[{"queue":"smoke-tx","partition":"p1","payload":{"t":1}}]}]}`))
	wantCapture(t, caps, "J1", c.Do("POST", "/api/v1/configure", `{"queue":"smoke-qdlq","options":{"retryLimit":0,"deadLetterQueue":true}}`))

	// C: two failed acks with retryLimit 1 file the message; the list shows it.
	c.Do("POST", "/api/v1/configure", `{"queue":"smoke-dlq","options":{"leaseTime":30,"retryLimit":1,"deadLetterQueue":true}}`)
	wantCapture(t, caps, "C2", c.Do("POST", "/api/v1/push", `{"items":[{"queue":"smoke-dlq","partition":"p1","payload":{"will":"fail"}}]}`))
	for i, want := range []string{"C3.1", "C3.2"} {
		wantCapture(t, caps, want, read(c.Get("/api/v1/pop/queue/smoke-dlq/partition/p1?consumerGroup=g1&batch=1"), &pop))
		r := c.Do("POST", "/api/v1/ack", strings.Replace(ack(0, "failed"), "}", fmt.Sprintf(`,"error":"boom %d","consumerGroup":"g1"}`, i+1), 1))
		if i == 1 {
			wantCapture(t, caps, "C3.2ack", read(r, &acks))
			if acks[0]["dlq"] != true {
				t.Errorf("C3.2: the second failed with retryLimit 1 files the message, got %s", r.Body)
			}
		}
	}
	wantCapture(t, caps, "C4", c.Get("/api/v1/dlq?queue=smoke-dlq"))
	wantCapture(t, caps, "C5", c.Get("/api/v1/pop/queue/smoke-dlq/partition/p1?consumerGroup=g1&batch=1"))

	// F9, F10, and the deletions of the introspection transcript.
	c.Do("POST", "/api/v1/push", `{"items":[{"queue":"smoke-sub","partition":"p1","payload":{"h":1}}]}`)
	c.Get("/api/v1/pop/queue/smoke-sub?consumerGroup=g-new2&subscriptionMode=new&batch=10")
	c.Get("/api/v1/pop/queue/smoke-sub?consumerGroup=g-from&subscriptionFrom=1970-01-01T00:00:00Z&batch=10")
	wantCapture(t, caps, "F9", c.Delete("/api/v1/consumer-groups/g-new2/queues/smoke-sub"))
	wantCapture(t, caps, "F10", c.Delete("/api/v1/consumer-groups/g-from"))
	wantCapture(t, caps, "IC6", c.Delete("/api/v1/consumer-groups/nobody"))
	wantCapture(t, caps, "IC1", c.Delete("/api/v1/resources/queues/smoke-sub"))
	wantCapture(t, caps, "IC3", c.Delete("/api/v1/resources/queues/smoke-sub"))
}
