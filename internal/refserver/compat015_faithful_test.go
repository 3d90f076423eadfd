package refserver

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/testutil"
)

// The 0.15 mode reproduces the ways a real 0.15 broker loses messages, replayed here as they
// were captured from one; where the real broker's outcome depends on timing, the mode's is
// the worst case.

var (
	uuidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timePattern = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
)

// masked is a body with its ids and times masked, so that an answer compares byte for byte
// with a capture taken on another broker at another time.
func masked(body string) string {
	return timePattern.ReplaceAllString(uuidPattern.ReplaceAllString(body, "<id>"), "<time>")
}

// wantBody checks an answer byte for byte against a captured one, ids and times aside.
func wantBody(t *testing.T, what string, got testutil.Response, status int, want string) {
	t.Helper()
	if got.Status != status || masked(string(got.Body)) != masked(want) {
		t.Errorf("%s: %d %s\nwant %d %s", what, got.Status, got.Body, status, want)
	}
}

// The retry counter is the (partition, group)'s: with retryLimit 3, messages 0, 5, 10 and 15
// failing once each, their rounds acking the completed prefix and the failure, dead-letter
// message 15 on its first failure, and the lease stays held after it.
func Test015RetryCounterIsThePartitionsNotTheMessages(t *testing.T) {
	t.Parallel()
	const q = "cap-o43-375739770"
	_, c := start015(t)
	wantBody(t, "configure", c.Do("POST", "/api/v1/configure", `{"queue": "`+q+`", "options": {"leaseTime": 30, "retryLimit": 3, "deadLetterQueue": true, "dlqAfterMaxRetries": true}}`), 200,
		`{"configured":true,"namespace":"","options":{"completedRetentionSeconds":0,"deadLetterQueue":true,"delayedProcessing":0,"dlqAfterMaxRetries":true,"encryptionEnabled":false,"leaseTime":30,"maxSize":0,"maxWaitTimeSeconds":0,"priority":0,"retentionEnabled":false,"retentionSeconds":0,"retryDelay":1000,"retryLimit":3,"ttl":3600,"windowBuffer":0},"partitionId":"ff1d328e-0943-4ce8-98dd-17256557eb89","queue":"cap-o43-375739770","queueId":"f175c3d4-f57d-410e-9ce0-d1f47dfc5ff2","task":""}`)
	items := make([]testutil.Item, 20)
	for i := range items {
		items[i] = testutil.Item{Queue: q, Partition: "p", TransactionID: fmt.Sprintf("m%d", i), Payload: i}
	}
	c.Post("/api/v1/push", map[string]any{"items": items}).Want(t, http.StatusOK, nil)

	pop := testutil.Query("consumerGroup", "g", "subscriptionMode", "all", "batch", "20")
	ack := func(res *testutil.PopResult, completed int) testutil.Response {
		acks := make([]map[string]any, completed+1)
		for i := range acks {
			m := res.Messages[i]
			acks[i] = map[string]any{"transactionId": m.TransactionID, "partitionId": m.PartitionID, "leaseId": res.LeaseID, "status": "completed"}
		}
		acks[completed]["status"], acks[completed]["error"] = "failed", "declined"
		return c.Post("/api/v1/ack/batch", map[string]any{"acknowledgments": acks, "consumerGroup": "g"})
	}
	// The captured answers: the prefix's acks, then the failure's.
	prefix := func(from, n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `{"dlq":false,"error":null,"index":%d,"leaseReleased":false,"partitionName":"p","queueName":"%s","success":true,"transactionId":"m%d"},`, i, q, from+i)
		}
		return b.String()
	}
	failure := func(index, msg int, dlq bool) string {
		return fmt.Sprintf(`{"dlq":%t,"error":null,"index":%d,"leaseReleased":%t,"partitionName":"p","queueName":"%s","success":true,"transactionId":"m%d"}`, dlq, index, !dlq, q, msg)
	}

	ids, res := c.Pop("/api/v1/pop/queue/"+q+"/partition/p", pop)
	wantIDs(t, "round 1", ids[:1], "m0")
	wantBody(t, "round 1: m0 fails", ack(res, 0), 200, "["+failure(0, 0, false)+"]")
	for round, first := range []int{0, 5, 10} {
		ids, res = c.Pop("/api/v1/pop/queue/"+q+"/partition/p", pop)
		if len(ids) != 20-first || ids[0] != fmt.Sprintf("m%d", first) {
			t.Fatalf("round %d popped %v, want m%d onwards", round+2, ids, first)
		}
		dead := first == 10 // the fourth failure of the partition: the budget of 3 is spent
		wantBody(t, fmt.Sprintf("round %d: m%d..m%d completed, m%d fails", round+2, first, first+4, first+5),
			ack(res, 5), 200, "["+prefix(first, 5)+failure(5, first+5, dead)+"]")
	}
	wantBody(t, "round 5: the dead letter's ack leaves the lease held", c.Get("/api/v1/pop/queue/"+q+"/partition/p?"+pop.Encode()), 200,
		`{"error":"lease_held","messages":[],"success":false}`)
	wantBody(t, "the dead letters", c.Get("/api/v1/dlq?queue="+q), 200,
		`{"messages":[{"consumerGroup":"g","createdAt":"2026-12-01T16:03:24.354Z","data":15,"errorMessage":"declined","failedAt":"2026-12-01T16:03:24.422Z","id":"01a23258-b63d-700f-9642-4435f25da062","partition":"p","partitionId":"65243a88-6054-4514-8dd3-1d808c3b617d","producerSub":null,"queue":"cap-o43-375739770","retryCount":3,"transactionId":"m15"}],"pagination":{"limit":100,"offset":0}}`)
}

