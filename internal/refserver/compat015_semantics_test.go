package refserver

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/testutil"
)

// The 0.15 mode's semantics, each as SPEC.md §4 states 0.15 behaves, bugs included.

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

// pop answers the popped transactionIds and the whole answer.
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

// O5, O9: no offset or deliveryAttempt; leaseSeconds and autopilot ignored, batch defaults to 1.
func TestCompat015PopIgnoresLeaseSecondsAndAutopilot_O5_O9(t *testing.T) {
	t.Parallel()
	_, c := start015(t)
	c.Push("q", "p", "a", "b", "c")
	r := c.Get("/api/v1/pop/queue/q?consumerGroup=g&autopilot=true&leaseSeconds=5&subscriptionMode=all")
	if strings.Contains(string(r.Body), `"offset"`) || strings.Contains(string(r.Body), `"deliveryAttempt"`) {
		t.Fatalf("0.15 sends no offset or deliveryAttempt: %s", r.Body)
	}
	var res testutil.PopResult
	r.Want(t, http.StatusOK, &res)
	if len(res.Messages) != 1 {
		t.Fatalf("autopilot with no batch leased %d messages, want 1", len(res.Messages))
	}
	var ext []testutil.ExtendResult
	c.Post("/api/v1/lease/"+res.LeaseID+"/extend", `{"seconds":1}`).Want(t, http.StatusOK, &ext)
	exp, err := time.Parse(time.RFC3339, *ext[0].ExpiresAt)
	if err != nil || time.Until(exp) < 250*time.Second {
		t.Fatalf("the lease is the queue's 300 s leaseTime, not leaseSeconds=5: expires %v (%v)", exp, err)
	}
}

// O13: lax parameters: an unparsable integer takes its default, a boolean other than true/1
// is false; nothing is refused.
func TestCompat015LaxParameters_O13(t *testing.T) {
	t.Parallel()
	_, c := start015(t)
	c.Push("q", "", "a", "b")
	ids, _ := c.Pop("/api/v1/pop/queue/q", testutil.Query("batch", "many", "wait", "yes", "timeout", "-5", "partitions", "999"))
	wantIDs(t, "batch=many", ids, "a")
}

// O14: with no mode, or new-only, a group reads the history; "new" skips it.
func TestCompat015DefaultSubscriptionIsAll_O14(t *testing.T) {
	t.Parallel()
	_, c := start015(t)
	c.Push("q", "p", "a", "b")
	for _, mode := range []string{"", "new-only", "all"} {
		ids, _ := c.Pop("/api/v1/pop/queue/q", testutil.Query("consumerGroup", "g"+mode, "batch", "10", "subscriptionMode", mode))
		wantIDs(t, "mode "+mode, ids, "a", "b")
	}
	ids, res := c.Pop("/api/v1/pop/queue/q", testutil.Query("consumerGroup", "gnew", "batch", "10", "subscriptionMode", "new"))
	wantIDs(t, "mode new", ids)
	if !res.Success || res.LeaseID == "" || res.Partition != "p" {
		t.Fatalf("a new group's first pop claims the partition with nothing in it (D2b): %+v", res)
	}
}

// O27: a "new" start is recorded only when a pop finds a partition with a message: a group
// whose first pops found the queue empty skips what was pushed before its next pop.
func TestCompat015NewStartRecordedOnlyOnAClaim_O27(t *testing.T) {
	t.Parallel()
	_, c := start015(t)
	c.Post("/api/v1/configure", `{"queue":"q"}`).Want(t, http.StatusOK, nil)
	newPop := testutil.Query("consumerGroup", "g", "batch", "10", "subscriptionMode", "new")
	ids, _ := c.Pop("/api/v1/pop/queue/q", newPop)
	wantIDs(t, "empty queue", ids)
	c.Push("q", "p", "m1", "m2", "m3")
	ids, _ = c.Pop("/api/v1/pop/queue/q", newPop)
	wantIDs(t, "after the push", ids) // 2.0 would deliver m1..m3
	c.Push("q", "p", "m4")
	ids, _ = c.Pop("/api/v1/pop/queue/q", newPop)
	wantIDs(t, "once the start is stored", ids, "m4")
}

