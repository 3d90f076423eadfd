package refserver

import (
	"net/http"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/names"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/internal/wire"
)

// R1, R2, R9, R14, R15, R16, R17: push creates the queue and partition; offsets 0, 1, 2…
// with no gap for a duplicate; a pop returns them in order.
func TestPush_CreatesQueueOffsetsAndOrder_R1_R2_R9_R14_R15_R16_R17(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	res := c.Push(testutil.Item{Queue: "orders", Partition: "p", TransactionID: "a"}, testutil.Item{Queue: "orders", Partition: "p", TransactionID: "a"},
		testutil.Item{Queue: "orders", Partition: "p"}, testutil.Item{Queue: "orders", Partition: "p", TransactionID: "c"})
	if res[0].Offset != 0 || res[1].Status != "duplicate" || res[1].Offset != 0 || res[2].Offset != 1 || res[3].Offset != 2 {
		t.Fatalf("offsets/statuses %+v", res)
	}
	if res[2].TransactionID == "" || !names.IsUUID(res[2].TransactionID) {
		t.Errorf("generated transactionId %q, want a UUID (R9)", res[2].TransactionID)
	}
	pop := c.MustPop("/api/v1/pop/queue/orders", testutil.Query("batch", "10"))
	if len(pop.Messages) != 3 {
		t.Fatalf("popped %d, want 3", len(pop.Messages))
	}
	for i, m := range pop.Messages {
		if m.Offset != int64(i) {
			t.Errorf("message %d has offset %d", i, m.Offset)
		}
	}
}

// R6, R7, R8: a transactionId is unique within a partition only.
func TestPush_DuplicateTransactionID_R6_R7_R8(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	first := c.Push(testutil.Item{Queue: "dup", Partition: "a", TransactionID: "t1", Payload: 1})
	again := c.Push(testutil.Item{Queue: "dup", Partition: "a", TransactionID: "t1", Payload: 2}, testutil.Item{Queue: "dup", Partition: "b", TransactionID: "t1"})
	if again[0].Status != "duplicate" || again[0].MessageID != first[0].MessageID || again[0].PartitionID != first[0].PartitionID {
		t.Errorf("repeat in partition a = %+v, want duplicate of %+v", again[0], first[0])
	}
	if again[1].Status != "queued" || again[1].PartitionID == first[0].PartitionID {
		t.Errorf("same id in partition b = %+v, want queued elsewhere (R7)", again[1])
	}
}

// R21, R20, R32, R29: a partition pop reads one partition; partitions=N claims several under one
// lease with batch as the total budget.
func TestPop_PartitionRouteAndMultiPartition_R20_R21_R29_R32(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	for _, p := range []string{"a", "b", "c"} {
		c.PushN("multi", p, p, 2)
	}
	one := c.MustPop("/api/v1/pop/queue/multi/partition/b", testutil.Query("batch", "10", "partitions", "3"))
	if one.PartitionsClaimed != 1 || one.Partition != "b" || len(one.Messages) != 2 {
		t.Fatalf("partition route claimed %d (%s), %d messages", one.PartitionsClaimed, one.Partition, len(one.Messages))
	}
	many := c.MustPop("/api/v1/pop/queue/multi", testutil.Query("batch", "3", "partitions", "2"))
	if len(many.Messages) != 3 || many.PartitionsClaimed != 2 {
		t.Fatalf("partitions=2 batch=3: %d messages over %d partitions", len(many.Messages), many.PartitionsClaimed)
	}
	for _, m := range many.Messages {
		if m.LeaseID != many.LeaseID || m.Partition == "b" {
			t.Errorf("message %+v: want the shared lease, never the leased partition b (R49)", m)
		}
	}
	c.AckAll(many, "", "completed") // R88: each with its own partitionId and the shared leaseId
}

// R22: a discovery pop reads queues whose labels match, and answers 204 when none does.
func TestPop_Discovery_R22(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.Post("/api/v1/configure", `{"queue":"disc","namespace":"billing","task":"send"}`).Want(t, http.StatusOK, nil)
	c.Push(testutil.Item{Queue: "disc", TransactionID: "d1"})
	if c.Pop("/api/v1/pop", testutil.Query("namespace", "other")) != nil {
		t.Fatal("discovery pop matched another namespace")
	}
	res := c.MustPop("/api/v1/pop", testutil.Query("namespace", "billing", "task", "send", "wait", "true", "autopilot", "true"))
	if res.Queue != "disc" || res.Messages[0].TransactionID != "d1" {
		t.Fatalf("discovery pop %+v", res)
	}
}