// A completed that finishes a whole leased batch resets the counter: the redelivered message
// popped alone and completed gives the next failure a fresh budget.
func Test015CompletingAWholeBatchResetsTheRetryCounter(t *testing.T) {
	t.Parallel()
	_, c := start015(t)
	c.Post("/api/v1/configure", `{"queue":"q","options":{"retryLimit":1}}`).Want(t, http.StatusOK, nil)
	c.Push("q", "p", "a", "b")
	one := testutil.Query("consumerGroup", "g", "subscriptionMode", "all", "batch", "1")
	_, res := c.Pop("/api/v1/pop/queue/q/partition/p", one)
	if acks := c.Ack(res, "g", "failed"); acks[0].DLQ {
		t.Fatalf("a's first failure spends the budget: %+v", acks[0])
	}
	ids, res := c.Pop("/api/v1/pop/queue/q/partition/p", one)
	wantIDs(t, "the redelivery", ids, "a")
	if acks := c.Ack(res, "g", "completed"); !acks[0].LeaseReleased {
		t.Fatalf("a completed alone finishes its batch: %+v", acks[0])
	}
	_, res = c.Pop("/api/v1/pop/queue/q/partition/p", one)
	if acks := c.Ack(res, "g", "failed"); acks[0].DLQ {
		t.Fatalf("b's first failure after a whole batch completed: the counter was not reset: %+v", acks[0])
	}
}

// A completed that does not finish its batch resets nothing.
func Test015APartialBatchKeepsTheRetryCounter(t *testing.T) {
	t.Parallel()
	_, c := start015(t)
	c.Post("/api/v1/configure", `{"queue":"q","options":{"retryLimit":1}}`).Want(t, http.StatusOK, nil)
	c.Push("q", "p", "a", "b", "c")
	ten := testutil.Query("consumerGroup", "g", "subscriptionMode", "all", "batch", "10")
	_, res := c.Pop("/api/v1/pop/queue/q/partition/p", ten)
	if acks := c.Ack(res, "g", "failed"); acks[0].DLQ {
		t.Fatalf("a's first failure spends the budget: %+v", acks[0])
	}
	_, res = c.Pop("/api/v1/pop/queue/q/partition/p", ten)
	if acks := c.Ack(res, "g", "completed", "failed"); !acks[1].DLQ {
		t.Fatalf("b's first failure after a's completed in a batch of three: want a dead letter, got %+v", acks)
	}
}

