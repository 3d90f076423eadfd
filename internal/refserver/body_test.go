package refserver

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/queenmq/queen-go/internal/testutil"
)

// refusal is a malformed request: it must answer status with an error naming the field.
type refusal struct {
	name         string
	method, path string
	body         string
	status       int
	parts        []string // each must appear in the error text
}

func bad(name, method, path, body string, parts ...string) refusal {
	return refusal{name: name, method: method, path: path, body: body, status: http.StatusBadRequest, parts: parts}
}

func repeat(b byte, n int) string {
	s := make([]byte, n)
	for i := range s {
		s[i] = b
	}
	return string(s)
}

// Every refusal below is checked for its 400 and error text; then the broker must be
// exactly as empty as before (a refused request changes nothing).
func TestMalformedRequestsAreRefusedAndChangeNothing(t *testing.T) {
	t.Parallel()
	srv, c := start(t)
	_ = srv
	const traceOK = "0b6a3c1e-8c4e-4a8f-9a57-0f1f6a6c0d01"
	cases := []refusal{
		// Bodies that are empty, not JSON, or not an object.
		bad("push empty body", "POST", "/api/v1/push", "", "Empty request body"),
		bad("push blank body", "POST", "/api/v1/push", "  \n", "Empty request body"),
		bad("push invalid JSON", "POST", "/api/v1/push", `{"items":[`, "Invalid JSON"),
		bad("push trailing garbage", "POST", "/api/v1/push", `{"items":[]} x`, "Invalid JSON"),
		bad("push non-JSON whitespace", "POST", "/api/v1/push", "\u00a0{\"items\":[]}", "Invalid JSON"),
		bad("push array body", "POST", "/api/v1/push", `[]`, "object", "array"),
		bad("push null body", "POST", "/api/v1/push", `null`, "object", "null"),
		bad("push string body", "POST", "/api/v1/push", `"items"`, "object", "string"),
		bad("configure empty", "POST", "/api/v1/configure", "", "Empty request body"),
		bad("configure invalid JSON", "POST", "/api/v1/configure", `{`, "Invalid JSON"),
		bad("ack empty", "POST", "/api/v1/ack", "", "Empty request body"),
		bad("ack array", "POST", "/api/v1/ack", `[{"transactionId":"t","partitionId":"p"}]`, "object"),
		bad("ack batch invalid JSON", "POST", "/api/v1/ack/batch", `{"acknowledgments":[}`, "Invalid JSON"),
		bad("transaction empty", "POST", "/api/v1/transaction", "", "Empty request body"),
		bad("seek invalid JSON", "POST", "/api/v1/consumer-groups/g/queues/v/seek", `{"toEnd":tru}`, "Invalid JSON"),

		// Push shape, all or nothing.
		bad("items absent", "POST", "/api/v1/push", `{}`, "items array is required"),
		bad("items null", "POST", "/api/v1/push", `{"items":null}`, "items array is required"),
		bad("items object", "POST", "/api/v1/push", `{"items":{"queue":"v"}}`, "items array is required"),
		bad("item number", "POST", "/api/v1/push", `{"items":[{"queue":"v"},7]}`, "items[1]", "object"),
		// The items are split as the body is checked: a repeated member counts its last value,
		// and a syntax error inside an item refuses the body.
		bad("items repeated, the last not an array", "POST", "/api/v1/push", `{"items":[{"queue":"v"}],"items":7}`, "items array is required"),
		bad("item with a trailing comma", "POST", "/api/v1/push", `{"items":[{"queue":"v",}]}`, "Invalid JSON"),
		bad("items with a trailing comma", "POST", "/api/v1/push", `{"items":[{"queue":"v"},]}`, "Invalid JSON"),
		bad("acknowledgments repeated, the last not an array", "POST", "/api/v1/ack/batch", `{"acknowledgments":[{"transactionId":"t","partitionId":"p"}],"acknowledgments":{}}`, "acknowledgments array is required"),
		bad("acknowledgment with a bad value", "POST", "/api/v1/ack/batch", `{"acknowledgments":[{"transactionId":tru}]}`, "Invalid JSON"),
		bad("item null", "POST", "/api/v1/push", `{"items":[null]}`, "items[0]", "object"),
		bad("queue absent", "POST", "/api/v1/push", `{"items":[{"payload":{}}]}`, "Queue must be a string"),
		bad("queue null", "POST", "/api/v1/push", `{"items":[{"queue":null}]}`, "Queue must be a string"),
		bad("queue number", "POST", "/api/v1/push", `{"items":[{"queue":5}]}`, "Queue must be a string"),
		bad("queue empty", "POST", "/api/v1/push", `{"items":[{"queue":""}]}`, "Queue must be a non-empty string"),
		bad("partition number", "POST", "/api/v1/push", `{"items":[{"queue":"v","partition":1}]}`, "Partition must be a string"),
		bad("transactionId number", "POST", "/api/v1/push", `{"items":[{"queue":"v","transactionId":12}]}`, "transactionId", "12"),
		bad("traceId object", "POST", "/api/v1/push", `{"items":[{"queue":"v","traceId":{}}]}`, "traceId"),
		bad("all or nothing", "POST", "/api/v1/push", `{"items":[{"queue":"v","transactionId":"ok"},{"queue":"v","partition":false}]}`, "Partition must be a string"),
		// traceId must be a canonical UUID.
		bad("traceId not a UUID", "POST", "/api/v1/push", `{"items":[{"queue":"v","traceId":"abc"}]}`, "traceId", "UUID", `"abc"`),
		bad("traceId without hyphens", "POST", "/api/v1/push", `{"items":[{"queue":"v","traceId":"0b6a3c1e8c4e4a8f9a570f1f6a6c0d01"}]}`, "traceId", "UUID"),
		bad("traceId in braces", "POST", "/api/v1/push", `{"items":[{"queue":"v","traceId":"{`+traceOK+`}"}]}`, "traceId", "UUID"),

		// Configure.
		bad("queue absent", "POST", "/api/v1/configure", `{"options":{}}`, "queue is required"),
		bad("queue empty", "POST", "/api/v1/configure", `{"queue":""}`, "queue is required"),
		bad("queue number", "POST", "/api/v1/configure", `{"queue":3}`, "queue", "string"),
		bad("namespace number", "POST", "/api/v1/configure", `{"queue":"v","namespace":1}`, "namespace", "string"),
		bad("options array", "POST", "/api/v1/configure", `{"queue":"v","options":[]}`, "options", "object"),
		bad("leaseTime string", "POST", "/api/v1/configure", `{"queue":"v","options":{"leaseTime":"30"}}`, "leaseTime", `"30"`),
		bad("leaseTime fraction", "POST", "/api/v1/configure", `{"queue":"v","options":{"leaseTime":1.5}}`, "leaseTime", "1.5"),
		bad("leaseTime negative", "POST", "/api/v1/configure", `{"queue":"v","options":{"leaseTime":-1}}`, "leaseTime", "-1"),
		bad("retryLimit boolean", "POST", "/api/v1/configure", `{"queue":"v","options":{"retryLimit":true}}`, "retryLimit", "true"),
		bad("deadLetterQueue string", "POST", "/api/v1/configure", `{"queue":"v","options":{"deadLetterQueue":"yes"}}`, "deadLetterQueue", `"yes"`),

		// Pop parameters, on every pop route.
		bad("batch zero", "GET", "/api/v1/pop/queue/v?batch=0", "", "batch must be a positive integer", `"0"`),
		bad("batch negative", "GET", "/api/v1/pop/queue/v?batch=-3", "", "batch", `"-3"`),
		bad("batch non-numeric", "GET", "/api/v1/pop/queue/v?batch=abc", "", "batch", `"abc"`),
		bad("batch trailing letters", "GET", "/api/v1/pop/queue/v?batch=10abc", "", "batch", `"10abc"`),
		bad("batch fraction", "GET", "/api/v1/pop/queue/v?batch=1.5", "", "batch", `"1.5"`),
		bad("batch plus sign", "GET", "/api/v1/pop/queue/v?batch=%2B5", "", "batch", `"+5"`),
		bad("partitions overflow", "GET", "/api/v1/pop/queue/v?partitions=99999999999999999999", "", "partitions"),
		bad("bad escape", "GET", "/api/v1/pop/queue/v?batch=%zz", "", "malformed query"),
		bad("semicolon separator", "GET", "/api/v1/pop/queue/v?batch=1;wait=true", "", "malformed query"),
		bad("bad escape", "GET", "/api/v1/dlq?limit=%zz", "", "malformed query"),
		bad("first value counts", "GET", "/api/v1/pop/queue/v?batch=0&batch=5", "", "batch", `"0"`),
		bad("partitions zero", "GET", "/api/v1/pop/queue/v?partitions=0", "", "partitions", "1 to 64"),
		bad("partitions 65", "GET", "/api/v1/pop/queue/v?partitions=65", "", "partitions", `"65"`),
		bad("partitions non-numeric", "GET", "/api/v1/pop/queue/v?partitions=all", "", "partitions", `"all"`),
		bad("timeout negative", "GET", "/api/v1/pop/queue/v?timeout=-1", "", "timeout", "60000"),
		bad("timeout too long", "GET", "/api/v1/pop/queue/v?timeout=60001&wait=true", "", "timeout", `"60001"`),
		bad("timeout checked without wait", "GET", "/api/v1/pop/queue/v?timeout=1s", "", "timeout", `"1s"`),
		bad("leaseSeconds zero", "GET", "/api/v1/pop/queue/v?leaseSeconds=0", "", "leaseSeconds", "positive integer"),
		bad("leaseSeconds text", "GET", "/api/v1/pop/queue/v?leaseSeconds=ten", "", "leaseSeconds", `"ten"`),
		bad("wait yes", "GET", "/api/v1/pop/queue/v?wait=yes", "", "wait", `"yes"`),
		bad("wait uppercase", "GET", "/api/v1/pop/queue/v?wait=TRUE", "", "wait", `"TRUE"`),
		bad("autoAck 2", "GET", "/api/v1/pop/queue/v?autoAck=2", "", "autoAck", `"2"`),
		bad("autopilot on", "GET", "/api/v1/pop/queue/v?autopilot=on", "", "autopilot", `"on"`),
		bad("conflation t", "GET", "/api/v1/pop/queue/v?conflation=t&consumerGroup=g", "", "conflation", `"t"`),
		bad("subscriptionMode new-only", "GET", "/api/v1/pop/queue/v?consumerGroup=g&subscriptionMode=new-only", "", "subscriptionMode", `"new-only"`),
		bad("subscriptionMode checked in queue mode", "GET", "/api/v1/pop/queue/v?subscriptionMode=latest", "", "subscriptionMode", `"latest"`),
		bad("subscriptionFrom garbage", "GET", "/api/v1/pop/queue/v?consumerGroup=g&subscriptionFrom=yesterday", "", "subscriptionFrom", `"yesterday"`),
		bad("unescaped plus in subscriptionFrom", "GET", "/api/v1/pop/queue/v?consumerGroup=g&subscriptionFrom=2026-01-01T00:00:00+01:00", "", "subscriptionFrom", "%2B"),
		bad("conflation without group", "GET", "/api/v1/pop/queue/v?conflation=true", "", "conflation", "consumerGroup"),
		bad("conflation in queue mode", "GET", "/api/v1/pop/queue/v?conflation=true&consumerGroup=__QUEUE_MODE__", "", "conflation"),
		bad("conflation with autoAck", "GET", "/api/v1/pop/queue/v?conflation=true&autoAck=true&consumerGroup=g", "", "conflation", "autoAck"),
		bad("partition route validates", "GET", "/api/v1/pop/queue/v/partition/p?timeout=x", "", "timeout", `"x"`),
		bad("discovery validates", "GET", "/api/v1/pop?namespace=ns&batch=0", "", "batch"),
		bad("discovery validates wait", "GET", "/api/v1/pop?namespace=ns&wait=maybe", "", "wait"),
		bad("discovery needs a label", "GET", "/api/v1/pop?batch=5", "", "namespace", "task"),

		// Ack requests.
		bad("single ack with neither id", "POST", "/api/v1/ack", `{}`, "transactionId", "partitionId"),
		bad("single ack with null ids", "POST", "/api/v1/ack", `{"transactionId":null,"partitionId":""}`, "transactionId"),
		bad("single ack number id", "POST", "/api/v1/ack", `{"transactionId":5,"partitionId":"p"}`, "transactionId", "5"),
		bad("single ack status number", "POST", "/api/v1/ack", `{"transactionId":"t","partitionId":"p","status":1}`, "status"),
		bad("acknowledgments absent", "POST", "/api/v1/ack/batch", `{}`, "acknowledgments array is required"),
		bad("acknowledgments object", "POST", "/api/v1/ack/batch", `{"acknowledgments":{}}`, "acknowledgments array is required"),
		bad("element not an object", "POST", "/api/v1/ack/batch", `{"acknowledgments":[{"transactionId":"t","partitionId":"p"},"t"]}`, "acknowledgments[1]", "object"),
		bad("element null", "POST", "/api/v1/ack/batch", `{"acknowledgments":[null]}`, "acknowledgments[0]", "object"),
		bad("item field type", "POST", "/api/v1/ack/batch", `{"acknowledgments":[{"transactionId":"t","partitionId":["p"]}]}`, "acknowledgments[0].partitionId"),
		bad("item error type", "POST", "/api/v1/ack/batch", `{"acknowledgments":[{"transactionId":"t","partitionId":"p","error":{}}]}`, "acknowledgments[0].error"),
		bad("group type", "POST", "/api/v1/ack/batch", `{"consumerGroup":7,"acknowledgments":[]}`, "consumerGroup", "7"),

		// Extend.
		bad("extend empty body", "POST", "/api/v1/lease/L/extend", "", "Empty request body"),
		bad("extend invalid JSON", "POST", "/api/v1/lease/L/extend", `{"seconds":}`, "Invalid JSON"),
		bad("extend string", "POST", "/api/v1/lease/L/extend", `{"seconds":"10"}`, "seconds", `"10"`),
		bad("extend fraction", "POST", "/api/v1/lease/L/extend", `{"seconds":1.5}`, "seconds", "1.5"),
		bad("extend zero", "POST", "/api/v1/lease/L/extend", `{"seconds":0}`, "seconds", "positive"),
		bad("extend negative", "POST", "/api/v1/lease/L/extend", `{"seconds":-60}`, "seconds", "-60"),
		bad("extend array", "POST", "/api/v1/lease/L/extend", `[60]`, "object"),

		// Transactions.
		bad("operations absent", "POST", "/api/v1/transaction", `{}`, "operations array required"),
		bad("operations string", "POST", "/api/v1/transaction", `{"operations":"ack"}`, "operations array required"),
		bad("operations empty", "POST", "/api/v1/transaction", `{"operations":[]}`, "operations array cannot be empty"),
		bad("operation not an object", "POST", "/api/v1/transaction", `{"operations":[{"type":"push","items":[{"queue":"v"}]},3]}`, "operations[1]", "object"),
		bad("type number", "POST", "/api/v1/transaction", `{"operations":[{"type":1}]}`, "operations[0].type"),
		bad("ack field type", "POST", "/api/v1/transaction", `{"operations":[{"type":"push","items":[{"queue":"v"}]},{"type":"ack","transactionId":"t","partitionId":9}]}`, "operations[1].partitionId"),

		// DLQ list.
		bad("limit zero", "GET", "/api/v1/dlq?limit=0", "", "limit", "positive"),
		bad("limit text", "GET", "/api/v1/dlq?limit=all", "", "limit", `"all"`),
		bad("offset negative", "GET", "/api/v1/dlq?offset=-1", "", "offset", `"-1"`),
		bad("offset fraction", "GET", "/api/v1/dlq?offset=0.5", "", "offset"),
		bad("from garbage", "GET", "/api/v1/dlq?from=monday", "", "from", `"monday"`),
		bad("to garbage", "GET", "/api/v1/dlq?to=2026-13-01T00:00:00Z", "", "to"),

		// Seek.
		bad("neither", "POST", "/api/v1/consumer-groups/g/queues/v/seek", `{}`, "Must specify either 'toEnd': true or 'timestamp'"),
		bad("toEnd false counts as absent", "POST", "/api/v1/consumer-groups/g/queues/v/seek", `{"toEnd":false}`, "Must specify either 'toEnd': true or 'timestamp'"),
		bad("both", "POST", "/api/v1/consumer-groups/g/queues/v/seek", `{"toEnd":true,"timestamp":"2026-01-01T00:00:00Z"}`, "toEnd", "timestamp"),
		bad("timestamp number", "POST", "/api/v1/consumer-groups/g/queues/v/seek", `{"timestamp":1700000000}`, "timestamp"),
		bad("toEnd string", "POST", "/api/v1/consumer-groups/g/queues/v/seek", `{"toEnd":"true"}`, "toEnd"),
		bad("timestamp unparseable", "POST", "/api/v1/consumer-groups/g/queues/v/seek", `{"timestamp":"last week"}`, "timestamp", `"last week"`),
		bad("seek empty body", "POST", "/api/v1/consumer-groups/g/queues/v/seek", "", "Empty request body"),

		// Group deletion flag.
		bad("deleteMetadata", "DELETE", "/api/v1/consumer-groups/g?deleteMetadata=no", "", "deleteMetadata", `"no"`),
	}
	for _, tc := range cases {
		r := c.Do(tc.method, tc.path, tc.body)
		t.Run(tc.name, func(t *testing.T) { r.WantError(t, tc.status, tc.parts...) })
	}

	// Nothing was stored: no queue "v" messages, no dead letters.
	if res := c.Pop("/api/v1/pop/queue/v", nil); res != nil {
		t.Errorf("a refused request stored messages: %+v", res)
	}
	if page := c.DLQ(nil); page.Total != 0 || len(page.Messages) != 0 {
		t.Errorf("a refused request filed dead letters: %+v", page)
	}
	c.Post("/api/v1/consumer-groups/g/queues/v/seek", `{"toEnd":true}`).WantError(t, http.StatusNotFound, "queue not found")
}