// R23, R49: no consumerGroup, an empty one and __QUEUE_MODE__ are one group.
func TestPop_QueueModeIsOneGroup_R23_R49(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.PushN("qm", "", "m", 3)
	a := c.MustPop("/api/v1/pop/queue/qm", nil)
	if a.ConsumerGroup != "__QUEUE_MODE__" || a.Messages[0].ConsumerGroup != "__QUEUE_MODE__" {
		t.Errorf("queue-mode pop names group %q/%q", a.ConsumerGroup, a.Messages[0].ConsumerGroup)
	}
	if c.Pop("/api/v1/pop/queue/qm", testutil.Query("consumerGroup", "__QUEUE_MODE__")) != nil || c.Pop("/api/v1/pop/queue/qm?consumerGroup=", nil) != nil {
		t.Fatal("the same group got the leased partition (R49)")
	}
	if c.Pop("/api/v1/pop/queue/qm", testutil.Query("consumerGroup", "other", "subscriptionMode", "all")) == nil {
		t.Fatal("another group was blocked by queue mode's lease (R48)")
	}
	c.AckAll(a, "", "completed")
	b := c.MustPop("/api/v1/pop/queue/qm", testutil.Query("consumerGroup", "__QUEUE_MODE__"))
	if b.Messages[0].Offset != 1 {
		t.Fatalf("after the ack, queue mode got offset %d, want 1 (R67)", b.Messages[0].Offset)
	}
}

