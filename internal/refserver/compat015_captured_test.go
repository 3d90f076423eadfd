package refserver

import (
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/queenmq/queen-go/internal/testutil"
)

// The 0.15 mode's further answers, each against what a real 0.15 broker answered: byte for
// byte, ids and times aside, where the capture's numbers do not come from 0.15's background
// statistics (which a live broker reports two minutes late); key sets and JSON types elsewhere.

// capturedFile is a capture of the introspection transcript kept in the module's testdata.
func capturedFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../../testdata/introspection015/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// lines is a JSON array as its elements' texts, for a capture kept one element a line.
func lines(t *testing.T, body []byte) []string {
	t.Helper()
	var list []json.RawMessage
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatalf("not an array: %s", body)
	}
	out := make([]string, len(list))
	for i, e := range list {
		out[i] = masked(string(e))
	}
	return out
}

// The browse's status view, busStatus and leaseExpiresAt, the message details, the group
// reads and the lagging pairs, read 25 s after the first push as captured.
func Test015ReadsMatchTheCapturesByteForByte(t *testing.T) {
	t.Parallel()
	_, c, ids := captureState015(t)
	for _, tc := range []struct{ file, path string }{
		{"messages.json", "/api/v1/messages?queue=spec-insp-115691"},
		{"messages-by-partition.json", "/api/v1/messages?queue=spec-insp-115691&partition=p0"},
		{"messages-pending.json", "/api/v1/messages?queue=spec-insp-115691&status=pending"},
		{"messages-processing.json", "/api/v1/messages?queue=spec-insp-115691&status=processing"},
		{"messages-completed.json", "/api/v1/messages?queue=spec-insp-115691&status=completed"},
		{"messages-dead-letter.json", "/api/v1/messages?queue=spec-insp-115691&status=dead_letter"},
		{"messages-failed.json", "/api/v1/messages?queue=spec-insp-115691&status=failed"},
		{"messages-limit-2-offset-2.json", "/api/v1/messages?queue=spec-insp-115691&limit=2&offset=2"},
		{"messages-limit-not-a-number.json", "/api/v1/messages?queue=spec-insp-115691&partition=p2&limit=abc"},
		{"message-dead-lettered-in-queue-mode.json", "/api/v1/messages/" + ids["p0"] + "/p0-0"},
		{"message-leased-in-queue-mode.json", "/api/v1/messages/" + ids["p0"] + "/p0-1"},
		{"message-dead-lettered-by-gA.json", "/api/v1/messages/" + ids["p2"] + "/p2-1"},
		{"message-done-by-gA-leased-by-gB.json", "/api/v1/messages/" + ids["p1"] + "/p1-0"},
		{"group-gA-caught-up.json", "/api/v1/consumer-groups/spec-gA"},
		{"group-gB-lagging.json", "/api/v1/consumer-groups/spec-gB"},
		{"group-gC-new-start.json", "/api/v1/consumer-groups/spec-gC"},
	} {
		wantBody(t, tc.file, c.Get(tc.path), http.StatusOK, capturedFile(t, tc.file))
	}
	for _, tc := range []struct{ file, path string }{
		{"groups.ndjson", "/api/v1/consumer-groups"},
		{"lagging-min-0.ndjson", "/api/v1/consumer-groups/lagging?minLagSeconds=0"},
	} {
		want := strings.Split(masked(capturedFile(t, tc.file)), "\n")
		got := lines(t, c.Get(tc.path).Body)
		// 0.15 orders equal time lags differently from one call to the next: compare as sets.
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", tc.file, strings.Join(got, "\n     "), strings.Join(want, "\n     "))
		}
	}
}

