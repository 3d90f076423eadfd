package refserver

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/internal/wire"
)

// A partition pop reads one partition; partitions=N claims several under one
// lease with batch as the total budget.
func TestPopOfAPartitionAndOfSeveralPartitions(t *testing.T) {
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
			t.Errorf("message %+v: want the shared lease, never the leased partition b", m)
		}
	}
	c.AckAll(many, "", "completed") // each with its own partitionId and the shared leaseId
}

// A discovery pop reads queues whose labels match, and answers 204 when none does.
func TestDiscoveryPopFindsQueuesByNamespaceAndTask(t *testing.T) {
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

// A discovery pop never long-polls, ignores autopilot (batch 1), claims partitions
// of one queue only, and its lease lasts 60 s whatever the queue's leaseTime, or leaseSeconds.
func TestDiscoveryPopLeasesOneQueueFor60sByDefault(t *testing.T) {
	t.Parallel()
	srv, c := start(t, withManualClock())
	c.Post("/api/v1/configure", `{"queue":"dq1","task":"mail","options":{"leaseTime":5}}`).Want(t, http.StatusOK, nil)
	c.Post("/api/v1/configure", `{"queue":"dq2","task":"mail","options":{"leaseTime":5}}`).Want(t, http.StatusOK, nil)
	if r := c.Get("/api/v1/pop?task=mail&wait=true&timeout=60000"); r.Status != http.StatusNoContent || srv.WaitingPops() != 0 {
		t.Fatalf("empty discovery pop with wait=true: %d, %d waiting; want 204 at once", r.Status, srv.WaitingPops())
	}
	c.PushN("dq1", "a", "x", 2)
	c.PushN("dq1", "b", "y", 2)
	c.PushN("dq2", "", "z", 2)

	res := c.MustPop("/api/v1/pop", testutil.Query("task", "mail", "autopilot", "true"))
	if len(res.Messages) != 1 || res.Queue != "dq1" {
		t.Fatalf("autopilot discovery pop: %d messages from %q, want 1 (batch 1) from dq1", len(res.Messages), res.Queue)
	}
	srv.Advance(59 * time.Second)
	var ext []testutil.ExtendResult
	c.Post("/api/v1/lease/"+res.LeaseID+"/extend", `{"seconds":1}`).Want(t, http.StatusOK, &ext)
	if !ext[0].Success {
		t.Fatalf("the discovery lease ended before 60 s: %+v", ext[0])
	}
	srv.Advance(time.Second)
	c.Post("/api/v1/lease/"+res.LeaseID+"/extend", `{"seconds":1}`).Want(t, http.StatusOK, &ext)
	if ext[0].Success || testutil.Deref(ext[0].Error) != "Lease already expired" {
		t.Fatalf("the discovery lease outlived 60 s: %+v", ext[0])
	}

	res = c.MustPop("/api/v1/pop", testutil.Query("task", "mail", "partitions", "3", "batch", "10", "leaseSeconds", "7"))
	for _, m := range res.Messages {
		if res.Queue != "dq1" || m.Partition == "Default" {
			t.Fatalf("a discovery pop claimed %q/%q; want only dq1's partitions", res.Queue, m.Partition)
		}
	}
	if len(res.Messages) != 4 || res.PartitionsClaimed != 2 {
		t.Fatalf("got %d messages from %d partitions, want dq1's 4 from 2", len(res.Messages), res.PartitionsClaimed)
	}
	srv.Advance(7 * time.Second)
	c.Post("/api/v1/lease/"+res.LeaseID+"/extend", `{"seconds":1}`).Want(t, http.StatusOK, &ext)
	if ext[0].Success {
		t.Fatal("leaseSeconds=7 did not set the discovery lease")
	}
}

// An empty discovery pop of a group stored as conflating answers 200
// {"messages":[]}, as a queue pop of that group does; another group gets 204.
func TestAnEmptyDiscoveryPopOfAConflatingGroupAnswersNoMessages(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.Post("/api/v1/configure", `{"queue":"conf-disc","namespace":"cd"}`).Want(t, http.StatusOK, nil)
	r := c.Get("/api/v1/pop/queue/conf-disc?consumerGroup=cg&conflation=true")
	if r.Status != http.StatusOK || string(r.Body) != `{"messages":[]}` {
		t.Fatalf("queue pop: %d %s, want 200 {\"messages\":[]}", r.Status, r.Body)
	}
	r = c.Get("/api/v1/pop?namespace=cd&consumerGroup=cg")
	if r.Status != http.StatusOK || string(r.Body) != `{"messages":[]}` {
		t.Fatalf("discovery pop of the conflating group: %d %s, want 200 {\"messages\":[]}", r.Status, r.Body)
	}
	r = c.Get("/api/v1/pop?namespace=cd&consumerGroup=plain")
	if r.Status != http.StatusNoContent || len(r.Body) != 0 {
		t.Fatalf("discovery pop of a plain group: %d %s, want 204", r.Status, r.Body)
	}
	r = c.Get("/api/v1/pop?namespace=none&consumerGroup=fresh&conflation=true")
	if r.Status != http.StatusOK || string(r.Body) != `{"messages":[]}` {
		t.Fatalf("discovery pop matching no queue with conflation=true: %d %s, want 200 {\"messages\":[]}", r.Status, r.Body)
	}
}

// No consumerGroup, an empty one and __QUEUE_MODE__ are one group.
func TestPopsThatNameNoGroupShareQueueMode(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.PushN("qm", "", "m", 3)
	a := c.MustPop("/api/v1/pop/queue/qm", nil)
	if a.ConsumerGroup != "__QUEUE_MODE__" || a.Messages[0].ConsumerGroup != "__QUEUE_MODE__" {
		t.Errorf("queue-mode pop names group %q/%q", a.ConsumerGroup, a.Messages[0].ConsumerGroup)
	}
	if c.Pop("/api/v1/pop/queue/qm", testutil.Query("consumerGroup", "__QUEUE_MODE__")) != nil || c.Pop("/api/v1/pop/queue/qm?consumerGroup=", nil) != nil {
		t.Fatal("the same group got the leased partition")
	}
	if c.Pop("/api/v1/pop/queue/qm", testutil.Query("consumerGroup", "other", "subscriptionMode", "all")) == nil {
		t.Fatal("another group was blocked by queue mode's lease")
	}
	c.AckAll(a, "", "completed")
	b := c.MustPop("/api/v1/pop/queue/qm", testutil.Query("consumerGroup", "__QUEUE_MODE__"))
	if b.Messages[0].Offset != 1 {
		t.Fatalf("after the ack, queue mode got offset %d, want 1", b.Messages[0].Offset)
	}
}

// A waiting pop on a queue that does not exist yet is answered by the push
// that creates it, as soon as it is stored.
func TestALongPollIsWokenByAPush(t *testing.T) {
	t.Parallel()
	srv, c := start(t)
	got := make(chan *testutil.PopResult, 1)
	go func() { got <- c.Pop("/api/v1/pop/queue/later", testutil.Query("wait", "true", "timeout", "30000")) }()
	testutil.Eventually(t, "the pop to wait", func() bool { return srv.WaitingPops() == 1 })
	c.Push(testutil.Item{Queue: "later", TransactionID: "wake"})
	if res := testutil.Recv(t, got, "the push to wake the waiting pop"); res == nil || res.Messages[0].TransactionID != "wake" {
		t.Fatalf("woken pop answered %+v", res)
	}
}

// A long poll that times out answers 204; timeout=0 answers at once.
func TestALongPollTimesOutWith204(t *testing.T) {
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

// A conflating group gets the newest message only, and an empty pop answers 200 {"messages":[]}.
func TestAConflatingGroupGetsOnlyTheNewestMessage(t *testing.T) {
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
	// autoAck for a group stored as conflating is refused.
	c.Get("/api/v1/pop/queue/conf?consumerGroup=latest&autoAck=true").WantError(t, http.StatusBadRequest, "autoAck")
}

// autoAck hands messages out with leaseId "" and never again.
func TestAutoAckFinishesWhatItHandsOut(t *testing.T) {
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

// With autopilot and no batch, a pop takes up to 100 messages.
func TestAutopilotGrowsTheBatch(t *testing.T) {
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

// Extreme but valid numbers are served, never a 5xx.
func TestExtremeValidNumbersAreTaken(t *testing.T) {
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
	for _, huge := range []string{"2147483648", "99999999999999999999"} { // any positive integer
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
	// Integers ≥ 0, however large; the lease is clamped to what a duration holds.
	c.Post("/api/v1/configure", `{"queue":"huge","options":{"leaseTime":9223372036854775807,"retryLimit":9223372036854775807}}`).Want(t, http.StatusOK, nil)
	c.PushN("huge", "", "again", 1)
	c.MustPop("/api/v1/pop/queue/huge", nil)
}

// An integer is an optional '-' and decimal digits, however many; a batch or
// leaseSeconds beyond 64 bits is a positive integer, so it is served, not refused.
func TestIntegersBeyond64BitsSaturate(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.PushN("bignum", "", "b", 2)
	res := c.MustPop("/api/v1/pop/queue/bignum", testutil.Query("batch", "99999999999999999999", "leaseSeconds", "99999999999999999999"))
	if len(res.Messages) != 2 {
		t.Fatalf("a huge batch returned %d messages, want the 2 available", len(res.Messages))
	}
	c.Get("/api/v1/pop/queue/bignum?batch=-99999999999999999999").WantError(t, http.StatusBadRequest, "batch must be a positive integer")
	c.Get("/api/v1/pop/queue/bignum?partitions=99999999999999999999").WantError(t, http.StatusBadRequest, "partitions")
	c.Get("/api/v1/pop/queue/bignum?timeout=99999999999999999999").WantError(t, http.StatusBadRequest, "timeout")
}

// An empty pop is 204 with no body and no Content-Type.
func TestAnEmptyPopIs204WithNoBody(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	for _, path := range []string{"/api/v1/pop/queue/none", "/api/v1/pop/queue/none/partition/p", "/api/v1/pop?namespace=x"} {
		r := c.Get(path)
		if r.Status != http.StatusNoContent || len(r.Body) != 0 {
			t.Errorf("GET %s = %d %q, want 204 and no body", path, r.Status, r.Body)
		}
	}
}

// Pops with a consumer group on queues that do not exist, and on partitions that do not,
// answer 204 and keep nothing: after 2,000 of them with 250-byte names the broker holds what
// it held before, within a few hundred KB. Not parallel: it measures the heap, which other
// tests would move.
func TestPopsOfUnknownNamesKeepNoState(t *testing.T) {
	_, c := start(t)
	c.PushN("known", "", "m", 1)
	pad := strings.Repeat("x", 240)
	round := func(i int) {
		name := fmt.Sprintf("%s-%06d", pad, i)
		for _, path := range []string{"/api/v1/pop/queue/" + name, "/api/v1/pop/queue/known/partition/" + name} {
			if r := c.Get(path + "?" + testutil.Query("consumerGroup", name, "subscriptionMode", "all").Encode()); r.Status != http.StatusNoContent {
				t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
			}
		}
	}
	for i := range 200 { // connections, buffers and the bounded table of early starts settle first
		round(i)
	}
	before := liveHeap()
	for i := range 2000 {
		round(200 + i)
	}
	after := liveHeap()
	if grown := after - before; grown > 300<<10 {
		t.Fatalf("2,000 rounds of pops on unknown names kept %d bytes", grown)
	}
}

func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// 20 simultaneous pops of one group race for one ready partition; exactly one wins.
func TestRacingPopsLeaseAPartitionOnce(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.PushN("race", "only", "r", 5)
	const racers = 20
	release := make(chan struct{})
	var winners atomic.Int32
	var wg sync.WaitGroup
	for range racers {
		wg.Go(func() {
			<-release
			if res := c.Pop("/api/v1/pop/queue/race", testutil.Query("batch", "5")); res != nil {
				winners.Add(1)
				if len(res.Messages) != 5 {
					t.Errorf("the winner got %d messages, want 5", len(res.Messages))
				}
			}
		})
	}
	close(release)
	wg.Wait()
	if n := winners.Load(); n != 1 {
		t.Fatalf("%d pops won the partition, want exactly 1", n)
	}
}

// 8 competing consumers drain 8 partitions; every message is handled once,
// and each partition's messages in offset order.
func TestCompetingConsumersDrainEveryPartitionInOrder(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	const partitions, perPartition, consumers = 8, 40, 8
	for p := range partitions {
		c.PushN("drain", "p"+strconv.Itoa(p), "m", perPartition)
	}
	var (
		mu   sync.Mutex
		seen = map[string][]int64{} // partition -> offsets in handling order
		n    int
	)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range consumers {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				res := c.Pop("/api/v1/pop/queue/drain", testutil.Query("batch", "7", "wait", "true", "timeout", "100"))
				if res == nil {
					continue
				}
				mu.Lock() // record while the lease is held, so handling order is offset order
				for _, m := range res.Messages {
					seen[m.Partition] = append(seen[m.Partition], m.Offset)
				}
				n += len(res.Messages)
				if n == partitions*perPartition {
					close(done)
				}
				mu.Unlock()
				c.AckAll(res, "", "completed")
			}
		})
	}
	wg.Wait()
	if len(seen) != partitions {
		t.Fatalf("saw %d partitions, want %d", len(seen), partitions)
	}
	for p, offsets := range seen {
		if len(offsets) != perPartition {
			t.Errorf("partition %s: handled %d messages, want %d", p, len(offsets), perPartition)
		}
		for i, off := range offsets {
			if off != int64(i) {
				t.Errorf("partition %s: message %d has offset %d (duplicate or out of order)", p, i, off)
				break
			}
		}
	}
}

// Pops waiting on one queue are each woken by a push of one message per partition.
func TestAPushWakesWaitingPops(t *testing.T) {
	t.Parallel()
	srv, c := start(t)
	const waiters = 4
	results := make(chan *testutil.PopResult, waiters)
	for range waiters {
		go func() { results <- c.Pop("/api/v1/pop/queue/wake", testutil.Query("wait", "true", "timeout", "30000")) }()
	}
	testutil.Eventually(t, "4 pops to wait", func() bool { return srv.WaitingPops() == waiters })
	items := make([]testutil.Item, waiters)
	for i := range items {
		items[i] = testutil.Item{Queue: "wake", Partition: "p" + strconv.Itoa(i), TransactionID: "w" + strconv.Itoa(i)}
	}
	c.Push(items...)
	partitions := map[string]bool{}
	for range waiters {
		res := testutil.Recv(t, results, "a waiting pop to be woken")
		if res == nil || len(res.Messages) != 1 {
			t.Fatalf("a woken pop answered %+v, want one message", res)
		}
		partitions[res.Partition] = true
	}
	if len(partitions) != waiters {
		t.Fatalf("woken pops shared partitions: %v", partitions)
	}
}

// Waiting pops are served in arrival order.
func TestWaitingPopsAreServedInArrivalOrder(t *testing.T) {
	t.Parallel()
	srv, c := start(t)
	first, second := make(chan *testutil.PopResult, 1), make(chan *testutil.PopResult, 1)
	go func() { first <- c.Pop("/api/v1/pop/queue/fifo", testutil.Query("wait", "true", "timeout", "30000")) }()
	testutil.Eventually(t, "the first pop to wait", func() bool { return srv.WaitingPops() == 1 })
	go func() { second <- c.Pop("/api/v1/pop/queue/fifo", testutil.Query("wait", "true", "timeout", "30000")) }()
	testutil.Eventually(t, "the second pop to wait", func() bool { return srv.WaitingPops() == 2 })

	c.Push(testutil.Item{Queue: "fifo", Partition: "a", TransactionID: "one"})
	select {
	case res := <-first:
		if res == nil || res.Messages[0].TransactionID != "one" {
			t.Fatalf("the first waiter got %+v", res)
		}
	case res := <-second:
		t.Fatalf("the second waiter was served first: %+v", res)
	case <-time.After(testutil.Timeout):
		t.Fatal("no waiter was woken")
	}
	c.Push(testutil.Item{Queue: "fifo", Partition: "b", TransactionID: "two"})
	if res := testutil.Recv(t, second, "the second waiter to be woken"); res == nil || res.Messages[0].TransactionID != "two" {
		t.Fatalf("the second waiter got %+v", res)
	}
}

// A waiting pop whose client leaves is abandoned and leases nothing.
func TestAPopWhoseClientLeftLeasesNothing(t *testing.T) {
	t.Parallel()
	srv, c := start(t)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL()+"/api/v1/pop/queue/gone?wait=true&timeout=30000", nil)
	errc := make(chan error, 1)
	go func() {
		resp, err := c.HC.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	testutil.Eventually(t, "the pop to wait", func() bool { return srv.WaitingPops() == 1 })
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("the cancelled request succeeded")
	}
	testutil.Eventually(t, "the abandoned pop to leave", func() bool { return srv.WaitingPops() == 0 })
	c.Push(testutil.Item{Queue: "gone", TransactionID: "after"})
	res := c.MustPop("/api/v1/pop/queue/gone", nil)
	if res.Messages[0].DeliveryAttempt != 1 {
		t.Fatalf("the abandoned pop leased the message: deliveryAttempt %d", res.Messages[0].DeliveryAttempt)
	}
}

// BenchmarkWritePopAnswer writes a 100-message pop answer.
func BenchmarkWritePopAnswer(b *testing.B) {
	res := broker.PopResult{Queue: "orders", Partition: "eu-west", PartitionID: "99fee5aa-5753-422b-be1c-ed7420de2cb2",
		LeaseID: "f5ba7391-6469-4851-b87a-0ea9404f65a7", ConsumerGroup: "billing", PartitionsClaimed: 1}
	created := time.Date(2026, 12, 1, 11, 26, 25, 898604000, time.UTC)
	for i := range 100 {
		res.Messages = append(res.Messages, broker.Message{ID: "01a2315b-226a-794d-be17-8b4942b4e008",
			TransactionID: "01a2315b-2269-74c8-897e-ed8c51f1be96", CreatedAt: created,
			Data:        []byte(`{"customer":{"id":"cust-004000","tier":"gold"},"order":91370,"qty":1,"sku":"SKU-00000"}`),
			PartitionID: res.PartitionID, Partition: res.Partition, LeaseID: res.LeaseID, Offset: int64(i), DeliveryAttempt: 1})
	}
	var buf []byte
	var msgs []wire.Message
	testutil.CPULoop(b, func() {
		if buf, msgs = encodePopAnswer(buf[:0], msgs[:0], &res); len(buf) == 0 {
			b.Fatal("empty")
		}
	})
}

// encodePopAnswer appends a pop answer to dst as the broker writes it, its messages built in
// msgs, which it returns for the next answer.
func encodePopAnswer(dst []byte, msgs []wire.Message, res *broker.PopResult) ([]byte, []wire.Message) {
	answer := popAnswer(res, msgs)
	b, _ := wire.AppendPopAnswer(dst, &answer)
	return b, answer.Messages
}

// A pop answer's messages each carry their own createdAt, in the written layout, whatever the
// reused slice they are built in held before.
func TestPopAnswerGivesEachMessageItsOwnTime(t *testing.T) {
	t.Parallel()
	var res broker.PopResult
	base := time.Date(2026, 12, 2, 1, 2, 3, 4000, time.FixedZone("", 3600))
	for i := range 3 {
		res.Messages = append(res.Messages, broker.Message{ID: itoa(i), CreatedAt: base.Add(time.Duration(i) * 1500 * time.Millisecond)})
	}
	used := []wire.Message{{ID: "stale", CreatedAt: "stale"}}
	answer := popAnswer(&res, used[:0])
	if len(answer.Messages) != 3 {
		t.Fatalf("%d messages, want 3", len(answer.Messages))
	}
	for i, m := range answer.Messages {
		if want := res.Messages[i].CreatedAt.UTC().Format(wire.TimeLayout); m.ID != itoa(i) || m.CreatedAt != want {
			t.Errorf("message %d: id %q createdAt %q, want %q", i, m.ID, m.CreatedAt, want)
		}
	}
}
