package refserver

import (
	"net/http"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/testutil"
)

// R3, R59, R60: a push-created queue leases for 60 s; a configured leaseTime 0 also means 60 s.
func TestLease_DefaultSixtySeconds_R3_R59_R60(t *testing.T) {
	t.Parallel()
	srv, c := start(t, withManualClock())
	c.Post("/api/v1/configure", `{"queue":"zero","options":{"leaseTime":0}}`).Want(t, http.StatusOK, nil)
	for _, queue := range []string{"pushed", "zero"} {
		c.Push(testutil.Item{Queue: queue})
	}
	for _, queue := range []string{"pushed", "zero"} {
		c.MustPop("/api/v1/pop/queue/"+queue, nil)
	}
	srv.Advance(59 * time.Second)
	for _, queue := range []string{"pushed", "zero"} {
		if c.Pop("/api/v1/pop/queue/"+queue, nil) != nil {
			t.Errorf("%s: the lease ended before 60 s", queue)
		}
	}
	srv.Advance(time.Second)
	for _, queue := range []string{"pushed", "zero"} {
		if c.Pop("/api/v1/pop/queue/"+queue, nil) == nil {
			t.Errorf("%s: the lease outlived 60 s", queue)
		}
	}
}

// R5: configure replaces the options; omitted ones take their defaults.
func TestConfigure_Replaces_R5(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	var conf map[string]any
	c.Post("/api/v1/configure", `{"queue":"cfg","namespace":"n","options":{"leaseTime":5,"retryLimit":9,"deadLetterQueue":false}}`).Want(t, http.StatusOK, &conf)
	c.Post("/api/v1/configure", `{"queue":"cfg"}`).Want(t, http.StatusOK, &conf)
	opts := conf["options"].(map[string]any)
	if opts["leaseTime"] != float64(60) || opts["retryLimit"] != float64(3) || opts["deadLetterQueue"] != true || conf["namespace"] != "" {
		t.Fatalf("reconfigure without options = %v, want the defaults", conf)
	}
}

// R34: with autopilot and no batch, a pop takes up to 100 messages.
func TestPop_AutopilotBatch_R34(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.PushN("auto", "", "a", 150)
	res := c.MustPop("/api/v1/pop/queue/auto", testutil.Query("autopilot", "true"))
	if len(res.Messages) != 100 {
		t.Fatalf("autopilot pop took %d messages, want 100", len(res.Messages))
	}
	c.AckAll(res, "", "completed")
	if res := c.MustPop("/api/v1/pop/queue/auto", testutil.Query("autopilot", "true", "batch", "7")); len(res.Messages) != 7 {
		t.Fatalf("autopilot with batch=7 took %d messages, want 7 (a sent batch is used unchanged)", len(res.Messages))
	}
}

// R47, R48, R58: groups keep their own cursors; deliveryAttempt counts per group.
func TestGroups_Independent_R47_R48_R58(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.PushN("fan", "", "f", 2)
	a := c.MustPop("/api/v1/pop/queue/fan", testutil.Query("consumerGroup", "a", "subscriptionMode", "all", "batch", "2"))
	c.AckAll(a, "a", "failed")
	a = c.MustPop("/api/v1/pop/queue/fan", testutil.Query("consumerGroup", "a", "batch", "2"))
	b := c.MustPop("/api/v1/pop/queue/fan", testutil.Query("consumerGroup", "b", "subscriptionMode", "all", "batch", "2"))
	if a.Messages[0].DeliveryAttempt != 2 || b.Messages[0].DeliveryAttempt != 1 || len(b.Messages) != 2 {
		t.Fatalf("group a attempt %d, group b attempt %d (%d messages)", a.Messages[0].DeliveryAttempt, b.Messages[0].DeliveryAttempt, len(b.Messages))
	}
	c.AckAll(b, "b", "completed")
	if c.Pop("/api/v1/pop/queue/fan", testutil.Query("consumerGroup", "b")) != nil {
		t.Error("group b got its acked messages again")
	}
	c.AckAll(a, "a", "completed")
}