// R24, R45, R13: a waiting pop on a queue that does not exist yet is answered by the push
// that creates it, as soon as it is stored.
func TestPop_LongPollWokenByPush_R24_R45(t *testing.T) {
	t.Parallel()
	srv, c := start(t)
	got := make(chan *testutil.PopResult, 1)
	go func() { got <- c.Pop("/api/v1/pop/queue/later", testutil.Query("wait", "true", "timeout", "30000")) }()
	testutil.Eventually(t, "the pop to wait", func() bool { return srv.WaitingPops() == 1 })
	c.Push(testutil.Item{Queue: "later", TransactionID: "wake"})
	select {
	case res := <-got:
		if res == nil || res.Messages[0].TransactionID != "wake" {
			t.Fatalf("woken pop answered %+v", res)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting pop was not woken by the push")
	}
}

// R24, R26, R41: a long poll that times out answers 204; timeout=0 answers at once.
func TestPop_LongPollTimesOut_R24_R26_R41(t *testing.T) {
	t.Parallel()
	_, c := start(t, withManualClock()) // long-poll timeouts run on real time anyway
	begin := time.Now()
	if c.Pop("/api/v1/pop/queue/idle", testutil.Query("wait", "true", "timeout", "50")) != nil {
		t.Fatal("an idle long poll returned messages")
	}
	if waited := time.Since(begin); waited < 50*time.Millisecond {
		t.Errorf("a 50 ms long poll answered after %v", waited)
	}
	if c.Pop("/api/v1/pop/queue/idle", testutil.Query("wait", "true", "timeout", "0")) != nil {
		t.Fatal("timeout=0 returned messages")
	}
}

// R36: a conflating group gets the newest message only, and an empty pop answers 200 {"messages":[]}.
func TestPop_Conflation_R36(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.PushN("conf", "", "v", 3)
	res := c.MustPop("/api/v1/pop/queue/conf", testutil.Query("consumerGroup", "latest", "conflation", "true", "subscriptionMode", "all", "batch", "10"))
	if len(res.Messages) != 1 || res.Messages[0].Offset != 2 {
		t.Fatalf("conflating pop %+v, want only offset 2", res.Messages)
	}
	c.AckAll(res, "latest", "completed")
	r := c.Get("/api/v1/pop/queue/conf?consumerGroup=latest&conflation=true")
	if r.Status != http.StatusOK || string(r.Body) != `{"messages":[]}` {
		t.Fatalf("empty conflating pop: %d %s, want 200 {\"messages\":[]}", r.Status, r.Body)
	}
	// R37: autoAck for a group stored as conflating is refused.
	c.Get("/api/v1/pop/queue/conf?consumerGroup=latest&autoAck=true").WantError(t, http.StatusBadRequest, "autoAck")
}

// R38, R121: autoAck hands messages out with leaseId "" and never again.
func TestPop_AutoAck_R38_R121(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.PushN("aa", "", "x", 2)
	res := c.MustPop("/api/v1/pop/queue/aa", testutil.Query("autoAck", "true", "batch", "10"))
	if res.LeaseID != "" || res.Messages[0].LeaseID != "" || len(res.Messages) != 2 {
		t.Fatalf("autoAck pop %+v", res)
	}
	if c.Pop("/api/v1/pop/queue/aa", nil) != nil {
		t.Fatal("an autoAcked message came back")
	}
}

// R54, R57, R59, R120: a lease expires with the broker clock; the batch comes back with
// deliveryAttempt 2, and the old lease's acks are refused (R117).
func TestLease_ExpiryRedelivers_R54_R57_R59_R117(t *testing.T) {
	t.Parallel()
	srv, c := start(t, withManualClock())
	c.PushN("exp", "", "e", 2)
	first := c.MustPop("/api/v1/pop/queue/exp", testutil.Query("batch", "2", "leaseSeconds", "10"))
	srv.Advance(9 * time.Second)
	if c.Pop("/api/v1/pop/queue/exp", nil) != nil {
		t.Fatal("the lease ended before its 10 s")
	}
	srv.Advance(time.Second)
	second := c.MustPop("/api/v1/pop/queue/exp", testutil.Query("batch", "2"))
	if second.Messages[0].DeliveryAttempt != 2 || second.Messages[0].Offset != 0 || second.LeaseID == first.LeaseID {
		t.Fatalf("redelivery %+v, want offset 0 with deliveryAttempt 2 under a new lease", second.Messages[0])
	}
	var acks []testutil.AckResult
	c.Post("/api/v1/ack", map[string]any{"transactionId": first.Messages[0].TransactionID, "partitionId": first.PartitionID,
		"leaseId": first.LeaseID}).Want(t, http.StatusOK, &acks)
	if acks[0].Success || testutil.Deref(acks[0].Error) != "Invalid or expired lease" {
		t.Fatalf("ack under the expired lease %+v", acks[0])
	}
	// R63: the expired lease cannot be renewed.
	var ext []testutil.ExtendResult
	c.Post("/api/v1/lease/"+first.LeaseID+"/extend", `{"seconds":5}`).Want(t, http.StatusOK, &ext)
	if ext[0].Success || ext[0].ExpiresAt != nil {
		t.Fatalf("extend of an expired lease %+v", ext[0])
	}
}

// R61, R62: extend pushes the expiry to max(current, now+N), so the lease outlives its time.
func TestLease_ExtendKeepsTheLease_R61(t *testing.T) {
	t.Parallel()
	srv, c := start(t, withManualClock())
	c.Push(testutil.Item{Queue: "ext"})
	res := c.MustPop("/api/v1/pop/queue/ext", testutil.Query("leaseSeconds", "10"))
	srv.Advance(8 * time.Second)
	var ext []testutil.ExtendResult
	c.Post("/api/v1/lease/"+res.LeaseID+"/extend", `{"seconds":10}`).Want(t, http.StatusOK, &ext)
	want := srv.Now().Add(10 * time.Second).UTC().Format(wire.TimeLayout)
	if !ext[0].Success || testutil.Deref(ext[0].ExpiresAt) != want {
		t.Fatalf("extend %+v, want expiresAt %s", ext[0], want)
	}
	srv.Advance(9 * time.Second)
	if c.Pop("/api/v1/pop/queue/ext", nil) != nil {
		t.Fatal("the extended lease expired early")
	}
	c.AckAll(res, "", "completed")
}

// R69, R71, R76, R77, R84: a failed item is the stop of a batch ack; a refused status changes nothing.
func TestAck_FailedStopsTheBatch_R69_R76_R77_R84(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.PushN("stop", "", "s", 3)
	res := c.MustPop("/api/v1/pop/queue/stop", testutil.Query("batch", "3"))
	m := res.Messages
	acks := c.AckBatch(map[string]any{"acknowledgments": []any{
		map[string]any{"transactionId": m[0].TransactionID, "partitionId": m[0].PartitionID, "leaseId": res.LeaseID, "status": "bogus"},
		map[string]any{"partitionId": m[0].PartitionID},
		map[string]any{"transactionId": m[0].TransactionID},
	}})
	wantErrs := []string{"Invalid status", "transactionId is required", "partitionId is required"}
	for i, a := range acks {
		if a.Success || testutil.Deref(a.Error) != wantErrs[i] {
			t.Errorf("item %d = %+v, want refused with %q (R76)", i, a, wantErrs[i])
		}
	}
	acks = c.AckBatch(map[string]any{"acknowledgments": []any{
		map[string]any{"transactionId": m[2].TransactionID, "partitionId": m[2].PartitionID, "leaseId": res.LeaseID, "status": "completed"},
		map[string]any{"transactionId": m[1].TransactionID, "partitionId": m[1].PartitionID, "leaseId": res.LeaseID, "status": "failed", "error": "e"},
		map[string]any{"transactionId": m[0].TransactionID, "partitionId": m[0].PartitionID, "leaseId": res.LeaseID, "status": "success"},
	}})
	for i, a := range acks {
		if !a.Success {
			t.Errorf("item %d refused: %+v", i, a)
		}
	}
	again := c.MustPop("/api/v1/pop/queue/stop", testutil.Query("batch", "3"))
	if again.Messages[0].Offset != 1 || again.Messages[0].DeliveryAttempt != 2 || len(again.Messages) != 2 {
		t.Fatalf("after a stop at offset 1: %+v, want offsets 1 and 2 again", again.Messages)
	}
}

// R90, R91, R95, R97: retryLimit 1 delivers twice, then files a dead letter for that group only.
func TestDLQ_RetriesExhausted_R90_R91_R95_R97(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.Post("/api/v1/configure", `{"queue":"retry","options":{"retryLimit":1}}`).Want(t, http.StatusOK, nil)
	c.Push(testutil.Item{Queue: "retry", TransactionID: "r1", Payload: "x"})
	for attempt := 1; attempt <= 2; attempt++ {
		res := c.MustPop("/api/v1/pop/queue/retry", testutil.Query("consumerGroup", "g", "subscriptionMode", "all"))
		if res.Messages[0].DeliveryAttempt != attempt {
			t.Fatalf("attempt %d delivered with deliveryAttempt %d", attempt, res.Messages[0].DeliveryAttempt)
		}
		acks := c.AckAll(res, "g", "failed")
		if acks[0].DLQ != (attempt == 2) {
			t.Fatalf("attempt %d: dlq %v", attempt, acks[0].DLQ)
		}
	}
	page := c.DLQ(testutil.Query("queue", "retry", "consumerGroup", "g"))
	if page.Total != 1 || page.Messages[0].ErrorMessage != "Retries exhausted" || page.Messages[0].RetryCount != 1 || string(page.Messages[0].Data) != `"x"` {
		t.Fatalf("dead letters %+v", page)
	}
	if page := c.DLQ(testutil.Query("consumerGroup", "other")); page.Total != 0 {
		t.Errorf("filter by another group found %d", page.Total)
	}
	if c.Pop("/api/v1/pop/queue/retry", nil) == nil { // R97: queue mode still reads it
		t.Error("another group lost the dead-lettered message")
	}
}

// R98: filters, paging and total.
func TestDLQ_ListPaging_R98(t *testing.T) {
	t.Parallel()
	srv, c := start(t, withManualClock())
	c.PushN("pg", "", "p", 3)
	res := c.MustPop("/api/v1/pop/queue/pg", testutil.Query("batch", "3"))
	for _, m := range res.Messages {
		srv.Advance(time.Second)
		c.AckBatch(map[string]any{"acknowledgments": []any{map[string]any{"transactionId": m.TransactionID, "partitionId": m.PartitionID, "status": "dlq"}}})
	}
	page := c.DLQ(testutil.Query("queue", "pg", "limit", "2", "offset", "1"))
	if page.Total != 3 || len(page.Messages) != 2 || page.Pagination.Limit != 2 || page.Pagination.Offset != 1 {
		t.Fatalf("page %+v", page)
	}
	if page.Messages[0].TransactionID != "p-1" || page.Messages[1].TransactionID != "p-0" { // failedAt descending
		t.Errorf("order %s, %s", page.Messages[0].TransactionID, page.Messages[1].TransactionID)
	}
	from := srv.Now().Add(-time.Second).Format(time.RFC3339Nano)
	if page := c.DLQ(testutil.Query("from", from)); page.Total != 2 {
		t.Errorf("from %s matched %d, want 2", from, page.Total)
	}
	if page := c.DLQ(testutil.Query("queue", "unknown")); page.Total != 0 || page.Messages == nil {
		t.Errorf("unknown queue: %+v, want an empty list", page)
	}
}

// R103, R105, R109: a named group starts new by default; subscriptionFrom reads from a time.
func TestSubscription_NewAndFrom_R103_R105_R109(t *testing.T) {
	t.Parallel()
	srv, c := start(t, withManualClock())
	c.Push(testutil.Item{Queue: "sub", TransactionID: "old"})
	srv.Advance(time.Minute)
	mark := srv.Now()
	srv.Advance(time.Minute)
	c.Push(testutil.Item{Queue: "sub", TransactionID: "mid"})
	if c.Pop("/api/v1/pop/queue/sub", testutil.Query("consumerGroup", "fresh")) != nil {
		t.Fatal("a new group's first pop got history (R109)")
	}
	srv.Advance(time.Second)
	c.Push(testutil.Item{Queue: "sub", TransactionID: "new"})
	if res := c.MustPop("/api/v1/pop/queue/sub", testutil.Query("consumerGroup", "fresh", "batch", "10")); res.Messages[0].TransactionID != "new" {
		t.Fatalf("new group got %s", res.Messages[0].TransactionID)
	}
	res := c.MustPop("/api/v1/pop/queue/sub", testutil.Query("consumerGroup", "from", "batch", "10", "subscriptionFrom", mark.Format(time.RFC3339Nano)))
	if len(res.Messages) != 2 || res.Messages[0].TransactionID != "mid" {
		t.Fatalf("subscriptionFrom got %+v", res.Messages)
	}
}

// R110, R111, R112: seek back re-reads from a time and releases the group's lease.
func TestSeek_BackAndToEnd_R110_R111(t *testing.T) {
	t.Parallel()
	srv, c := start(t, withManualClock())
	start := srv.Now()
	c.PushN("seek", "", "s", 2)
	res := c.MustPop("/api/v1/pop/queue/seek", testutil.Query("consumerGroup", "g", "subscriptionMode", "all", "batch", "10"))
	c.AckAll(res, "g", "completed")
	c.Post("/api/v1/consumer-groups/g/queues/seek/seek", map[string]any{"timestamp": start.Format(time.RFC3339Nano)}).Want(t, http.StatusOK, nil)
	again := c.MustPop("/api/v1/pop/queue/seek", testutil.Query("consumerGroup", "g", "batch", "10"))
	if len(again.Messages) != 2 || again.Messages[0].DeliveryAttempt != 2 {
		t.Fatalf("after seek back: %+v", again.Messages)
	}
	c.Post("/api/v1/consumer-groups/g/queues/seek/seek", `{"toEnd":true}`).Want(t, http.StatusOK, nil)
	if c.Pop("/api/v1/pop/queue/seek", testutil.Query("consumerGroup", "g")) != nil {
		t.Fatal("after seek to end the group got old messages")
	}
	var acks []testutil.AckResult
	c.Post("/api/v1/ack", map[string]any{"transactionId": again.Messages[0].TransactionID, "partitionId": again.PartitionID,
		"leaseId": again.LeaseID, "consumerGroup": "g"}).Want(t, http.StatusOK, &acks)
	if acks[0].Success {
		t.Fatal("an ack under a lease the seek released was accepted (R111)")
	}
	c.Post("/api/v1/consumer-groups/g/queues/nope/seek", `{"toEnd":true}`).WantError(t, http.StatusNotFound, "queue not found") // R113
}

// R118: an unfenced ack is accepted after the lease expired and releases the new holder's batch.
func TestAck_Unfenced_R118(t *testing.T) {
	t.Parallel()
	srv, c := start(t, withManualClock())
	c.Push(testutil.Item{Queue: "fence", TransactionID: "f"})
	old := c.MustPop("/api/v1/pop/queue/fence", testutil.Query("leaseSeconds", "5"))
	srv.Advance(5 * time.Second)
	cur := c.MustPop("/api/v1/pop/queue/fence", nil)
	var acks []testutil.AckResult
	c.Post("/api/v1/ack", map[string]any{"transactionId": "f", "partitionId": old.PartitionID}).Want(t, http.StatusOK, &acks)
	if !acks[0].Success || !acks[0].LeaseReleased {
		t.Fatalf("unfenced ack %+v", acks[0])
	}
	c.Post("/api/v1/ack", map[string]any{"transactionId": "f", "partitionId": cur.PartitionID, "leaseId": cur.LeaseID}).Want(t, http.StatusOK, &acks)
	if acks[0].Success {
		t.Fatal("the released holder's fenced ack was accepted")
	}
}

// R141, R143: deleting a queue or a group forgets its state.
func TestDelete_QueueAndGroup_R141_R143(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.Push(testutil.Item{Queue: "gone"})
	res := c.MustPop("/api/v1/pop/queue/gone", testutil.Query("consumerGroup", "g", "subscriptionMode", "all"))
	var del map[string]any
	c.Delete("/api/v1/consumer-groups/g").Want(t, http.StatusOK, &del)
	if del["deletedPartitions"] != float64(1) {
		t.Errorf("deleted %v cursors, want 1", del["deletedPartitions"])
	}
	if c.Pop("/api/v1/pop/queue/gone", testutil.Query("consumerGroup", "g", "subscriptionMode", "all")) == nil {
		t.Fatal("the deleted group kept its lease")
	}
	_ = res
	c.Delete("/api/v1/resources/queues/gone").Want(t, http.StatusOK, nil)
	if c.Pop("/api/v1/pop/queue/gone", nil) != nil {
		t.Fatal("a deleted queue still delivers")
	}
	c.Delete("/api/v1/consumer-groups/nobody").WantError(t, http.StatusNotFound, "consumer group not found")
}

// R5, R31, R35, R65: extreme but valid numbers are served, never a 5xx.
func TestPop_ExtremeValidNumbers_R5_R31_R35_R65(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.PushN("huge", "", "h", 3)
	res := c.MustPop("/api/v1/pop/queue/huge", testutil.Query("batch", "9223372036854775807", "leaseSeconds", "2147483647", "partitions", "64"))
	if len(res.Messages) != 3 {
		t.Fatalf("a huge batch returned %d messages, want the 3 available", len(res.Messages))
	}
	var ext []testutil.ExtendResult
	c.Post("/api/v1/lease/"+res.LeaseID+"/extend", `{"seconds":2147483647}`).Want(t, http.StatusOK, &ext)
	if !ext[0].Success {
		t.Fatalf("extend %+v", ext[0])
	}
	for _, huge := range []string{"2147483648", "99999999999999999999"} { // any positive integer (R65)
		c.Post("/api/v1/lease/"+res.LeaseID+"/extend", `{"seconds":`+huge+`}`).Want(t, http.StatusOK, &ext)
		if !ext[0].Success || ext[0].ExpiresAt == nil {
			t.Fatalf("extend by %s s: %+v", huge, ext[0])
		}
	}
	c.Post("/api/v1/lease/"+res.LeaseID+"/extend", `{"seconds":-99999999999999999999}`).WantError(t, http.StatusBadRequest, "seconds")
	c.Post("/api/v1/lease/"+res.LeaseID+"/extend", `{"seconds":1e3}`).WantError(t, http.StatusBadRequest, "seconds", "1e3")
	for _, m := range res.Messages {
		c.AckBatch(map[string]any{"acknowledgments": []any{map[string]any{"transactionId": m.TransactionID, "partitionId": m.PartitionID, "status": "dlq"}}})
	}
	for _, off := range []string{"0", "1", "9223372036854775807"} {
		page := c.DLQ(testutil.Query("limit", "9223372036854775807", "offset", off))
		if page.Total != 3 || page.Pagination.Limit != 9223372036854775807 {
			t.Errorf("offset %s: %+v", off, page)
		}
	}
	c.Post("/api/v1/configure", `{"queue":"huge","options":{"leaseTime":2147483647,"retryLimit":2147483647}}`).Want(t, http.StatusOK, nil)
	// R5: integers ≥ 0, however large; the lease is clamped to what a duration holds.
	c.Post("/api/v1/configure", `{"queue":"huge","options":{"leaseTime":9223372036854775807,"retryLimit":9223372036854775807}}`).Want(t, http.StatusOK, nil)
	c.PushN("huge", "", "again", 1)
	c.MustPop("/api/v1/pop/queue/huge", nil)
}
