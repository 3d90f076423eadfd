package wire

import (
	"reflect"
	"testing"
	"time"
)

// Bodies captured from a 0.15 broker decode through the same structs as 2.0 bodies.
func TestDecodes015Answers(t *testing.T) {
	t.Parallel()
	t.Run("push duplicate without partition_id, trace_id and offset", func(t *testing.T) {
		var got []PushResult
		mustDecode(t, `[{"index":0,"message_id":"m","queueName":"q","status":"duplicate","transaction_id":"tx-basic-3"}]`, &got)
		if len(got) != 1 || got[0].PartitionID != nil || got[0].Offset != nil || got[0].Status != "duplicate" || got[0].TransactionID != "tx-basic-3" {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("pop without offset and deliveryAttempt", func(t *testing.T) {
		var got PopAnswer
		mustDecode(t, `{"consumerGroup":"g1","leaseId":"l","messages":[{"consumerGroup":"g1","createdAt":"2026-11-29T21:46:13.767056Z","data":{"n":1},"id":"m","leaseId":"l","partition":"p1","partitionId":"p","producerSub":null,"traceId":null,"transactionId":"t"}],"partition":"p1","partitionId":"p","partitionsClaimed":1,"queue":"q","success":true}`, &got)
		m := got.Messages[0]
		if m.Offset != nil || m.DeliveryAttempt != nil || string(m.Data) != `{"n":1}` || *got.LeaseID != "l" || m.TraceID != nil {
			t.Fatalf("got %+v", m)
		}
	})
	t.Run("empty pops", func(t *testing.T) {
		for body, wantErr := range map[string]string{
			`{"error":"lease_held","messages":[],"success":false}`:                                                                       "lease_held",
			`{"consumerGroup":"g1","leaseId":null,"messages":[],"partition":"","partitionId":null,"queue":"smoke-basic","success":true}`: "",
			`{"messages":[],"paused":true}`: "",
		} {
			var got PopAnswer
			mustDecode(t, body, &got)
			if got.Messages == nil || len(got.Messages) != 0 || got.LeaseID != nil {
				t.Errorf("%s: got %+v", body, got)
			}
			if (got.Error != nil) != (wantErr != "") || (got.Error != nil && !EmptyPopErrors[*got.Error]) {
				t.Errorf("%s: error %v", body, got.Error)
			}
		}
	})
	t.Run("database failure", func(t *testing.T) {
		var got Refusal
		mustDecode(t, `{"error":"ERROR:  invalid input syntax for type uuid: \"p1\"","success":false}`, &got)
		if !got.Refused() || *got.Error != `ERROR:  invalid input syntax for type uuid: "p1"` {
			t.Fatalf("got %+v", got)
		}
		var pop PopAnswer
		mustDecode(t, `{"error":"boom","success":false}`, &pop)
		if pop.Messages != nil {
			t.Fatalf("messages %v, want none", pop.Messages)
		}
	})
	t.Run("dead letter whose id is the message id", func(t *testing.T) {
		var got DLQAnswer
		mustDecode(t, `{"messages":[{"consumerGroup":"g1","createdAt":"2026-11-29T21:46:36.677Z","data":{"will":"fail"},"errorMessage":"boom 2","failedAt":"2026-11-29T21:46:36.950Z","id":"m","partition":"p1","partitionId":"p","producerSub":null,"queue":"smoke-dlq","retryCount":1,"transactionId":"t"}],"pagination":{"limit":100,"offset":0}}`, &got)
		dl := got.Messages[0]
		if got.Total != nil || dl.ID != "m" || dl.MessageID != "" || dl.RetryCount != 1 ||
			!dl.CreatedAt.Equal(time.Date(2026, 11, 29, 21, 46, 36, 677e6, time.UTC)) || got.Pagination.Limit != 100 {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("extend with a millisecond expiry", func(t *testing.T) {
		var got []ExtendResult
		mustDecode(t, `[{"error":null,"expiresAt":"2026-11-29T21:48:14.025Z","index":0,"leaseId":"l","success":true}]`, &got)
		if !got[0].Success || !got[0].ExpiresAt.Equal(time.Date(2026, 11, 29, 21, 48, 14, 25e6, time.UTC)) {
			t.Fatalf("got %+v", got)
		}
	})
}

// The 2.0 shapes are written with every key, in the order of the structs.
func TestEncodes20Answers(t *testing.T) {
	t.Parallel()
	off, attempt, pid, lid := int64(0), 1, "p", "l"
	pop := PopAnswer{Success: new(true), Queue: "q", Partition: "Default", PartitionID: &pid, LeaseID: &lid,
		ConsumerGroup: "__QUEUE_MODE__", PartitionsClaimed: 1, Messages: []Message{{ID: "m", TransactionID: "t",
			Data: Value(`{}`), CreatedAt: "2026-11-29T21:33:13.427069Z", PartitionID: "p", Partition: "Default",
			LeaseID: "l", ConsumerGroup: "__QUEUE_MODE__", Offset: &off, DeliveryAttempt: &attempt}}}
	mustEncode(t, pop, `{"success":true,"queue":"q","partition":"Default","partitionId":"p","leaseId":"l","consumerGroup":"__QUEUE_MODE__","partitionsClaimed":1,"messages":[{"id":"m","transactionId":"t","traceId":null,"data":{},"producerSub":null,"createdAt":"2026-11-29T21:33:13.427069Z","partitionId":"p","partition":"Default","leaseId":"l","consumerGroup":"__QUEUE_MODE__","offset":0,"deliveryAttempt":1}]}`)

	mustEncode(t, TransactionEntry{Index: 0, Type: "ack", Success: true, TransactionID: "t", PartitionID: "p", AckEntry: &AckEntry{}},
		`{"index":0,"type":"ack","success":true,"transactionId":"t","partitionId":"p","error":null,"dlq":false,"leaseReleased":false}`)
	mustEncode(t, TransactionEntry{Index: 1, Type: "push", Success: true, TransactionID: "t", PartitionID: "p",
		PushEntry: &PushEntry{Status: "queued", MessageID: "m", QueueName: "q", Offset: &off}},
		`{"index":1,"type":"push","success":true,"transactionId":"t","partitionId":"p","status":"queued","messageId":"m","queueName":"q","offset":0}`)
	mustEncode(t, Operation{Type: "ack", AckRequest: &AckRequest{TransactionID: "t", PartitionID: "p", Status: "completed"}},
		`{"type":"ack","transactionId":"t","partitionId":"p","status":"completed"}`)
	mustEncode(t, Operation{Type: "push", Items: []PushItem{{Queue: "q", Payload: Value("1"), TransactionID: "t"}}},
		`{"type":"push","items":[{"queue":"q","payload":1,"transactionId":"t"}]}`)
	mustEncode(t, ExtendResult{LeaseID: "l", Success: true, ExpiresAt: &Time{time.Date(2026, 1, 2, 3, 4, 5, 6000, time.FixedZone("", 3600))}},
		`{"index":0,"leaseId":"l","success":true,"error":null,"expiresAt":"2026-01-02T02:04:05.000006Z"}`)
	seconds := int64(60)
	mustEncode(t, QueueOptions{LeaseTime: &seconds, Other: map[string]Value{"priority": Value("3")}}, `{"leaseTime":60,"priority":3}`)
}

// A transaction entry decodes into the part its members belong to.
func TestTransactionEntryParts(t *testing.T) {
	t.Parallel()
	var got []TransactionEntry
	mustDecode(t, `[{"index":0,"type":"ack","success":true,"transactionId":"t","partitionId":"p","error":null,"dlq":true,"leaseReleased":false},{"index":1,"type":"push","success":true,"status":"queued","transactionId":"u","messageId":"m","partitionId":"p","queueName":"q"}]`, &got)
	want := []TransactionEntry{
		{Type: "ack", Success: true, TransactionID: "t", PartitionID: "p", AckEntry: &AckEntry{DLQ: true}},
		{Index: 1, Type: "push", Success: true, TransactionID: "u", PartitionID: "p", PushEntry: &PushEntry{Status: "queued", MessageID: "m", QueueName: "q"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v %+v", got[0], got[1])
	}
}

// As encoding/json did, a repeated name counts its last value and invalid UTF-8 is replaced.
func TestLenientReading(t *testing.T) {
	t.Parallel()
	var got AckRequest
	mustDecode(t, "{\"transactionId\":\"a\",\"transactionId\":\"b\",\"error\":\"x\xffy\"}", &got)
	if got.TransactionID != "b" || got.Error != "x\uFFFDy" {
		t.Fatalf("got %+v", got)
	}
	mustEncode(t, ErrorAnswer{Error: "x\xffy"}, `{"error":"x`+"\uFFFD"+`y"}`)
}

func mustDecode(t *testing.T, body string, v any) {
	t.Helper()
	if err := Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
}

func mustEncode(t *testing.T, v any, want string) {
	t.Helper()
	got, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("encode %+v\n got %s\nwant %s", v, got, want)
	}
}

// Written timestamps are UTC with Z and exactly six fractional digits.
func TestTimeWritesMicrosecondsUTC(t *testing.T) {
	t.Parallel()
	cases := map[time.Time]string{
		time.Date(2026, 11, 29, 21, 33, 13, 427069000, time.UTC):                       `"2026-11-29T21:33:13.427069Z"`,
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC):                                    `"2026-01-02T03:04:05.000000Z"`,
		time.Date(2026, 1, 2, 4, 4, 5, 999999999, time.FixedZone("CET", 3600)):         `"2026-01-02T03:04:05.999999Z"`,
		time.Date(2026, 1, 2, 3, 4, 5, 1000, time.FixedZone("minus", -2*3600)).Local(): `"2026-01-02T05:04:05.000001Z"`,
	}
	for in, want := range cases {
		mustEncode(t, At(in), want)
	}
}
