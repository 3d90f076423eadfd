package acceptance

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/queenmq/queen-go/queentest"
)

var t0 = time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)

// ts is t0 + sec seconds as the broker writes timestamps.
func ts(sec int) string {
	return t0.Add(time.Duration(sec) * time.Second).Format("2006-01-02T15:04:05.000000Z")
}

// scene builds one state, checked by every introspection subtest:
//
//	orders (shop/fulfil, leaseTime 600, retryLimit 1): Default (empty); p0: 5 messages at t0;
//	p1: 3 messages at t0+10 s.
//	fast (all): autoAck pop of all of p0 at t0+15.
//	late (new): first pop at t0+20, empty.
//	__QUEUE_MODE__: pops p0 offsets 0-1 at t0+25 (lease until t0+625), acks offset 0 at t0+30.
//	other (no labels): Default: 1 message at t0+40. Now is t0+40.
type scene struct {
	*broker
	lease, p0, p1, dflt string
}

func newScene(t *testing.T) scene {
	b := start(t, queentest.WithManualClockAt(t0))
	b.post("/api/v1/configure", obj{"queue": "orders", "namespace": "shop", "task": "fulfil", "options": obj{"leaseTime": 600, "retryLimit": 1}}).obj(http.StatusOK)
	s := scene{broker: b}
	s.p0 = b.pushN("orders", "p0", 5)[0]["partition_id"].(string)
	b.advance(10 * time.Second)
	s.p1 = b.pushN("orders", "p1", 3)[0]["partition_id"].(string)
	b.advance(5 * time.Second)
	b.pop("/api/v1/pop/queue/orders/partition/p0?consumerGroup=fast&subscriptionMode=all&autoAck=true&batch=5")
	b.advance(5 * time.Second)
	b.get("/api/v1/pop/queue/orders?consumerGroup=late").empty()
	b.advance(5 * time.Second)
	p := b.pop("/api/v1/pop/queue/orders/partition/p0?batch=2")
	s.lease = p["leaseId"].(string)
	b.advance(5 * time.Second)
	eq(t, b.ackMsg(msgs(t, p)[0], "completed", false), "success", true)
	b.advance(10 * time.Second)
	b.push(item("other", "", "o", obj{"o": 1}))
	for _, e := range list(t, b.get("/api/v1/status/queues/orders").obj(http.StatusOK), "partitions") {
		if e["name"] == "Default" {
			s.dflt = e["id"].(string)
		}
	}
	return s
}

var (
	groupPartitionKeys = []string{"partition", "partitionId", "cursor", "offsetLag", "pending", "processing", "timeLagSeconds", "leaseActive", "workerId", "leaseExpiresAt", "lastConsumedAt", "totalConsumed", "retries"}
	groupSummaryKeys   = []string{"name", "queueName", "topics", "members", "partitionsWithLag", "totalLag", "maxTimeLag", "state", "conflation", "subscriptionMode", "subscriptionTimestamp", "subscriptionCreatedAt"}
	countKeys          = []string{"total", "pending", "processing", "completed", "failed", "deadLetter"}
	messageEntryKeys   = []string{"id", "transactionId", "partitionId", "partition", "queue", "queuePath", "namespace", "task", "queuePriority", "offset", "traceId", "producerSub", "createdAt", "status", "queueStatus", "busStatus", "leaseExpiresAt"}
)

// counts checks a counts object.
func counts(t *testing.T, o obj, total, pending, processing, completed, failed, dead int) {
	t.Helper()
	hasKeys(t, o, countKeys...)
	for k, v := range map[string]int{"total": total, "pending": pending, "processing": processing, "completed": completed, "failed": failed, "deadLetter": dead} {
		eq(t, o, k, v)
	}
}

// fields checks several keys at once.
func fields(t *testing.T, o obj, kv ...any) {
	t.Helper()
	for i := 0; i < len(kv); i += 2 {
		eq(t, o, kv[i].(string), kv[i+1])
	}
}

