package refserver

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/queenmq/queen-go/internal/testutil"
)

// The answers' key sets, compared exactly on maps decoded from the wire, nulls included.
func TestPushPopAckAndExtendAnswerShapes(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	const trace = "0b6a3c1e-8c4e-4a8f-9a57-0f1f6a6c0d01"

	// Push result: all eight keys for queued and duplicate.
	var pushed []map[string]any
	c.Post("/api/v1/push", `{"items":[{"queue":"shape","partition":"4","payload":{"n":1},"transactionId":"order-1","traceId":"`+trace+`"},
		{"queue":"shape","partition":"4","payload":{"n":2},"transactionId":"order-1"},{"queue":"shape","partition":"4"}]}`).
		Want(t, http.StatusCreated, &pushed)
	if len(pushed) != 3 {
		t.Fatalf("push results: %v", pushed)
	}
	pushKeys := []string{"index", "transaction_id", "status", "message_id", "partition_id", "trace_id", "queueName", "offset"}
	for i, p := range pushed {
		testutil.WantKeys(t, "push result", p, pushKeys...)
		if p["index"] != float64(i) {
			t.Errorf("push result %d has index %v", i, p["index"])
		}
	}
	if pushed[0]["status"] != "queued" || pushed[1]["status"] != "duplicate" || pushed[2]["status"] != "queued" {
		t.Errorf("statuses %v %v %v, want queued duplicate queued", pushed[0]["status"], pushed[1]["status"], pushed[2]["status"])
	}
	if pushed[0]["trace_id"] != trace || pushed[2]["trace_id"] != nil {
		t.Errorf("trace_id %v and %v, want the UUID and null", pushed[0]["trace_id"], pushed[2]["trace_id"])
	}
	if pushed[1]["message_id"] != pushed[0]["message_id"] || pushed[1]["offset"] != pushed[0]["offset"] {
		t.Errorf("duplicate %v does not name the existing message %v", pushed[1], pushed[0])
	}

	// Pop result.
	r := c.Get("/api/v1/pop/queue/shape?batch=10&consumerGroup=billing&subscriptionMode=all")
	var pop map[string]any
	r.Want(t, http.StatusOK, &pop)
	testutil.WantKeys(t, "pop result", pop, "success", "queue", "partition", "partitionId", "leaseId", "consumerGroup", "partitionsClaimed", "messages")
	if pop["success"] != true || pop["queue"] != "shape" || pop["partition"] != "4" || pop["consumerGroup"] != "billing" || pop["partitionsClaimed"] != float64(1) {
		t.Errorf("pop top level %v", pop)
	}
	msgs := pop["messages"].([]any)
	if len(msgs) != 2 {
		t.Fatalf("popped %d messages, want 2", len(msgs))
	}
	for i, mm := range msgs {
		m := mm.(map[string]any)
		testutil.WantKeys(t, "message", m, "id", "transactionId", "traceId", "data", "producerSub", "createdAt", "partitionId",
			"partition", "leaseId", "consumerGroup", "offset", "deliveryAttempt")
		testutil.WantTime(t, "createdAt", m["createdAt"])
		if m["producerSub"] != nil || m["leaseId"] != pop["leaseId"] || m["consumerGroup"] != "billing" || m["partition"] != "4" ||
			m["offset"] != float64(i*1) || m["deliveryAttempt"] != float64(1) || m["partitionId"] != pop["partitionId"] {
			t.Errorf("message %d: %v", i, m)
		}
	}
	first, second := msgs[0].(map[string]any), msgs[1].(map[string]any)
	if first["traceId"] != trace || second["traceId"] != nil {
		t.Errorf("traceId %v, %v; want the UUID, then null", first["traceId"], second["traceId"])
	}
	if d, _ := json.Marshal(first["data"]); string(d) != `{"n":1}` { // data is the payload as pushed
		t.Errorf("data %s, want {\"n\":1}", d)
	}
	if d, _ := json.Marshal(second["data"]); string(d) != `{}` { // an absent payload is {}
		t.Errorf("absent payload delivered as %s, want {}", d)
	}

	// Extend result.
	var ext []map[string]any
	c.Post("/api/v1/lease/"+pop["leaseId"].(string)+"/extend", `{"seconds":30}`).Want(t, http.StatusOK, &ext)
	if len(ext) != 1 {
		t.Fatalf("extend answered %v", ext)
	}
	testutil.WantKeys(t, "extend result", ext[0], "index", "leaseId", "success", "error", "expiresAt")
	if ext[0]["success"] != true || ext[0]["error"] != nil || ext[0]["index"] != float64(0) || ext[0]["leaseId"] != pop["leaseId"] {
		t.Errorf("extend result %v", ext[0])
	}
	testutil.WantTime(t, "expiresAt", ext[0]["expiresAt"])
	// A refused extend: success false, a string error, expiresAt null.
	ext = nil
	c.Post("/api/v1/lease/no-such-lease/extend", `{}`).Want(t, http.StatusOK, &ext)
	testutil.WantKeys(t, "refused extend", ext[0], "index", "leaseId", "success", "error", "expiresAt")
	if ext[0]["success"] != false || ext[0]["error"] != "Lease not found" || ext[0]["expiresAt"] != nil || ext[0]["leaseId"] != "no-such-lease" {
		t.Errorf("refused extend %v", ext[0])
	}

	// Ack results: single ack is an array of one; the last ack releases the lease.
	var single []map[string]any
	c.Post("/api/v1/ack", map[string]any{"transactionId": first["transactionId"], "partitionId": first["partitionId"],
		"leaseId": first["leaseId"], "consumerGroup": "billing"}).Want(t, http.StatusOK, &single)
	ackKeys := []string{"index", "transactionId", "success", "error", "queueName", "partitionName", "leaseReleased", "dlq"}
	if len(single) != 1 {
		t.Fatalf("single ack answered %v", single)
	}
	testutil.WantKeys(t, "ack result", single[0], ackKeys...)
	if single[0]["success"] != true || single[0]["error"] != nil || single[0]["queueName"] != "shape" || single[0]["partitionName"] != "4" ||
		single[0]["leaseReleased"] != false || single[0]["dlq"] != false || single[0]["index"] != float64(0) {
		t.Errorf("ack result %v", single[0])
	}
	var batch []map[string]any
	c.Post("/api/v1/ack/batch", map[string]any{"consumerGroup": "billing", "acknowledgments": []any{
		map[string]any{"transactionId": second["transactionId"], "partitionId": second["partitionId"], "leaseId": second["leaseId"]},
		map[string]any{"transactionId": "nope", "partitionId": "nope"},
	}}).Want(t, http.StatusOK, &batch)
	if len(batch) != 2 {
		t.Fatalf("batch ack answered %v", batch)
	}
	for _, a := range batch {
		testutil.WantKeys(t, "batch ack result", a, ackKeys...)
	}
	if batch[0]["leaseReleased"] != true || batch[0]["index"] != float64(0) {
		t.Errorf("ack of the batch end %v, want leaseReleased", batch[0])
	}
	if batch[1]["success"] != false || batch[1]["error"] != "Message not found" || batch[1]["queueName"] != nil ||
		batch[1]["partitionName"] != nil || batch[1]["index"] != float64(1) {
		t.Errorf("ack of an unknown partition %v, want Message not found with null names", batch[1])
	}
}