// A fresh "new" group whose first pop waits on an empty queue loses every message pushed
// during that wait: its start is stored after them, and a later subscriptionFrom does not
// bring them back. A fresh group with that subscriptionFrom gets them all.
func Test015AWaitingFirstPopLosesWhatArrivesMeanwhile(t *testing.T) {
	t.Parallel()
	const q = "cap-o44-375739770"
	srv, c := start015(t)
	wantBody(t, "configure", c.Do("POST", "/api/v1/configure", `{"queue": "`+q+`", "options": {"leaseTime": 30}}`), 200,
		`{"configured":true,"namespace":"","options":{"completedRetentionSeconds":0,"deadLetterQueue":false,"delayedProcessing":0,"dlqAfterMaxRetries":false,"encryptionEnabled":false,"leaseTime":30,"maxSize":0,"maxWaitTimeSeconds":0,"priority":0,"retentionEnabled":false,"retentionSeconds":0,"retryDelay":1000,"retryLimit":3,"ttl":3600,"windowBuffer":0},"partitionId":"6f3bec07-ad04-44fb-bcc6-fba264886fce","queue":"cap-o44-375739770","queueId":"b0bffa16-e507-4f88-a61e-96f5d1db27cd","task":""}`)
	before := srv.Now().Add(-2 * time.Second).UTC().Format("2006-01-02T15:04:05.000Z")

	answer := make(chan testutil.Response, 1)
	go func() {
		answer <- c.Do("GET", "/api/v1/pop/queue/"+q+"?consumerGroup=G&subscriptionMode=new&batch=10&wait=true&timeout=1500", "")
	}()
	testutil.Eventually(t, "G's first pop to wait", func() bool { return srv.WaitingPops() == 1 })
	for _, tx := range []string{"t1", "t2", "t3"} {
		wantBody(t, "push "+tx, c.Do("POST", "/api/v1/push", `{"items": [{"queue": "`+q+`", "transactionId": "`+tx+`", "payload": {"tx": "`+tx+`"}}]}`), 200,
			`[{"index":0,"message_id":"01a23258-b60b-7000-ba5f-e335555df09d","partition_id":"6f3bec07-ad04-44fb-bcc6-fba264886fce","queueName":"cap-o44-375739770","status":"queued","trace_id":null,"transaction_id":"`+tx+`"}]`)
	}
	if srv.WaitingPops() != 1 {
		t.Fatal("G's first pop stopped waiting before its timeout: the pushes reached it")
	}
	wantBody(t, "G's first pop", testutil.Recv(t, answer, "G's first pop"), 200,
		`{"consumerGroup":"G","leaseId":null,"messages":[],"partition":"","partitionId":null,"queue":"cap-o44-375739770","success":true}`)

	from := url.Values{"subscriptionFrom": {before}, "batch": {"10"}}
	from.Set("consumerGroup", "G")
	wantBody(t, "G again, from before the pushes", c.Get("/api/v1/pop/queue/"+q+"?"+from.Encode()), 200,
		`{"error":"no_available_partition","messages":[],"success":false}`)
	from.Set("consumerGroup", "H")
	ids, _ := c.Pop("/api/v1/pop/queue/"+q, from)
	wantIDs(t, "a fresh group H from before the pushes", ids, "t1", "t2", "t3")

	c.Push(q, "", "t4") // pushed once G's start is stored: delivered
	ids, _ = c.Pop("/api/v1/pop/queue/"+q, testutil.Query("consumerGroup", "G", "subscriptionMode", "new", "batch", "10"))
	wantIDs(t, "G after its start was stored", ids, "t4")
}

// A first pop that does not wait, or that names its start with subscriptionFrom, loses
// nothing: the workarounds the waiting pop's loss leaves a client.
func Test015AFirstPopWithAStartLosesNothingWhileWaiting(t *testing.T) {
	t.Parallel()
	srv, c := start015(t)
	c.Post("/api/v1/configure", `{"queue":"q"}`).Want(t, http.StatusOK, nil)
	from := srv.Now().Add(-time.Second).UTC().Format("2006-01-02T15:04:05.000Z")
	answer := make(chan []string, 1)
	go func() {
		ids, _ := c.Pop("/api/v1/pop/queue/q", url.Values{"consumerGroup": {"g"}, "subscriptionFrom": {from}, "batch": {"10"}, "wait": {"true"}, "timeout": {"20000"}})
		answer <- ids
	}()
	testutil.Eventually(t, "the pop to wait", func() bool { return srv.WaitingPops() == 1 })
	c.Push("q", "", "m1")
	wantIDs(t, "a waiting first pop with subscriptionFrom", testutil.Recv(t, answer, "the pop's answer"), "m1")
}

