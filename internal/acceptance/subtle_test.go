package acceptance

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// answered waits (bounded) for a pop started in the background.
func answered(t *testing.T, done <-chan reply) reply {
	t.Helper()
	return testutil.Recv(t, done, "a waiting pop to be answered")
}

// background starts a GET and returns its answer channel.
func (b *broker) background(path string) <-chan reply {
	done := make(chan reply, 1)
	go func() { done <- b.get(path) }()
	return done
}

func TestSubtle(t *testing.T) {
	t.Parallel()
	t.Run("lease_end_wakes_waiter", func(t *testing.T) {
		b := start(t)
		_, _ = b.pushN("q", "p", 2), 0
		first := msgs(t, b.pop("/api/v1/pop/queue/q?batch=1"))
		done := b.background("/api/v1/pop/queue/q?wait=true&timeout=60000&batch=5")
		b.ackMsg(first[0], "completed", false)
		wantOffsets(t, msgs(t, answered(t, done).obj(http.StatusOK)), 1)
	})
	t.Run("expiry_wakes_waiter", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "p", 1)
		b.pop("/api/v1/pop/queue/q")
		done := b.background("/api/v1/pop/queue/q?wait=true&timeout=60000")
		b.advance(61 * time.Second)
		eq(t, msgs(t, answered(t, done).obj(http.StatusOK))[0], "deliveryAttempt", 2)
	})
	t.Run("seek_wakes_waiter", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "p", 1)
		b.pop("/api/v1/pop/queue/q?consumerGroup=g&subscriptionMode=all")
		done := b.background("/api/v1/pop/queue/q?consumerGroup=g&wait=true&timeout=60000")
		b.seek("g", "q", obj{"timestamp": "1970-01-01T00:00:00Z"}).obj(http.StatusOK)
		eq(t, msgs(t, answered(t, done).obj(http.StatusOK))[0], "deliveryAttempt", 2)
	})
	t.Run("push_creating_partition_wakes_waiter", func(t *testing.T) {
		b := start(t)
		done := b.background("/api/v1/pop/queue/q/partition/new?wait=true&timeout=60000")
		b.push(item("q", "new", "a", 1))
		wantOffsets(t, msgs(t, answered(t, done).obj(http.StatusOK)), 0)
	})
	t.Run("discovery_never_long_polls", func(t *testing.T) {
		b := start(t)
		b.post("/api/v1/configure", obj{"queue": "q", "namespace": "ns"}).obj(http.StatusOK)
		answered(t, b.background("/api/v1/pop?namespace=ns&wait=true&timeout=60000")).empty()
	})
	t.Run("autopilot_batch_and_partitions", func(t *testing.T) {
		b := start(t)
		items := make([]obj, 350)
		for i := range items {
			items[i] = obj{"queue": "q", "partition": "p"}
		}
		b.push(items...)
		for _, want := range []int{100, 200, 50} {
			ms := msgs(t, b.pop("/api/v1/pop/queue/q?autopilot=true"))
			if len(ms) != want {
				t.Fatalf("autopilot pop of %d messages, want %d", len(ms), want)
			}
			b.ackMsg(ms[len(ms)-1], "completed", false)
		}
		for _, p := range []string{"a", "b", "c", "d"} {
			b.pushN("r", p, 1)
			b.advance(time.Millisecond)
		}
		p := b.pop("/api/v1/pop/queue/r?autopilot=true")
		eq(t, p, "partitionsClaimed", 4)
	})
	t.Run("autopilot_halves_on_expiry", func(t *testing.T) {
		b := start(t)
		items := make([]obj, 300)
		for i := range items {
			items[i] = obj{"queue": "q", "partition": "p"}
		}
		b.push(items...)
		ms := msgs(t, b.pop("/api/v1/pop/queue/q?autopilot=true"))
		b.ackMsg(ms[len(ms)-1], "completed", false) // B = 200
		b.pop("/api/v1/pop/queue/q?autopilot=true&batch=1")
		b.advance(61 * time.Second) // an expiry halves B to 100
		if n := len(msgs(t, b.pop("/api/v1/pop/queue/q?autopilot=true"))); n != 100 {
			t.Fatalf("after an expiry: %d messages, want 100", n)
		}
	})
	t.Run("multi_partition_lease_parts", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "a", 2)
		b.advance(time.Millisecond)
		b.pushN("q", "b", 2)
		p := b.pop("/api/v1/pop/queue/q?batch=4&partitions=2")
		ms := msgs(t, p)
		lease := p["leaseId"].(string)
		// failed on a ends the hold on a only.
		eq(t, b.ackMsg(ms[0], "failed", false), "leaseReleased", true)
		again := b.pop("/api/v1/pop/queue/q?batch=4&partitions=2")
		eq(t, again, "partitionsClaimed", 1)
		eq(t, again, "partition", "a")
		// b is still held under the first lease, which extends.
		eq(t, b.extend(lease, obj{"seconds": 5}), "success", true)
		eq(t, b.ackMsg(ms[3], "completed", false), "leaseReleased", true)
		eq(t, b.extend(lease, obj{"seconds": 5}), "error", "Lease not found")
	})
	t.Run("expired_last_partition", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "a", 1)
		b.advance(time.Millisecond)
		b.pushN("q", "b", 1)
		p := b.pop("/api/v1/pop/queue/q?batch=2&partitions=2")
		b.ackMsg(msgs(t, p)[0], "completed", false)
		b.advance(61 * time.Second)
		eq(t, b.extend(p["leaseId"].(string), obj{"seconds": 5}), "error", "Lease already expired")
	})
	t.Run("extend_exact_expiry", func(t *testing.T) {
		b := start(t, queentest.WithManualClockAt(t0))
		b.pushN("q", "p", 1)
		p := b.pop("/api/v1/pop/queue/q?leaseSeconds=100")
		lease := p["leaseId"].(string)
		eq(t, b.extend(lease, obj{"seconds": 10}), "expiresAt", ts(100))
		b.advance(50 * time.Second)
		eq(t, b.extend(lease, obj{"seconds": 60}), "expiresAt", ts(110))
		eq(t, b.extend(lease, `{"seconds":null}`), "expiresAt", ts(110))
	})
	t.Run("checked_before_applied_leaseReleased_on_last", func(t *testing.T) {
		b := start(t)
		_, ms := b.leased("q", "p", "", 3)
		a := func(m obj) obj {
			return obj{"transactionId": m["transactionId"], "partitionId": m["partitionId"], "leaseId": m["leaseId"]}
		}
		res := b.post("/api/v1/ack/batch", obj{"acknowledgments": []obj{a(ms[2]), a(ms[1]), a(ms[0])}}).arr(http.StatusOK)
		for i, want := range []bool{true, false, false} {
			eq(t, res[i], "success", true)
			eq(t, res[i], "leaseReleased", want)
		}
	})
	t.Run("transaction_acks_applied_like_a_batch", func(t *testing.T) {
		b := start(t)
		_, ms := b.leased("q", "p", "g", 3)
		op := func(m obj, st string) obj {
			return obj{"type": "ack", "transactionId": m["transactionId"], "partitionId": m["partitionId"], "leaseId": m["leaseId"], "consumerGroup": "g", "status": st}
		}
		r := b.txn(op(ms[2], "completed"), op(ms[0], "completed"), op(ms[1], "retry"))
		eq(t, r, "success", true)
		wantOffsets(t, msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=g&batch=5")), 1, 2)
	})
	t.Run("replay_of_existing_copy", func(t *testing.T) {
		b := start(t)
		b.post("/api/v1/configure", obj{"queue": "q", "options": obj{"retryLimit": 0}}).obj(http.StatusOK)
		b.pushN("q", "p", 1)
		b.failUntilDead("q", "p", "g", "")
		id := list(t, b.get("/api/v1/dlq").obj(http.StatusOK), "messages")[0]["id"].(string)
		existing := b.push(item("q", "p", "dlq:"+id, 1))[0]
		r := b.post("/api/v1/dlq/"+id+"/replay", nil).obj(http.StatusOK)
		eq(t, r, "offset", num(t, existing, "offset"))
		eq(t, b.get("/api/v1/dlq").obj(http.StatusOK), "total", 0)
		b.post("/api/v1/dlq/"+id+"/replay", nil).fails(http.StatusNotFound)
	})
	t.Run("replay_wakes_waiter", func(t *testing.T) {
		b := start(t)
		b.post("/api/v1/configure", obj{"queue": "q", "options": obj{"retryLimit": 0}}).obj(http.StatusOK)
		b.pushN("q", "p", 1)
		b.failUntilDead("q", "p", "g", "")
		id := list(t, b.get("/api/v1/dlq").obj(http.StatusOK), "messages")[0]["id"].(string)
		done := b.background("/api/v1/pop/queue/q?consumerGroup=g&wait=true&timeout=60000")
		b.post("/api/v1/dlq/"+id+"/replay", nil).obj(http.StatusOK)
		eq(t, msgs(t, answered(t, done).obj(http.StatusOK))[0], "transactionId", "dlq:"+id)
	})
	t.Run("autoAck_counts_and_seek_back", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "p", 1)
		b.pop("/api/v1/pop/queue/q?consumerGroup=g&subscriptionMode=all&autoAck=true")
		b.get("/api/v1/pop/queue/q?consumerGroup=g").empty()
		b.seek("g", "q", obj{"timestamp": "1970-01-01T00:00:00Z"}).obj(http.StatusOK)
		eq(t, msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=g"))[0], "deliveryAttempt", 2)
	})
	t.Run("toEnd_false_with_timestamp", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "p", 1)
		r := b.seek("g", "q", obj{"toEnd": false, "timestamp": "1970-01-01T00:00:00Z"}).obj(http.StatusOK)
		eq(t, r, "seekToEnd", false)
	})
	t.Run("deletedPartitions_counts_cursors", func(t *testing.T) {
		b := start(t)
		for _, p := range []string{"a", "b", "c"} {
			b.pushN("q", p, 1)
			b.advance(time.Millisecond)
		}
		// Partition routes only: whether a queue-wide look at c places a cursor there is the
		// broker's choice (it counts one).
		b.pop("/api/v1/pop/queue/q/partition/a?consumerGroup=g&subscriptionMode=all&autoAck=true")
		b.pop("/api/v1/pop/queue/q/partition/b?consumerGroup=g&autoAck=true")
		eq(t, b.del("/api/v1/consumer-groups/g").obj(http.StatusOK), "deletedPartitions", 2)
	})
	t.Run("pop_data_cap", func(t *testing.T) {
		b := start(t)
		big := strings.Repeat("x", 9<<20)
		b.push(item("q", "p", "a", big), item("q", "p", "b", big), item("q", "p", "c", big))
		if n := len(msgs(t, b.pop("/api/v1/pop/queue/q?batch=10"))); n != 2 {
			t.Fatalf("%d messages of 9 MiB, want 2 (stop once 16 MiB is reached)", n)
		}
	})
	t.Run("groups_independent", func(t *testing.T) {
		b := start(t)
		_, ms := b.leased("q", "p", "a", 2)
		b.ackMsg(ms[1], "completed", false)
		wantOffsets(t, msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=b&subscriptionMode=all&batch=5")), 0, 1)
	})
	t.Run("null_leaseId_is_unfenced", func(t *testing.T) {
		b := start(t)
		_, ms := b.leased("q", "p", "", 1)
		r := b.ack(obj{"transactionId": ms[0]["transactionId"], "partitionId": ms[0]["partitionId"], "leaseId": nil, "status": nil, "consumerGroup": nil})
		fields(t, r, "success", true, "leaseReleased", true)
	})
}