// The six routes 0.15 serves besides the SDK's answer JSON as captured, not a 404 page.
func Test015ServesTheResourceAndStatusRoutes(t *testing.T) {
	t.Parallel()
	_, c, _ := captureState015(t)
	elem := func(body string) string { // one element of a captured list
		return `{"queues":[` + body + `]}`
	}
	for _, tc := range []struct{ what, path, capture string }{
		{"the bare queue list", "/api/v1/resources/queues", elem(`{"createdAt":"2026-12-01T09:01:31.059Z","id":"81585a33-3a36-4e69-b116-f8c2cd8a6b1d","messages":{"pending":5,"processing":4,"total":11},"name":"spec-insp-115691","namespace":"spec-ns","partitions":4,"task":"spec-task"}`)},
		{"a queue's description", "/api/v1/resources/queues/spec-insp-115691", `{"createdAt":"2026-12-01T09:01:31.059Z","id":"81585a33-3a36-4e69-b116-f8c2cd8a6b1d","name":"spec-insp-115691","namespace":"spec-ns","partitions":[{"createdAt":"2026-12-01T09:01:31.059Z","id":"67d5272a-d772-49b8-86cf-10a5ea31d5f8","name":"Default","newestMessage":null,"oldestMessage":null,"stats":{"completed":0,"deadLetter":0,"failed":0,"pending":0,"processing":0,"total":0}},{"createdAt":"2026-12-01T09:01:31.103Z","id":"4166a400-c99c-4023-ba82-2b290ea47e34","name":"p0","newestMessage":"2026-12-01T09:01:34.510Z","oldestMessage":"2026-12-01T09:01:34.510Z","stats":{"completed":5,"deadLetter":1,"failed":0,"pending":4,"processing":2,"total":5}}],"task":"spec-task","totals":{"completed":10,"deadLetter":2,"failed":0,"pending":9,"processing":4,"total":11}}`},
		{"the namespaces", "/api/v1/resources/namespaces", `{"namespaces":[{"messages":{"pending":5,"total":11},"namespace":"spec-ns","partitions":5,"queues":2}]}`},
		{"the tasks", "/api/v1/resources/tasks", `{"tasks":[{"messages":{"pending":5,"total":11},"partitions":4,"queues":1,"task":"spec-task"},{"messages":{"pending":0,"total":0},"partitions":1,"queues":1,"task":"spec-task-2"}]}`},
		{"the dashboard", "/api/v1/status?queue=spec-insp-115691", `{"bucketMinutes":1,"deadLetterQueue":{"affectedPartitions":0,"topErrors":[],"totalMessages":34},"errors":{"ackFailed":60,"dbErrors":2,"dlqMessages":34},"leases":{"active":3,"partitionsWithLeases":3,"totalAcked":0,"totalBatchSize":5},"messages":{"batchEfficiency":{"ack":1.6,"pop":1.59,"push":53.4},"completed":62565,"deadLetter":34,"failed":60,"pending":0,"processing":0,"requests":{"ack":39189,"pop":39919,"push":837},"total":44694},"pointCount":1,"queues":[],"statsAge":56,"throughput":[{"ackFailed":0,"avgEventLoopLagMs":null,"avgLagMs":0,"dbErrors":null,"dbPoolActive":null,"dbPoolIdle":null,"dbPoolSize":null,"dlqCount":null,"ingested":0,"ingestedPerSecond":0.0,"maxEventLoopLagMs":null,"maxLagMs":0,"minFreeSlots":null,"popMessages":0,"popPerSecond":0.0,"processed":0,"processedPerSecond":0.0,"queenCpuSysPct":null,"queenCpuUserPct":null,"queenRssMb":null,"timestamp":"2026-12-01T09:01:00Z"}],"timeRange":{"from":"2026-12-01T08:01:56.729Z","to":"2026-12-01T09:01:56.729Z"},"workers":[{"avgEventLoopLagMs":0,"dbConnections":25,"freeSlots":25,"hostname":"vm","jobQueueSize":0,"maxEventLoopLagMs":0,"messagesProcessed":0,"workerId":0}]}`},
	} {
		got := c.Get(tc.path)
		if got.Status != http.StatusOK || got.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %q, want a 200 JSON answer", tc.what, got.Status, got.Header.Get("Content-Type"))
			continue
		}
		if diffs := sameShape(tc.what, decodeAny(t, tc.what, []byte(tc.capture)), decodeAny(t, tc.what, got.Body)); len(diffs) > 0 {
			t.Errorf("%s: %v\n body: %s", tc.what, diffs, got.Body)
		}
	}

	// A queue's bare message list: every message, newest first, whatever limit says, with queue
	// mode's status (p2-0, which both named groups passed, is pending); an offset past 0 is
	// 0.15's NULL, an unknown queue an empty body.
	for _, path := range []string{"/api/v1/status/queues/spec-insp-115691/messages", "/api/v1/status/queues/spec-insp-115691/messages?limit=2"} {
		got := c.Get(path)
		want := `[{"createdAt":"2026-12-01T09:01:34.510Z","id":"01a230d6-83a8-7001-ab63-e16b3f4132fc","partition":"p2","partitionId":"e5465168-70ed-4e9f-9d10-72cb23df38d3","queue":"spec-insp-115691","queuePath":"spec-insp-115691/p2","status":"pending","transactionId":"p2-2"},{"createdAt":"2026-12-01T09:01:34.510Z","id":"01a230d6-83a8-7000-9dd6-b2378231a008","partition":"p0","partitionId":"4166a400-c99c-4023-ba82-2b290ea47e34","queue":"spec-insp-115691","queuePath":"spec-insp-115691/p0","status":"processing","transactionId":"p0-4"},{"createdAt":"2026-12-01T09:01:31.103Z","id":"01a230d6-7659-7008-9a62-2cbb7c64690c","partition":"p2","partitionId":"e5465168-70ed-4e9f-9d10-72cb23df38d3","queue":"spec-insp-115691","queuePath":"spec-insp-115691/p2","status":"dead_letter","transactionId":"p2-1"},{"createdAt":"2026-12-01T09:01:31.103Z","id":"01a230d6-7659-7007-bd02-c97ba8174daa","partition":"p2","partitionId":"e5465168-70ed-4e9f-9d10-72cb23df38d3","queue":"spec-insp-115691","queuePath":"spec-insp-115691/p2","status":"pending","transactionId":"p2-0"},{"createdAt":"2026-12-01T09:01:31.103Z","id":"01a230d6-7659-7006-bf7f-e4b2cfc664cf","partition":"p1","partitionId":"07f80c2c-b60a-4353-9bbd-c12365d46fd8","queue":"spec-insp-115691","queuePath":"spec-insp-115691/p1","status":"pending","transactionId":"p1-2"},{"createdAt":"2026-12-01T09:01:31.103Z","id":"01a230d6-7659-7005-abd4-a37fd5414dc2","partition":"p1","partitionId":"07f80c2c-b60a-4353-9bbd-c12365d46fd8","queue":"spec-insp-115691","queuePath":"spec-insp-115691/p1","status":"pending","transactionId":"p1-1"},{"createdAt":"2026-12-01T09:01:31.103Z","id":"01a230d6-7659-7004-a42a-96918d702cde","partition":"p1","partitionId":"07f80c2c-b60a-4353-9bbd-c12365d46fd8","queue":"spec-insp-115691","queuePath":"spec-insp-115691/p1","status":"pending","transactionId":"p1-0"},{"createdAt":"2026-12-01T09:01:31.103Z","id":"01a230d6-7659-7003-a28c-39c2b3ac5943","partition":"p0","partitionId":"4166a400-c99c-4023-ba82-2b290ea47e34","queue":"spec-insp-115691","queuePath":"spec-insp-115691/p0","status":"processing","transactionId":"p0-3"},{"createdAt":"2026-12-01T09:01:31.103Z","id":"01a230d6-7659-7002-8a11-354cc9e30366","partition":"p0","partitionId":"4166a400-c99c-4023-ba82-2b290ea47e34","queue":"spec-insp-115691","queuePath":"spec-insp-115691/p0","status":"processing","transactionId":"p0-2"},{"createdAt":"2026-12-01T09:01:31.103Z","id":"01a230d6-7659-7001-80fd-c274e9681ad8","partition":"p0","partitionId":"4166a400-c99c-4023-ba82-2b290ea47e34","queue":"spec-insp-115691","queuePath":"spec-insp-115691/p0","status":"processing","transactionId":"p0-1"},{"createdAt":"2026-12-01T09:01:31.103Z","id":"01a230d6-7659-7000-8865-bd36ed1ff208","partition":"p0","partitionId":"4166a400-c99c-4023-ba82-2b290ea47e34","queue":"spec-insp-115691","queuePath":"spec-insp-115691/p0","status":"dead_letter","transactionId":"p0-0"}]`
		wantBody(t, path, got, http.StatusOK, want)
	}
	wantBody(t, "offset 1", c.Get("/api/v1/status/queues/spec-insp-115691/messages?offset=1"), http.StatusOK, `{"success":true,"value":null}`)
	wantBody(t, "an unknown queue's messages", c.Get("/api/v1/status/queues/spec-insp-nope/messages"), http.StatusOK, "")
	wantBody(t, "an unknown queue's description", c.Get("/api/v1/resources/queues/spec-insp-nope"), http.StatusOK, `{"error":"Queue not found"}`)
	wantBody(t, "the empty queue's description", c.Get("/api/v1/resources/queues/spec-insp-115691-empty"), http.StatusOK,
		`{"createdAt":"2026-12-01T09:01:31.074Z","id":"2015fb5f-f3dd-4eb8-9411-0f99042103a5","name":"spec-insp-115691-empty","namespace":"spec-ns","partitions":[{"createdAt":"2026-12-01T09:01:31.074Z","id":"b25d89c4-46af-4db2-ac80-4afee090efa6","name":"Default","newestMessage":null,"oldestMessage":null,"stats":{"completed":0,"deadLetter":0,"failed":0,"pending":0,"processing":0,"total":0}}],"task":"spec-task-2","totals":{"completed":0,"deadLetter":0,"failed":0,"pending":0,"processing":0,"total":0}}`)
}