// A waiting pop on a queue configure created, which never held a message, is answered as
// soon as the first message is pushed, in queue mode as for a group reading from the start.
func Test015AFirstMessageWakesAPopOnAConfiguredQueue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ what, path, params, partition string }{
		{"queue mode", "/api/v1/pop/queue/q", "", ""},
		{"queue mode, a partition the push makes", "/api/v1/pop/queue/q", "", "p1"},
		{"a group reading from the start", "/api/v1/pop/queue/q", "&consumerGroup=g&subscriptionMode=all", ""},
		{"a partition pop", "/api/v1/pop/queue/q/partition/Default", "&consumerGroup=g", ""},
	} {
		t.Run(tc.what, func(t *testing.T) {
			t.Parallel()
			srv, c := start015(t)
			c.Post("/api/v1/configure", `{"queue":"q"}`).Want(t, http.StatusOK, nil)
			answer := make(chan testutil.Response, 1)
			go func() { answer <- c.Get(tc.path + "?wait=true&timeout=20000" + tc.params) }()
			testutil.Eventually(t, "the pop to wait", func() bool { return srv.WaitingPops() == 1 })
			c.Push("q", tc.partition, "m1")
			var res testutil.PopResult
			testutil.Recv(t, answer, "the pop's answer").Want(t, http.StatusOK, &res)
			if len(res.Messages) != 1 || res.Messages[0].TransactionID != "m1" {
				t.Fatalf("answer %+v, want m1", res)
			}
		})
	}
}

// /health carries 0.15's shared_state block, with the transport block of a broker whose
// replicas sync, beside the captured keys.
func Test015HealthCarriesTheSharedStateAndTransport(t *testing.T) {
	t.Parallel()
	caps := captures015(t)
	_, c := start015(t)
	got := c.Get("/health")
	var body map[string]any
	got.Want(t, http.StatusOK, &body)
	shared := obj(t, body["shared_state"], "shared_state")
	transport := obj(t, shared["transport"], "shared_state.transport")
	testutil.WantKeys(t, "transport", transport, "learned_identities", "learned_identities_count", "messages_dropped",
		"messages_received", "messages_sent", "peer_count", "peers", "port", "sequence_rejections", "server_id",
		"session_id", "signature_failures")
	if shared["enabled"] != true || shared["running"] != true {
		t.Errorf("a broker with a transport has its sync enabled and running: %v", shared)
	}
	delete(shared, "transport")
	if w, g := shape(t, caps["health"].Response), shapeOf(body); w != g {
		t.Errorf("health without its transport: shape differs from the 0.15 capture\n got: %s\nwant: %s", g, w)
	}
	if body["version"] != "1.0.0" {
		t.Errorf("version %v, want 0.15's fixed 1.0.0", body["version"])
	}
}

// A "new" start a partition pop decided holds for that partition alone: the group's first pop
// of another partition starts from its own arrival there, skipping what was pushed there after
// the group's start, while its lag there counts every message.
func Test015APartitionPopsStartHoldsForItsPartitionAlone(t *testing.T) {
	t.Parallel()
	srv, c := start015(t, withManualClock())
	c.Push("q", "p0", "old0")
	c.Push("q", "p2", "old2")
	newPop := testutil.Query("consumerGroup", "g", "subscriptionMode", "new", "batch", "10")
	ids, _ := c.Pop("/api/v1/pop/queue/q/partition/p2", newPop) // decides g's start, on p2
	wantIDs(t, "g's first pop", ids)
	srv.Advance(time.Second)
	c.Push("q", "p0", "after0")
	c.Push("q", "p2", "after2")
	var d map[string]struct {
		Partitions []struct {
			Partition string `json:"partition"`
			OffsetLag int64  `json:"offsetLag"`
		} `json:"partitions"`
	}
	c.Get("/api/v1/consumer-groups/g").Want(t, http.StatusOK, &d)
	if p := d["q"].Partitions; len(p) != 2 || p[0].Partition != "p0" || p[0].OffsetLag != 2 || p[1].OffsetLag != 1 {
		t.Errorf("g's rows: %+v, want p0 counting both its messages and p2 the one after the start", p)
	}
	ids, _ = c.Pop("/api/v1/pop/queue/q/partition/p2", newPop)
	wantIDs(t, "g on p2", ids, "after2")
	ids, _ = c.Pop("/api/v1/pop/queue/q/partition/p0", newPop)
	wantIDs(t, "g's first pop of p0 starts from its own arrival", ids) // after0 is skipped
	c.Push("q", "p0", "later0")
	ids, _ = c.Pop("/api/v1/pop/queue/q/partition/p0", newPop)
	wantIDs(t, "g on p0 once it started there", ids, "later0")
}