// O17: a lease ends once as many acks as it leased messages came, wherever they point; acking
// only the last keeps it.
func TestCompat015LeaseEndsByCount_O17(t *testing.T) {
	t.Parallel()
	_, c := start015(t)
	c.Push("q", "p", "a", "b", "c")
	all := testutil.Query("consumerGroup", "g", "batch", "10", "subscriptionMode", "all")
	_, res := c.Pop("/api/v1/pop/queue/q/partition/p", all)
	last := &testutil.PopResult{Messages: res.Messages[2:]}
	if acks := c.Ack(last, "g", "completed"); acks[0].LeaseReleased {
		t.Fatalf("acking only the last message released the lease: %+v", acks[0])
	}
	var refused map[string]any
	c.Get("/api/v1/pop/queue/q/partition/p?"+all.Encode()).Want(t, http.StatusOK, &refused)
	if refused["error"] != "lease_held" {
		t.Fatalf("the lease still holds: want lease_held, got %v", refused)
	}
	if acks := c.Ack(res, "g", "completed", "completed"); !acks[1].LeaseReleased {
		t.Fatalf("the third ack of three ends the lease: %+v", acks)
	}
}

// O18: in a batch ack, a completed above a failed moves the cursor past it and loses the failed
// message; an unfenced completed on an earlier message moves the cursor back.
func TestCompat015CompletedAboveFailedLosesIt_O18(t *testing.T) {
	t.Parallel()
	_, c := start015(t)
	c.Push("q", "p", "a", "b", "c")
	all := testutil.Query("consumerGroup", "g", "batch", "10", "subscriptionMode", "all")
	_, res := c.Pop("/api/v1/pop/queue/q/partition/p", all)
	c.Ack(res, "g", "completed", "failed", "completed")
	ids, _ := c.Pop("/api/v1/pop/queue/q/partition/p", all)
	wantIDs(t, "after completed, failed, completed", ids) // 2.0 would redeliver b and c

	m := res.Messages[0]
	c.Post("/api/v1/ack", map[string]any{"transactionId": m.TransactionID, "partitionId": m.PartitionID, "consumerGroup": "g"}).Want(t, http.StatusOK, nil)
	ids, _ = c.Pop("/api/v1/pop/queue/q/partition/p", all)
	wantIDs(t, "after re-acking a without a lease", ids, "b", "c")
}

// O20: a failed from a group that never read the partition files the message at once, and the
// retry counter is not reset after a dead letter.
func TestCompat015FailedWithoutBudget_O20(t *testing.T) {
	t.Parallel()
	_, c := start015(t)
	c.Post("/api/v1/configure", `{"queue":"q","options":{"retryLimit":1}}`).Want(t, http.StatusOK, nil)
	c.Push("q", "p", "a")
	all := testutil.Query("consumerGroup", "g", "batch", "1", "subscriptionMode", "all")
	_, res := c.Pop("/api/v1/pop/queue/q/partition/p", all)
	stranger := c.AckBatch(map[string]any{"consumerGroup": "stranger", "acknowledgments": []map[string]any{
		{"transactionId": "a", "partitionId": res.Messages[0].PartitionID, "status": "failed"}}})
	if !stranger[0].DLQ {
		t.Fatalf("a failed from a group that never popped goes to the DLQ: %+v", stranger[0])
	}
	if acks := c.Ack(res, "g", "failed"); acks[0].DLQ {
		t.Fatalf("the first failed of g spends its budget: %+v", acks[0])
	}
	_, res = c.Pop("/api/v1/pop/queue/q/partition/p", all)
	if acks := c.Ack(res, "g", "failed"); !acks[0].DLQ {
		t.Fatalf("the second failed files a: %+v", acks[0])
	}
	c.Push("q", "p", "b")
	_, res = c.Pop("/api/v1/pop/queue/q/partition/p", all)
	if acks := c.Ack(res, "g", "failed"); !acks[0].DLQ {
		t.Fatalf("b's first failed files it: the counter kept a's spent retry: %+v", acks[0])
	}
}

// O21: a push-created queue has a 300 s lease; deadLetterQueue:false is ignored.
func TestCompat015LeaseTimeAndIgnoredDeadLetterQueue_O21(t *testing.T) {
	t.Parallel()
	srv, c := start015(t, withManualClock())
	c.Push("q", "p", "a")
	all := testutil.Query("consumerGroup", "g", "subscriptionMode", "all")
	c.Pop("/api/v1/pop/queue/q/partition/p", all)
	srv.Advance(299 * time.Second)
	if ids, _ := c.Pop("/api/v1/pop/queue/q", all); len(ids) != 0 {
		t.Fatalf("redelivered before 300 s: %v", ids)
	}
	srv.Advance(time.Second)
	ids, _ := c.Pop("/api/v1/pop/queue/q", all)
	wantIDs(t, "after 300 s", ids, "a")

	c.Post("/api/v1/configure", `{"queue":"d","options":{"retryLimit":0,"deadLetterQueue":false}}`).Want(t, http.StatusOK, nil)
	c.Push("d", "p", "x")
	_, res := c.Pop("/api/v1/pop/queue/d", all)
	if acks := c.Ack(res, "g", "failed"); !acks[0].DLQ {
		t.Fatalf("deadLetterQueue:false is ignored on 0.15: %+v", acks[0])
	}
}