// A queue a push creates is its own namespace; one configure creates has the one it names.
func Test015APushCreatedQueueIsItsOwnNamespace(t *testing.T) {
	t.Parallel()
	_, c := start015(t)
	c.Post("/api/v1/configure", `{"queue":"smoke-qdlq","options":{"retryLimit":0,"deadLetterQueue":true}}`).Want(t, http.StatusOK, nil)
	c.Post("/api/v1/transaction", `{"operations":[{"type":"push","items":[{"queue":"smoke-tx","partition":"p1","payload":{"t":1}}]}]}`).Want(t, http.StatusOK, nil)
	c.Push("smoke-double", "", "a")
	got := lines(t, []byte(strings.TrimSuffix(strings.TrimPrefix(string(c.Get("/api/v1/resources/queues").Body), `{"queues":`), "}")))
	// As captured, newest first; the counts are this broker's live ones.
	want := []string{
		`{"createdAt":"<time>","id":"<id>","messages":{"pending":1,"processing":0,"total":1},"name":"smoke-double","namespace":"smoke-double","partitions":1,"task":""}`,
		`{"createdAt":"<time>","id":"<id>","messages":{"pending":1,"processing":0,"total":1},"name":"smoke-tx","namespace":"smoke-tx","partitions":1,"task":""}`,
		`{"createdAt":"<time>","id":"<id>","messages":{"pending":0,"processing":0,"total":0},"name":"smoke-qdlq","namespace":"","partitions":1,"task":""}`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("queues:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}

// A queue's read-back config says what configure answered: deadLetterQueue false, retryDelay
// 1000 and ttl 3600 unless configured, and so does a message's queueConfig.
func Test015ReadBackConfigIsWhatConfigureAnswered(t *testing.T) {
	t.Parallel()
	_, c := start015(t)
	var answer struct {
		Options map[string]any `json:"options"`
	}
	c.Post("/api/v1/configure", `{"queue":"q","options":{"leaseTime":30}}`).Want(t, http.StatusOK, &answer)
	c.Push("q", "", "a")
	var detail struct {
		Queue struct {
			Config map[string]any `json:"config"`
		} `json:"queue"`
		Partitions []struct {
			ID string `json:"id"`
		} `json:"partitions"`
	}
	c.Get("/api/v1/status/queues/q").Want(t, http.StatusOK, &detail)
	for _, k := range []string{"deadLetterQueue", "leaseTime", "retryDelay", "retryLimit", "ttl"} {
		if detail.Queue.Config[k] != answer.Options[k] {
			t.Errorf("config %s: %v, configure answered %v", k, detail.Queue.Config[k], answer.Options[k])
		}
	}
	if detail.Queue.Config["maxQueueSize"] != 0.0 {
		t.Errorf("maxQueueSize %v, want 0", detail.Queue.Config["maxQueueSize"])
	}
	var msg struct {
		QueueConfig map[string]any `json:"queueConfig"`
	}
	c.Get("/api/v1/messages/"+detail.Partitions[0].ID+"/a").Want(t, http.StatusOK, &msg)
	wantConf := map[string]any{"leaseTime": 30.0, "priority": 0.0, "retryDelay": 1000.0, "retryLimit": 3.0, "ttl": 3600.0}
	for k, v := range wantConf {
		if msg.QueueConfig[k] != v {
			t.Errorf("queueConfig %s: %v, want %v", k, msg.QueueConfig[k], v)
		}
	}
	// Dead letters are filed all the same.
	c.Post("/api/v1/configure", `{"queue":"q","options":{"retryLimit":0}}`).Want(t, http.StatusOK, nil)
	_, res := c.Pop("/api/v1/pop/queue/q", testutil.Query())
	if acks := c.Ack(res, "__QUEUE_MODE__", "failed"); !acks[0].DLQ {
		t.Errorf("deadLetterQueue false is ignored: the failure files the message, got %+v", acks[0])
	}
}

// The dead-letter list past offset 0 is 0.15's NULL answer.
func Test015DeadLettersPastOffsetZeroAreNull(t *testing.T) {
	t.Parallel()
	_, c := start015(t)
	wantBody(t, "dlq offset 1", c.Get("/api/v1/dlq?offset=1"), http.StatusOK, `{"success":true,"value":null}`)
	wantBody(t, "dlq offset 0", c.Get("/api/v1/dlq?offset=0"), http.StatusOK, `{"messages":[],"pagination":{"limit":100,"offset":0}}`)
}

// A committed transaction's ack entries carry no leaseReleased or partitionId; a rolled-back
// one carries its results and transactionId.
func Test015TransactionAnswers(t *testing.T) {
	t.Parallel()
	_, c := start015(t)
	c.Push("q", "p", "a", "b")
	_, res := c.Pop("/api/v1/pop/queue/q", testutil.Query("batch", "10"))
	m := res.Messages[0]
	ack := `{"type":"ack","transactionId":"` + m.TransactionID + `","partitionId":"` + m.PartitionID + `","leaseId":"` + m.LeaseID + `","status":"completed"}`
	wantBody(t, "a committed ack and push", c.Do("POST", "/api/v1/transaction", `{"operations":[`+ack+`,{"type":"push","items":[{"queue":"q","partition":"p","transactionId":"c"}]}]}`), http.StatusOK,
		`{"results":[{"dlq":false,"error":null,"index":0,"success":true,"transactionId":"a","type":"ack"},{"index":1,"messageId":"<id>","partitionId":"<id>","queueName":"q","success":true,"transactionId":"c","type":"push"}],"success":true,"transactionId":"<id>"}`)
	wantBody(t, "a rolled-back duplicate push", c.Do("POST", "/api/v1/transaction", `{"operations":[{"type":"push","items":[{"queue":"q","partition":"p","transactionId":"b"}]}]}`), http.StatusOK,
		`{"error":"operation 0: item 0: duplicate key value violates unique constraint: transactionId \"b\" exists","results":[],"success":false,"transactionId":"<id>"}`)
}

// A path not in canonical form answers 0.15's 404 page, never a redirect to its cleaned form.
func Test015NonCanonicalPathsAreNotFound(t *testing.T) {
	t.Parallel()
	_, c := start015(t)
	c.Push("q", "", "a")
	for _, path := range []string{"//api/v1/dlq", "/api/v1/./dlq", "/api/v1/pop/queue/q/../q", "/api/v1/resources/queues/"} {
		got := c.Get(path)
		if got.Status != http.StatusNotFound || string(got.Body) != notFound015 {
			t.Errorf("%s: %d %s, want 0.15's 404", path, got.Status, got.Body)
		}
	}
}