// Null counts as absent, an empty query value takes its default and a repeated one
// counts its first value.
func TestNullAndEmptyValuesTakeTheirDefaults(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	res := c.Push(testutil.Item{Queue: "nulls", Payload: 1})
	c.Post("/api/v1/push", `{"items":[{"queue":"nulls","partition":null,"transactionId":null,"traceId":null,"payload":2}]}`).Want(t, http.StatusCreated, nil)
	c.Post("/api/v1/configure", `{"queue":"nulls2","namespace":null,"task":null,"options":null}`).Want(t, http.StatusOK, nil)
	c.Post("/api/v1/configure", `{"queue":"nulls3","options":{"leaseTime":null,"retryLimit":null,"deadLetterQueue":null}}`).Want(t, http.StatusOK, nil)

	got := c.MustPop("/api/v1/pop/queue/nulls", testutil.Query("batch", "", "partitions", "", "timeout", "", "wait", "", "consumerGroup", "", "leaseSeconds", ""))
	if len(got.Messages) != 1 || got.Messages[0].TransactionID != res[0].TransactionID {
		t.Fatalf("batch= should default to 1: got %d messages", len(got.Messages))
	}
	if got.Messages[0].Partition != "Default" { // a null partition is Default
		t.Errorf("partition %q, want Default", got.Messages[0].Partition)
	}
	// The repeated batch counts its first value, 5: both remaining and... only one is left.
	c.AckAll(got, "", "completed")
	got = c.MustPop("/api/v1/pop/queue/nulls?batch=5&batch=0", nil)
	if len(got.Messages) != 1 {
		t.Fatalf("got %d messages", len(got.Messages))
	}
	var ext []testutil.ExtendResult
	c.Post("/api/v1/lease/"+got.LeaseID+"/extend", `{"seconds":null}`).Want(t, http.StatusOK, &ext)
	if len(ext) != 1 || !ext[0].Success {
		t.Fatalf(`extend {"seconds":null} = %+v, want success with 60 s`, ext)
	}
	var acks []testutil.AckResult
	c.Post("/api/v1/ack", map[string]any{"transactionId": got.Messages[0].TransactionID, "partitionId": got.Messages[0].PartitionID,
		"leaseId": nil, "status": nil, "consumerGroup": nil, "error": nil}).Want(t, http.StatusOK, &acks)
	if len(acks) != 1 || !acks[0].Success {
		t.Fatalf("ack with null optionals = %+v", acks)
	}
}

// BenchmarkReadBody reads a 13 KB request body (a batch ack of 100 items), as the broker reads
// every body, beside io.ReadAll, which grows its buffer from 512 bytes.
func BenchmarkReadBody(b *testing.B) {
	p := popped{LeaseID: "f5ba7391-6469-4851-b87a-0ea9404f65a7"}
	p.Messages = make([]struct {
		TransactionID string `json:"transactionId"`
		PartitionID   string `json:"partitionId"`
	}, 100)
	for i := range p.Messages {
		p.Messages[i].TransactionID = "01a2315b-2269-74c8-897e-ed8c51f1be96"
		p.Messages[i].PartitionID = "99fee5aa-5753-422b-be1c-ed7420de2cb2"
	}
	body := ackBody(&p, nil)
	w := httptest.NewRecorder()
	request := func() *http.Request {
		return &http.Request{Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body))}
	}
	b.Run("readBody", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if got, err := readBody(w, request()); err != nil || len(got) != len(body) {
				b.Fatal(err)
			}
		}
	})
	b.Run("io.ReadAll", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if got, err := io.ReadAll(request().Body); err != nil || len(got) != len(body) {
				b.Fatal(err)
			}
		}
	})
}