func TestIntrospection(t *testing.T) {
	t.Parallel()
	t.Run("group_detail", func(t *testing.T) {
		s := newScene(t)
		d := s.get("/api/v1/consumer-groups/__QUEUE_MODE__").obj(http.StatusOK)
		hasKeys(t, d, "orders")
		ps := list(t, sub(t, d, "orders"), "partitions")
		if len(ps) != 3 {
			t.Fatalf("%d partitions, want 3 (every partition, read or not)", len(ps))
		}
		for _, p := range ps {
			hasKeys(t, p, groupPartitionKeys...)
		}
		fields(t, ps[0], "partition", "Default", "partitionId", s.dflt, "cursor", -1, "offsetLag", 0, "pending", 0, "processing", 0, "timeLagSeconds", 0, "leaseActive", false, "workerId", nil, "leaseExpiresAt", nil, "lastConsumedAt", nil, "totalConsumed", 0, "retries", 0)
		fields(t, ps[1], "partition", "p0", "partitionId", s.p0, "cursor", 0, "offsetLag", 4, "pending", 3, "processing", 1, "timeLagSeconds", 40, "leaseActive", true, "workerId", s.lease, "leaseExpiresAt", ts(625), "lastConsumedAt", ts(30), "totalConsumed", 1, "retries", 0)
		fields(t, ps[2], "partition", "p1", "cursor", -1, "offsetLag", 3, "pending", 3, "processing", 0, "timeLagSeconds", 30, "leaseActive", false, "lastConsumedAt", nil, "totalConsumed", 0)

		f := list(t, sub(t, s.get("/api/v1/consumer-groups/fast?queue=orders").obj(http.StatusOK), "orders"), "partitions")
		fields(t, f[1], "cursor", 4, "offsetLag", 0, "timeLagSeconds", 0, "lastConsumedAt", ts(15), "totalConsumed", 5, "leaseActive", false)
		fields(t, f[2], "cursor", -1, "offsetLag", 3, "pending", 3, "timeLagSeconds", 30)

		l := list(t, sub(t, s.get("/api/v1/consumer-groups/late").obj(http.StatusOK), "orders"), "partitions")
		fields(t, l[0], "cursor", -1, "offsetLag", 0)
		fields(t, l[1], "cursor", 4, "offsetLag", 0, "lastConsumedAt", nil, "totalConsumed", 0)
		fields(t, l[2], "cursor", 2, "offsetLag", 0, "timeLagSeconds", 0)

		s.get("/api/v1/consumer-groups/fast?queue=other").fails(http.StatusNotFound, "consumer group not found")
		s.get("/api/v1/consumer-groups/nobody").fails(http.StatusNotFound, "consumer group not found")
	})
	t.Run("group_list", func(t *testing.T) {
		s := newScene(t)
		gs := s.get("/api/v1/consumer-groups").arr(http.StatusOK)
		names := []string{}
		for _, g := range gs {
			hasKeys(t, g, groupSummaryKeys...)
			names = append(names, g["name"].(string)+"/"+g["queueName"].(string))
		}
		if !slices.Equal(names, []string{"__QUEUE_MODE__/orders", "fast/orders", "late/orders"}) {
			t.Fatalf("groups %v", names)
		}
		fields(t, gs[0], "members", 1, "partitionsWithLag", 2, "totalLag", 7, "maxTimeLag", 40, "state", "Stable", "conflation", false, "subscriptionMode", nil, "subscriptionTimestamp", nil)
		if tp := gs[0]["topics"].([]any); len(tp) != 1 || tp[0] != "orders" {
			t.Fatalf("topics %v", tp)
		}
		fields(t, gs[1], "members", 1, "partitionsWithLag", 1, "totalLag", 3, "maxTimeLag", 30, "state", "Stable", "subscriptionMode", "all", "subscriptionTimestamp", nil, "subscriptionCreatedAt", ts(15))
		fields(t, gs[2], "members", 0, "partitionsWithLag", 0, "totalLag", 0, "maxTimeLag", 0, "state", "Dead", "subscriptionMode", "new", "subscriptionTimestamp", ts(20), "subscriptionCreatedAt", ts(20))
		if got := s.get("/api/v1/consumer-groups?queue=nope").wantStatus(http.StatusOK); string(got.body) != "[]" {
			t.Fatalf("unknown queue: %s, want []", got.body)
		}
		if n := len(s.get("/api/v1/consumer-groups?queue=orders").arr(http.StatusOK)); n != 3 {
			t.Fatalf("%d entries for orders", n)
		}
	})
	t.Run("lagging", func(t *testing.T) {
		s := newScene(t)
		ls := s.get("/api/v1/consumer-groups/lagging?minLagSeconds=0").arr(http.StatusOK)
		if len(ls) != 3 {
			t.Fatalf("%d entries: %v", len(ls), ls)
		}
		for _, l := range ls {
			hasKeys(t, l, "consumer_group", "queue_name", "partition_name", "partition_id", "offset_lag", "time_lag_seconds", "lag_hours", "oldest_unconsumed_at", "last_consumed_at", "worker_id")
		}
		fields(t, ls[0], "consumer_group", "__QUEUE_MODE__", "partition_name", "p0", "partition_id", s.p0, "offset_lag", 4, "time_lag_seconds", 40, "lag_hours", 0.01, "oldest_unconsumed_at", ts(0), "last_consumed_at", ts(30), "worker_id", s.lease)
		fields(t, ls[1], "consumer_group", "__QUEUE_MODE__", "partition_name", "p1", "time_lag_seconds", 30, "oldest_unconsumed_at", ts(10), "worker_id", nil)
		fields(t, ls[2], "consumer_group", "fast", "partition_name", "p1", "queue_name", "orders")
		if n := len(s.get("/api/v1/consumer-groups/lagging?minLagSeconds=30").arr(http.StatusOK)); n != 1 {
			t.Fatalf("minLagSeconds=30: %d entries, want 1 (strictly above)", n)
		}
		if n := len(s.get("/api/v1/consumer-groups/lagging?minLagSeconds=0&consumerGroup=fast&queue=orders").arr(http.StatusOK)); n != 1 {
			t.Fatalf("filtered: %d entries, want 1", n)
		}
		if r := s.get("/api/v1/consumer-groups/lagging").wantStatus(http.StatusOK); string(r.body) != "[]" {
			t.Fatalf("default 3600: %s, want []", r.body)
		}
		s.get("/api/v1/consumer-groups/lagging?minLagSeconds=-1").fails(http.StatusBadRequest, "minLagSeconds must be a non-negative integer")
		s.get("/api/v1/consumer-groups/lagging?minLagSeconds=abc").fails(http.StatusBadRequest, "minLagSeconds")
	})
	t.Run("queue_list", func(t *testing.T) {
		s := newScene(t)
		l := s.get("/api/v1/status/queues").obj(http.StatusOK)
		hasKeys(t, l, "queues", "pagination", "total")
		eq(t, l, "total", 2)
		fields(t, sub(t, l, "pagination"), "limit", 100, "offset", 0)
		qs := list(t, l, "queues")
		fields(t, qs[0], "name", "other", "namespace", "", "task", "", "partitions", 1)
		hasKeys(t, qs[1], "id", "name", "namespace", "task", "createdAt", "partitions", "messages")
		fields(t, qs[1], "name", "orders", "namespace", "shop", "task", "fulfil", "partitions", 3, "createdAt", ts(0))
		m := sub(t, qs[1], "messages")
		hasKeys(t, m, "total", "pending", "processing", "completed", "deadLetter")
		fields(t, m, "total", 8, "pending", 6, "processing", 1, "completed", 1, "deadLetter", 0)
		f := s.get("/api/v1/status/queues?namespace=shop&limit=1&offset=0").obj(http.StatusOK)
		eq(t, f, "total", 1)
		p := s.get("/api/v1/status/queues?limit=1&offset=1").obj(http.StatusOK)
		eq(t, p, "total", 2)
		eq(t, list(t, p, "queues")[0], "name", "orders")
		for _, q := range []string{"limit=0", "limit=1001", "limit=x", "offset=-1", "offset=1.5"} {
			t.Run(q, func(t *testing.T) { s.at(t).get("/api/v1/status/queues?" + q).fails(http.StatusBadRequest) })
		}
		s.get("/api/v1/status/queues?limit=0").fails(http.StatusBadRequest, "limit must be an integer from 1 to 1000")
		s.get("/api/v1/status/queues?offset=-1").fails(http.StatusBadRequest, "offset must be a non-negative integer")
	})
	t.Run("queue_detail", func(t *testing.T) {
		s := newScene(t)
		d := s.get("/api/v1/status/queues/orders").obj(http.StatusOK)
		hasKeys(t, d, "queue", "partitions", "totals")
		q := sub(t, d, "queue")
		hasKeys(t, q, "id", "name", "namespace", "task", "priority", "createdAt", "config", "options")
		fields(t, q, "priority", 0)
		cfg := sub(t, q, "config")
		hasKeys(t, cfg, "leaseTime", "retryLimit", "deadLetterQueue", "retryDelay", "ttl", "maxQueueSize")
		fields(t, cfg, "leaseTime", 600, "retryLimit", 1, "deadLetterQueue", true, "retryDelay", nil, "ttl", nil, "maxQueueSize", nil)
		ps := list(t, d, "partitions")
		if len(ps) != 3 {
			t.Fatalf("%d partitions", len(ps))
		}
		for _, p := range ps {
			hasKeys(t, p, "id", "name", "createdAt", "lastOffset", "messages", "stats", "cursor", "lastActivity", "oldestMessage", "newestMessage")
		}
		fields(t, ps[0], "name", "Default", "lastOffset", -1, "lastActivity", nil, "oldestMessage", nil, "newestMessage", nil)
		counts(t, sub(t, ps[0], "messages"), 0, 0, 0, 0, 0, 0)
		fields(t, ps[1], "name", "p0", "lastOffset", 4, "lastActivity", ts(30), "oldestMessage", ts(0), "newestMessage", ts(0))
		counts(t, sub(t, ps[1], "messages"), 5, 3, 1, 1, 0, 0)
		counts(t, sub(t, ps[1], "stats"), 5, 3, 1, 1, 0, 0)
		fields(t, sub(t, ps[1], "cursor"), "totalConsumed", 6, "batchesConsumed", 1)
		fields(t, ps[2], "name", "p1", "oldestMessage", ts(10), "newestMessage", ts(10), "lastActivity", nil)
		counts(t, sub(t, ps[2], "messages"), 3, 3, 0, 0, 0, 0)
		tot := sub(t, d, "totals")
		counts(t, sub(t, tot, "messages"), 8, 6, 1, 1, 0, 0)
		fields(t, tot, "total", 8, "pending", 6, "processing", 1, "completed", 1, "failed", 0, "deadLetter", 0)
		s.get("/api/v1/status/queues/nope").fails(http.StatusNotFound, "queue not found")
	})
	t.Run("browse", func(t *testing.T) {
		s := newScene(t)
		r := s.get("/api/v1/messages?queue=orders").obj(http.StatusOK)
		hasKeys(t, r, "messages", "mode")
		mode := sub(t, r, "mode")
		hasKeys(t, mode, "hasQueueMode", "busGroupsCount", "type")
		fields(t, mode, "hasQueueMode", true, "busGroupsCount", 2, "type", "hybrid")
		ms := list(t, r, "messages")
		got := []string{}
		for _, m := range ms {
			hasKeys(t, m, messageEntryKeys...)
			got = append(got, m["transactionId"].(string))
		}
		want := []string{"p1-t2", "p1-t1", "p1-t0", "p0-t4", "p0-t3", "p0-t2", "p0-t1", "p0-t0"}
		if !slices.Equal(got, want) {
			t.Fatalf("order %v, want %v", got, want)
		}
		byTxn := map[string]obj{}
		for _, m := range ms {
			byTxn[m["transactionId"].(string)] = m
		}
		fields(t, byTxn["p0-t1"], "status", "processing", "queueStatus", "processing", "leaseExpiresAt", ts(625), "offset", 1, "queuePath", "orders/p0", "namespace", "shop", "task", "fulfil", "queuePriority", 0, "partitionId", s.p0)
		fields(t, sub(t, byTxn["p0-t1"], "busStatus"), "consumedBy", 2, "totalGroups", 2)
		fields(t, byTxn["p0-t0"], "status", "completed", "queueStatus", "completed")
		fields(t, byTxn["p0-t2"], "status", "pending", "leaseExpiresAt", nil)
		fields(t, sub(t, byTxn["p1-t0"], "busStatus"), "consumedBy", 1, "totalGroups", 2)

		one := func(q string) []obj {
			t.Helper()
			return list(t, s.get("/api/v1/messages?queue=orders&"+q).obj(http.StatusOK), "messages")
		}
		if n := len(one("status=processing")); n != 1 {
			t.Fatalf("processing: %d", n)
		}
		if n := len(one("status=pending")); n != 6 {
			t.Fatalf("pending: %d", n)
		}
		wantOffsets(t, one("partition=p0&order=asc&fromOffset=2&limit=2"), 2, 3)
		wantOffsets(t, one("partition=p0&fromOffset=99&limit=2"), 4, 3)
		wantOffsets(t, one("partition=p0&fromOffset=2"), 2, 1, 0)
		wantOffsets(t, one("partition=p1&offset=1&order=asc"), 1, 2)
		if n := len(one("from=" + ts(5) + "&to=" + ts(10))); n != 3 {
			t.Fatalf("from/to: %d, want p1's 3", n)
		}
		if n := len(one("from=" + ts(11) + "&to=" + ts(10))); n != 0 {
			t.Fatalf("from after to: %d", n)
		}
		if n := len(one("ns=shop&task=fulfil")); n != 8 {
			t.Fatalf("labels: %d", n)
		}
		if n := len(one("ns=other")); n != 0 {
			t.Fatalf("unequal ns: %d", n)
		}
		pl := one("payload=true&partition=p0&order=asc&limit=1")[0]
		hasKeys(t, pl, append(slices.Clone(messageEntryKeys), "payload")...)
		eq(t, sub(t, pl, "payload"), "i", 0)

		s.get("/api/v1/messages").fails(http.StatusBadRequest, "queue is required")
		s.get("/api/v1/messages?queue=nope").fails(http.StatusNotFound, "queue not found")
		s.get("/api/v1/messages?queue=orders&partition=zz").fails(http.StatusNotFound, "partition not found")
		for q, msg := range map[string]string{
			"limit=0":                    "limit must be an integer from 1 to 1000",
			"limit=1001":                 "limit must be an integer from 1 to 1000",
			"offset=-1":                  "offset must be a non-negative integer",
			"fromOffset=1":               "fromOffset requires partition",
			"partition=p0&fromOffset=-1": "fromOffset must be a non-negative integer",
			"status=failed":              "status must be one of pending, processing, completed, dead_letter",
			"order=up":                   "order must be asc or desc",
			"payload=yes":                "payload must be a boolean",
			"from=yesterday":             "from must be an RFC 3339 timestamp",
			"to=later":                   "to must be an RFC 3339 timestamp",
		} {
			t.Run(q, func(t *testing.T) {
				if got := s.at(t).get("/api/v1/messages?queue=orders&" + q).fails(http.StatusBadRequest); got != msg {
					t.Fatalf("error %q, want %q", got, msg)
				}
			})
		}
		r2 := s.get("/api/v1/messages?queue=other").obj(http.StatusOK)
		fields(t, sub(t, r2, "mode"), "hasQueueMode", false, "busGroupsCount", 0, "type", "none")
		e := s.get("/api/v1/messages?queue=orders&partition=Default").wantStatus(http.StatusOK)
		if eo := e.obj(http.StatusOK); len(list(t, eo, "messages")) != 0 {
			t.Fatalf("Default not empty: %s", e.body)
		}
	})
	t.Run("message_detail", func(t *testing.T) {
		s := newScene(t)
		d := s.get("/api/v1/messages/" + s.p0 + "/p0-t1").obj(http.StatusOK)
		hasKeys(t, d, append(slices.Clone(messageEntryKeys), "payload", "isEncrypted", "errorMessage", "retryCount", "queueConfig", "mode", "consumerGroups")...)
		fields(t, d, "isEncrypted", false, "errorMessage", nil, "retryCount", nil, "status", "processing")
		eq(t, sub(t, d, "payload"), "i", 1)
		qc := sub(t, d, "queueConfig")
		hasKeys(t, qc, "leaseTime", "retryLimit", "retryDelay", "ttl", "priority")
		fields(t, qc, "leaseTime", 600, "retryLimit", 1, "retryDelay", nil, "ttl", nil, "priority", 0)
		m := sub(t, d, "mode")
		hasKeys(t, m, "hasQueueMode", "busGroupsCount", "consumedByGroups", "type")
		fields(t, m, "consumedByGroups", 2, "type", "hybrid")
		cg := list(t, d, "consumerGroups")
		if len(cg) != 3 {
			t.Fatalf("consumerGroups %v", cg)
		}
		for _, g := range cg {
			hasKeys(t, g, "name", "consumed", "leaseExpiresAt", "status", "deliveryAttempt")
		}
		fields(t, cg[0], "name", "__QUEUE_MODE__", "consumed", false, "leaseExpiresAt", ts(625), "status", "processing", "deliveryAttempt", 1)
		fields(t, cg[1], "name", "fast", "consumed", true, "leaseExpiresAt", nil, "status", "completed", "deliveryAttempt", 1)
		fields(t, cg[2], "name", "late", "consumed", true, "leaseExpiresAt", nil, "status", "completed", "deliveryAttempt", 0)
		s.get("/api/v1/messages/"+s.p0+"/nope").fails(http.StatusNotFound, "message not found")
		s.get("/api/v1/messages/nope/p0-t1").fails(http.StatusNotFound, "message not found")
	})
	t.Run("overview", func(t *testing.T) {
		s := newScene(t)
		o := s.get("/api/v1/resources/overview").obj(http.StatusOK)
		hasKeys(t, o, "queues", "partitions", "namespaces", "tasks", "messages", "lag", "throughput", "timestamp", "statsAge")
		fields(t, o, "queues", 2, "partitions", 4, "namespaces", 1, "tasks", 1, "statsAge", 0, "timestamp", ts(40))
		counts(t, sub(t, o, "messages"), 9, 7, 1, 1, 0, 0)
		lag := sub(t, o, "lag")
		fields(t, sub(t, lag, "offset"), "min", 0, "max", 4, "avg", 2, "median", 1)
		fields(t, sub(t, lag, "time"), "min", 0, "max", 40, "avg", 17, "median", 0)
		fields(t, sub(t, o, "throughput"), "ingestedPerSecond", 0.03, "processedPerSecond", 0.02)
	})
	t.Run("reads_change_nothing", func(t *testing.T) {
		s := newScene(t)
		for _, p := range []string{"/api/v1/status/queues", "/api/v1/status/queues/orders", "/api/v1/consumer-groups", "/api/v1/consumer-groups/fast", "/api/v1/consumer-groups/lagging?minLagSeconds=0", "/api/v1/messages?queue=orders&payload=true", "/api/v1/messages/" + s.p0 + "/p0-t2", "/api/v1/resources/overview", "/api/v1/consumer-groups/ghost", "/api/v1/messages?queue=ghost"} {
			s.get(p)
		}
		s.get("/api/v1/status/queues/ghost").fails(http.StatusNotFound)
		// ghost did not become attached; the next QM pop still sees p1 from offset 0 at attempt 1.
		ms := msgs(t, s.pop("/api/v1/pop/queue/orders/partition/p1?batch=5"))
		wantOffsets(t, ms, 0, 1, 2)
		eq(t, ms[0], "deliveryAttempt", 1)
		if n := len(s.get("/api/v1/consumer-groups").arr(http.StatusOK)); n != 3 {
			t.Fatalf("%d group entries after reads", n)
		}
	})
	t.Run("expired_lease_counts_expired", func(t *testing.T) {
		s := newScene(t)
		s.advance(600 * time.Second) // t0+640: past the lease's t0+625
		ps := list(t, sub(t, s.get("/api/v1/consumer-groups/__QUEUE_MODE__").obj(http.StatusOK), "orders"), "partitions")
		fields(t, ps[1], "leaseActive", false, "workerId", nil, "leaseExpiresAt", nil, "processing", 0, "pending", 4, "offsetLag", 4)
		gs := s.get("/api/v1/consumer-groups").arr(http.StatusOK)
		eq(t, gs[0], "state", "Lagging") // maxTimeLag 640 > 300
	})
	t.Run("methods_and_auth", func(t *testing.T) {
		b := start(t, queentest.WithToken("k"))
		for _, p := range []string{"/api/v1/status/queues", "/api/v1/consumer-groups", "/api/v1/consumer-groups/lagging", "/api/v1/messages?queue=q", "/api/v1/resources/overview", "/api/v1/messages/a/b", "/api/v1/consumer-groups/g"} {
			b.get(p).fails(http.StatusUnauthorized, "Authentication required")
		}
		b.token = "k"
		for _, c := range [][2]string{{"POST", "/api/v1/status/queues"}, {"DELETE", "/api/v1/status/queues/q"}, {"POST", "/api/v1/consumer-groups"}, {"POST", "/api/v1/consumer-groups/lagging"}, {"POST", "/api/v1/messages"}, {"POST", "/api/v1/resources/overview"}, {"POST", "/api/v1/messages/a/b"}} {
			b.do(c[0], c[1], nil).fails(http.StatusMethodNotAllowed, "method not allowed")
		}
		if r := b.get("/api/v1/consumer-groups").wantStatus(http.StatusOK); string(r.body) != "[]" {
			t.Fatalf("empty group list %q", r.body)
		}
		// Escaped names reach their queue and message.
		pid := b.push(item("a/b c", "x?y", "t/1 2", 1))[0]["partition_id"].(string)
		b.get("/api/v1/status/queues/a%2Fb%20c").obj(http.StatusOK)
		b.get("/api/v1/messages/" + pid + "/t%2F1%202").obj(http.StatusOK)
	})
}