// R53, R63, R79: the last ack ends the lease; a repeat of it, and an extend of the lease, are refused.
func TestAck_RepeatAfterRelease_R53_R63_R79(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.PushN("rep", "", "r", 2)
	res := c.MustPop("/api/v1/pop/queue/rep", testutil.Query("batch", "2"))
	last := res.Messages[1]
	ack := map[string]any{"transactionId": last.TransactionID, "partitionId": last.PartitionID, "leaseId": res.LeaseID}
	var acks []testutil.AckResult
	c.Post("/api/v1/ack", ack).Want(t, http.StatusOK, &acks)
	if !acks[0].Success || !acks[0].LeaseReleased {
		t.Fatalf("ack of the batch end %+v, want leaseReleased (R53)", acks[0])
	}
	c.Post("/api/v1/ack", ack).Want(t, http.StatusOK, &acks)
	if acks[0].Success || testutil.Deref(acks[0].Error) != "Invalid or expired lease" {
		t.Fatalf("repeated ack %+v (R79)", acks[0])
	}
	var ext []testutil.ExtendResult
	c.Post("/api/v1/lease/"+res.LeaseID+"/extend", `{"seconds":10}`).Want(t, http.StatusOK, &ext)
	if ext[0].Success || testutil.Deref(ext[0].Error) != "Lease not found" {
		t.Fatalf("extend of a released lease %+v (R63)", ext[0])
	}
	if c.Pop("/api/v1/pop/queue/rep", nil) != nil {
		t.Fatal("completed messages came back")
	}
}

// R68, R80, R81: acks at or below the cursor succeed and change nothing; acks outside the
// leased batch, or of messages never delivered to the group, are refused.
func TestAck_Refusals_R68_R80_R81(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.PushN("ref", "", "x", 3)
	res := c.MustPop("/api/v1/pop/queue/ref", nil) // offset 0 only
	m0 := res.Messages[0]
	pid := m0.PartitionID
	acks := c.AckBatch(map[string]any{"acknowledgments": []any{
		map[string]any{"transactionId": "x-2", "partitionId": pid, "leaseId": res.LeaseID},
	}})
	if acks[0].Success || testutil.Deref(acks[0].Error) != "message not in leased batch" {
		t.Fatalf("ack outside the batch %+v (R80)", acks[0])
	}
	acks = c.AckBatch(map[string]any{"consumerGroup": "never", "acknowledgments": []any{
		map[string]any{"transactionId": "x-1", "partitionId": pid},
	}})
	if acks[0].Success || testutil.Deref(acks[0].Error) != "message not delivered to this group" {
		t.Fatalf("ack by a group that never popped %+v (R81)", acks[0])
	}
	c.AckAll(res, "", "completed")
	acks = c.AckBatch(map[string]any{"acknowledgments": []any{map[string]any{"transactionId": m0.TransactionID, "partitionId": pid}}})
	if !acks[0].Success || acks[0].LeaseReleased {
		t.Fatalf("ack at the cursor %+v, want success and no change (R68)", acks[0])
	}
	if next := c.MustPop("/api/v1/pop/queue/ref", nil); next.Messages[0].Offset != 1 {
		t.Fatalf("next offset %d, want 1", next.Messages[0].Offset)
	}
}

// R82: the batch's consumerGroup applies to every item; an item's own counts only without it.
func TestAckBatch_GroupPrecedence_R82(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.Push(testutil.Item{Queue: "prec", TransactionID: "p"})
	res := c.MustPop("/api/v1/pop/queue/prec", testutil.Query("consumerGroup", "g", "subscriptionMode", "all"))
	m := res.Messages[0]
	acks := c.AckBatch(map[string]any{"consumerGroup": "other", "acknowledgments": []any{
		map[string]any{"transactionId": "p", "partitionId": m.PartitionID, "leaseId": res.LeaseID, "consumerGroup": "g"},
	}})
	if acks[0].Success {
		t.Fatal("the item's group overrode the batch's")
	}
	acks = c.AckBatch(map[string]any{"acknowledgments": []any{
		map[string]any{"transactionId": "p", "partitionId": m.PartitionID, "leaseId": res.LeaseID, "consumerGroup": "g"},
	}})
	if !acks[0].Success || !acks[0].LeaseReleased {
		t.Fatalf("the item's own group was not used: %+v", acks[0])
	}
}