// O23: in a transaction a failed files at once, and a retry or a duplicate push rolls back.
func TestCompat015Transactions_O23(t *testing.T) {
	t.Parallel()
	_, c := start015(t)
	c.Push("q", "p", "a", "b")
	_, res := c.Pop("/api/v1/pop/queue/q", testutil.Query("batch", "10"))
	m := res.Messages[0]
	op := func(status string) string {
		return `{"operations":[{"type":"ack","transactionId":"` + m.TransactionID + `","partitionId":"` + m.PartitionID + `","leaseId":"` + m.LeaseID + `","status":"` + status + `"}]}`
	}
	var out map[string]any
	c.Post("/api/v1/transaction", op("retry")).Want(t, http.StatusOK, &out)
	if out["success"] != false || out["error"] == nil || len(out) != 2 {
		t.Fatalf("retry rolls back as {error, success:false}: %v", out)
	}
	c.Post("/api/v1/transaction", `{"operations":[{"type":"push","items":[{"queue":"q","partition":"p","transactionId":"a"}]}]}`).Want(t, http.StatusOK, &out)
	if out["success"] != false {
		t.Fatalf("a duplicate push rolls back: %v", out)
	}
	c.Post("/api/v1/transaction", op("failed")).Want(t, http.StatusOK, &out)
	if entry := out["results"].([]any)[0].(map[string]any); entry["dlq"] != true {
		t.Fatalf("a failed in a transaction files at once (retryLimit 3): %v", out)
	}
}

// O16: a seek excludes a message exactly at T and moves only partitions with a cursor.
func TestCompat015Seek_O16(t *testing.T) {
	t.Parallel()
	srv, c := start015(t, withManualClock())
	c.Push("q", "p", "a")
	srv.Advance(time.Second)
	c.Push("q", "p", "b")
	c.Push("q", "other", "x")
	all := testutil.Query("consumerGroup", "g", "batch", "10", "subscriptionMode", "all")
	_, res := c.Pop("/api/v1/pop/queue/q/partition/p", all)
	c.Ack(res, "g", "completed", "completed")
	tb := srv.Now().UTC().Format(time.RFC3339Nano) // b's createdAt: the clock has not moved
	var seek map[string]any
	c.Post("/api/v1/consumer-groups/g/queues/q/seek", `{"timestamp":"`+tb+`"}`).Want(t, http.StatusOK, &seek)
	if seek["partitionsUpdated"] != 1.0 {
		t.Fatalf("only the partition with a cursor moves: %v", seek)
	}
	ids, _ := c.Pop("/api/v1/pop/queue/q/partition/p", all)
	wantIDs(t, "after a seek to b's createdAt", ids)
	c.Post("/api/v1/consumer-groups/g/queues/q/seek", `{"timestamp":"yesterday"}`).Want(t, http.StatusOK, &seek)
	if seek["success"] != false {
		t.Fatalf("an unparsable timestamp is a 200 failure: %v", seek)
	}
}

// O24: the list's id is the message id, there is no total, and an offset above 0 lists nothing.
func TestCompat015DeadLetterList_O24(t *testing.T) {
	t.Parallel()
	_, c := start015(t)
	c.Post("/api/v1/configure", `{"queue":"q","options":{"retryLimit":0}}`).Want(t, http.StatusOK, nil)
	c.Push("q", "p", "a", "b")
	for range 2 {
		_, res := c.Pop("/api/v1/pop/queue/q", testutil.Query())
		c.Ack(res, "__QUEUE_MODE__", "failed")
	}
	var page map[string]any
	c.Get("/api/v1/dlq?queue=q&limit=1&partition=nope").Want(t, http.StatusOK, &page)
	if _, ok := page["total"]; ok {
		t.Fatalf("no total on 0.15: %v", page)
	}
	if n := len(page["messages"].([]any)); n != 2 {
		t.Fatalf("limit caps nothing and partition filters nothing: %d entries", n)
	}
	c.Get("/api/v1/dlq?queue=q&offset=1").Want(t, http.StatusOK, &page)
	if n := len(page["messages"].([]any)); n != 0 {
		t.Fatalf("offset 1 lists nothing on 0.15: %d entries", n)
	}
}

// O19: an empty acknowledgments array is never answered.
func TestCompat015EmptyBatchAckIsNeverAnswered_O19(t *testing.T) {
	t.Parallel()
	srv, _ := start015(t)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL()+"/api/v1/ack/batch", strings.NewReader(`{"acknowledgments":[]}`))
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("an empty batch was answered %d", resp.StatusCode)
	}
}

// O26: a bare token is accepted too.
func TestCompat015BareToken_O26(t *testing.T) {
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