func TestConfigureDLQSeekGroupAndQueueAnswerShapes(t *testing.T) {
	t.Parallel()
	srv, c := start(t, withManualClock())
	var conf map[string]any
	c.Post("/api/v1/configure", `{"queue":"sq","namespace":"ns","task":"t","options":{"leaseTime":30,"retryLimit":0,"deadLetterQueue":true,"ttl":3600}}`).
		Want(t, http.StatusOK, &conf)
	testutil.WantKeys(t, "configure", conf, "configured", "queueId", "partitionId", "queue", "namespace", "task", "options")
	opts, _ := conf["options"].(map[string]any)
	if conf["configured"] != true || conf["queue"] != "sq" || conf["namespace"] != "ns" || conf["task"] != "t" ||
		opts["leaseTime"] != float64(30) || opts["retryLimit"] != float64(0) || opts["deadLetterQueue"] != true || opts["ttl"] != float64(3600) {
		t.Errorf("configure answer %v", conf)
	}

	// File a dead letter (retryLimit 0: the first failed files it).
	c.Push(testutil.Item{Queue: "sq", Payload: map[string]string{"k": "v"}, TransactionID: "dl-1"})
	pop := c.MustPop("/api/v1/pop/queue/sq", nil)
	acks := c.AckBatch(map[string]any{"acknowledgments": []any{map[string]any{"transactionId": "dl-1",
		"partitionId": pop.Messages[0].PartitionID, "leaseId": pop.LeaseID, "status": "failed", "error": "boom"}}})
	if !acks[0].Success || !acks[0].DLQ {
		t.Fatalf("failed with retryLimit 0 = %+v, want dlq true", acks[0])
	}
	srv.Advance(0)
	var page map[string]any
	c.Get("/api/v1/dlq?queue=sq").Want(t, http.StatusOK, &page)
	testutil.WantKeys(t, "dlq page", page, "messages", "pagination", "total")
	testutil.WantKeys(t, "pagination", page["pagination"].(map[string]any), "limit", "offset")
	if page["total"] != float64(1) || page["pagination"].(map[string]any)["limit"] != float64(100) {
		t.Errorf("dlq page %v", page)
	}
	dl := page["messages"].([]any)[0].(map[string]any)
	testutil.WantKeys(t, "dead letter", dl, "id", "messageId", "transactionId", "partitionId", "queue", "partition", "consumerGroup",
		"errorMessage", "retryCount", "data", "producerSub", "createdAt", "failedAt")
	testutil.WantTime(t, "createdAt", dl["createdAt"])
	testutil.WantTime(t, "failedAt", dl["failedAt"])
	if dl["messageId"] != pop.Messages[0].ID || dl["errorMessage"] != "boom" || dl["consumerGroup"] != "__QUEUE_MODE__" ||
		dl["producerSub"] != nil || dl["retryCount"] != float64(0) || dl["partition"] != "Default" {
		t.Errorf("dead letter %v", dl)
	}

	var replay map[string]any
	id := dl["id"].(string)
	c.Post("/api/v1/dlq/"+id+"/replay", "").Want(t, http.StatusOK, &replay)
	testutil.WantKeys(t, "replay", replay, "replayed", "id", "transactionId", "partitionId", "offset")
	if replay["replayed"] != true || replay["id"] != id || replay["transactionId"] != "dlq:"+id || replay["offset"] != float64(1) {
		t.Errorf("replay %v", replay)
	}

	var seek map[string]any
	c.Post("/api/v1/consumer-groups/g/queues/sq/seek", `{"toEnd":true}`).Want(t, http.StatusOK, &seek)
	seekKeys := []string{"success", "consumerGroup", "queueName", "seekToEnd", "targetTimestamp", "partitionsUpdated"}
	testutil.WantKeys(t, "seek", seek, seekKeys...)
	if seek["success"] != true || seek["seekToEnd"] != true || seek["targetTimestamp"] != nil || seek["partitionsUpdated"] != float64(1) ||
		seek["consumerGroup"] != "g" || seek["queueName"] != "sq" {
		t.Errorf("seek toEnd %v", seek)
	}
	seek = nil
	c.Post("/api/v1/consumer-groups/g/queues/sq/seek", `{"timestamp":"2026-01-02T03:04:05+01:00"}`).Want(t, http.StatusOK, &seek)
	testutil.WantKeys(t, "seek", seek, seekKeys...)
	if seek["seekToEnd"] != false || seek["targetTimestamp"] != "2026-01-02T02:04:05.000000Z" {
		t.Errorf("seek timestamp %v", seek)
	}

	var del map[string]any
	c.Delete("/api/v1/consumer-groups/g/queues/sq").Want(t, http.StatusOK, &del)
	testutil.WantKeys(t, "delete group on queue", del, "success", "consumerGroup", "queueName", "deletedPartitions", "metadataDeleted")
	if del["success"] != true || del["metadataDeleted"] != true || del["queueName"] != "sq" {
		t.Errorf("delete group on queue %v", del)
	}
	del = nil
	c.Delete("/api/v1/consumer-groups/__QUEUE_MODE__?deleteMetadata=false").Want(t, http.StatusOK, &del)
	testutil.WantKeys(t, "delete group", del, "success", "consumerGroup", "deletedPartitions", "metadataDeleted")
	if del["metadataDeleted"] != false || del["consumerGroup"] != "__QUEUE_MODE__" {
		t.Errorf("delete group %v", del)
	}
	c.Delete("/api/v1/consumer-groups/__QUEUE_MODE__").Want(t, http.StatusOK, nil) // its kept metadata
	c.Delete("/api/v1/consumer-groups/__QUEUE_MODE__").WantError(t, http.StatusNotFound, "consumer group not found")

	c.Push(testutil.Item{Queue: "sq", TransactionID: "dl-2"})
	pop = c.MustPop("/api/v1/pop/queue/sq?batch=5", nil)
	c.AckBatch(map[string]any{"acknowledgments": []any{map[string]any{"transactionId": pop.Messages[len(pop.Messages)-1].TransactionID,
		"partitionId": pop.PartitionID, "status": "dlq"}}})
	page = nil
	c.Get("/api/v1/dlq?queue=sq").Want(t, http.StatusOK, &page)
	id2 := page["messages"].([]any)[0].(map[string]any)["id"].(string)
	del = nil
	c.Delete("/api/v1/dlq/"+id2).Want(t, http.StatusOK, &del)
	testutil.WantKeys(t, "delete dead letter", del, "deleted", "id")
	if del["deleted"] != true || del["id"] != id2 {
		t.Errorf("delete dead letter %v", del)
	}
	c.Delete("/api/v1/dlq/"+id2).WantError(t, http.StatusNotFound, "dead letter not found")
	c.Post("/api/v1/dlq/"+id+"/replay", "").WantError(t, http.StatusNotFound, "dead letter not found") // replayed once, it is gone

	del = nil
	c.Delete("/api/v1/resources/queues/sq").Want(t, http.StatusOK, &del)
	testutil.WantKeys(t, "delete queue", del, "deleted", "queue")
	if del["deleted"] != true || del["queue"] != "sq" {
		t.Errorf("delete queue %v", del)
	}
	c.Delete("/api/v1/resources/queues/sq").WantError(t, http.StatusNotFound, "queue not found")
}