// R93: with deadLetterQueue false, a dlq ack drops the message: dlq false, nothing listed.
func TestDLQ_DisabledDrops_R93(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.Post("/api/v1/configure", `{"queue":"drop","options":{"deadLetterQueue":false}}`).Want(t, http.StatusOK, nil)
	c.Push(testutil.Item{Queue: "drop"})
	acks := c.AckAll(c.MustPop("/api/v1/pop/queue/drop", nil), "", "dlq")
	if acks[0].DLQ {
		t.Fatal("a dropped message reported dlq true")
	}
	if page := c.DLQ(testutil.Query("queue", "drop")); page.Total != 0 {
		t.Fatalf("a dropped message was filed: %+v", page)
	}
	if c.Pop("/api/v1/pop/queue/drop", nil) != nil {
		t.Fatal("a dropped message came back")
	}
}

// R99, R24: a replay wakes a waiting pop and is read by every group, from deliveryAttempt 1.
func TestDLQ_ReplayWakesWaitingPop_R99(t *testing.T) {
	t.Parallel()
	srv, c := start(t)
	c.Push(testutil.Item{Queue: "rp", TransactionID: "orig", Payload: map[string]int{"v": 7}})
	acks := c.AckAll(c.MustPop("/api/v1/pop/queue/rp", nil), "", "dlq")
	if !acks[0].DLQ {
		t.Fatal("not filed")
	}
	id := c.DLQ(testutil.Query("queue", "rp")).Messages[0].ID
	got := make(chan *testutil.PopResult, 1)
	go func() { got <- c.Pop("/api/v1/pop/queue/rp", testutil.Query("wait", "true", "timeout", "30000")) }()
	testutil.Eventually(t, "the pop to wait", func() bool { return srv.WaitingPops() == 1 })
	c.Post("/api/v1/dlq/"+id+"/replay", "").Want(t, http.StatusOK, nil)
	var res *testutil.PopResult
	select {
	case res = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the replay did not wake the waiting pop")
	}
	if res == nil || res.Messages[0].TransactionID != "dlq:"+id || string(res.Messages[0].Data) != `{"v":7}` || res.Messages[0].DeliveryAttempt != 1 {
		t.Fatalf("replayed copy %+v", res)
	}
	if other := c.MustPop("/api/v1/pop/queue/rp", testutil.Query("consumerGroup", "late", "subscriptionMode", "all", "batch", "5")); len(other.Messages) != 2 {
		t.Fatalf("another group read %d messages, want the original and the copy", len(other.Messages))
	}
	if page := c.DLQ(testutil.Query("queue", "rp")); page.Total != 0 {
		t.Fatal("the replayed dead letter is still listed")
	}
}

// R104, R107, R108: all mode and queue mode start at the oldest message, on every partition.
func TestSubscription_AllAndQueueMode_R104_R107_R108(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.Push(testutil.Item{Queue: "hist", Partition: "a", TransactionID: "h1"})
	if c.Pop("/api/v1/pop/queue/hist", testutil.Query("consumerGroup", "late", "subscriptionMode", "all")) == nil {
		t.Fatal("subscriptionMode=all missed history (R104)")
	}
	c.Push(testutil.Item{Queue: "hist", Partition: "b", TransactionID: "h2"}) // a later partition
	if res := c.MustPop("/api/v1/pop/queue/hist/partition/b", testutil.Query("consumerGroup", "late", "subscriptionMode", "new")); res.Messages[0].TransactionID != "h2" {
		t.Fatalf("the stored start did not apply to the new partition: %+v (R108)", res.Messages)
	}
	if res := c.MustPop("/api/v1/pop/queue/hist/partition/a", testutil.Query("subscriptionMode", "new")); res.Messages[0].TransactionID != "h1" {
		t.Fatalf("queue mode did not start at the oldest message (R107)")
	}
}

// R128: a transaction's push wakes a waiting pop once committed.
func TestTransaction_PushWakesWaitingPop_R128(t *testing.T) {
	t.Parallel()
	srv, c := start(t)
	got := make(chan *testutil.PopResult, 1)
	go func() { got <- c.Pop("/api/v1/pop/queue/txw", testutil.Query("wait", "true", "timeout", "30000")) }()
	testutil.Eventually(t, "the pop to wait", func() bool { return srv.WaitingPops() == 1 })
	var res map[string]any
	c.Post("/api/v1/transaction", `{"operations":[{"type":"push","items":[{"queue":"txw","transactionId":"tw"}]}]}`).Want(t, http.StatusOK, &res)
	if res["success"] != true {
		t.Fatalf("transaction %v", res)
	}
	select {
	case p := <-got:
		if p == nil || p.Messages[0].TransactionID != "tw" {
			t.Fatalf("woken pop %+v", p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the committed push did not wake the waiting pop")
	}
}
