package refserver

import (
	"net/http"
	"strings"
	"testing"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/names"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/internal/wire"
)

// Push creates the queue and partition; offsets 0, 1, 2…
// with no gap for a duplicate; a pop returns them in order.
func TestPushCreatesQueuesAndPartitionsAndNumbersMessagesInOrder(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	res := c.Push(testutil.Item{Queue: "orders", Partition: "p", TransactionID: "a"}, testutil.Item{Queue: "orders", Partition: "p", TransactionID: "a"},
		testutil.Item{Queue: "orders", Partition: "p"}, testutil.Item{Queue: "orders", Partition: "p", TransactionID: "c"})
	if res[0].Offset != 0 || res[1].Status != "duplicate" || res[1].Offset != 0 || res[2].Offset != 1 || res[3].Offset != 2 {
		t.Fatalf("offsets/statuses %+v", res)
	}
	if res[2].TransactionID == "" || !names.IsUUID(res[2].TransactionID) {
		t.Errorf("generated transactionId %q, want a UUID", res[2].TransactionID)
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

// A transactionId is unique within a partition only.
func TestPushOfAKnownTransactionIDIsADuplicate(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	first := c.Push(testutil.Item{Queue: "dup", Partition: "a", TransactionID: "t1", Payload: 1})
	again := c.Push(testutil.Item{Queue: "dup", Partition: "a", TransactionID: "t1", Payload: 2}, testutil.Item{Queue: "dup", Partition: "b", TransactionID: "t1"})
	if again[0].Status != "duplicate" || again[0].MessageID != first[0].MessageID || again[0].PartitionID != first[0].PartitionID {
		t.Errorf("repeat in partition a = %+v, want duplicate of %+v", again[0], first[0])
	}
	if again[1].Status != "queued" || again[1].PartitionID == first[0].PartitionID {
		t.Errorf("same id in partition b = %+v, want queued elsewhere", again[1])
	}
}

// {"items":[]} answers 201 [].
func TestPushOfNoItemsAnswersAnEmptyArray(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	r := c.Post("/api/v1/push", `{"items":[]}`)
	if r.Status != http.StatusCreated || string(r.Body) != "[]" {
		t.Fatalf("got %d %s, want 201 []", r.Status, r.Body)
	}
}

// A repeated items member counts its last value, as every repeated member does: only the
// last array is pushed.
func TestPushOfRepeatedItemsStoresTheLastArray(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	r := c.Post("/api/v1/push", `{"items":[{"queue":"twice","transactionId":"first"}],"items":7,`+
		`"items":[{"queue":"twice","transactionId":"last","payload":1},{"queue":"twice","transactionId":"also"}]}`)
	if r.Status != http.StatusCreated || !strings.Contains(string(r.Body), `"last"`) ||
		strings.Contains(string(r.Body), `"first"`) || strings.Count(string(r.Body), `"index"`) != 2 {
		t.Fatalf("got %d %s, want the last array's two items stored", r.Status, r.Body)
	}
}

// A body over the size limit is refused with 413 and a JSON error, and stores nothing.
func TestABodyOverTheLimitIsRefused(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	big := `{"items":[{"queue":"big","payload":"` + string(make([]byte, 0)) + repeat('a', maxBodyBytes) + `"}]}`
	c.Do("POST", "/api/v1/push", big).WantError(t, http.StatusRequestEntityTooLarge, "too large")
	if c.Pop("/api/v1/pop/queue/big", nil) != nil {
		t.Fatal("an oversized push stored a message")
	}
}

// BenchmarkReadPushRequest reads a push of 100 items, the broker's hottest body; it reports
// cpu-ns/op, the process's CPU time per operation.
func BenchmarkReadPushRequest(b *testing.B) {
	body := pushBody("push-bench", 100, 0)
	testutil.CPULoop(b, func() {
		o, elems, err := decodeObjectSplitting(body, "items")
		if err != nil {
			b.Fatal(err)
		}
		if items, err := pushItemsOf(o.raw("items"), elems, "items"); err != nil || len(items) != 100 {
			b.Fatal(err)
		}
	})
}

// BenchmarkWritePushAnswer writes the answer of a push of 100 items.
func BenchmarkWritePushAnswer(b *testing.B) {
	results := make([]broker.PushResult, 100)
	for i := range results {
		results[i] = broker.PushResult{Index: i, TransactionID: "01a2315b-2269-74c8-897e-ed8c51f1be96", Status: "queued",
			MessageID: "01a2315b-226a-794d-be17-8b4942b4e008", PartitionID: "99fee5aa-5753-422b-be1c-ed7420de2cb2",
			QueueName: "orders", Offset: int64(i)}
	}
	var buf []byte
	testutil.CPULoop(b, func() {
		if buf = encodePushAnswer(buf[:0], results); len(buf) == 0 {
			b.Fatal("empty")
		}
	})
}

// encodePushAnswer appends a push answer to dst as the broker writes it.
func encodePushAnswer(dst []byte, results []broker.PushResult) []byte {
	b, _ := wire.AppendPushResults(dst, pushAnswer(results))
	return b
}
