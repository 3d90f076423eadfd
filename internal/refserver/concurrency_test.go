package refserver

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/testutil"
)

// R51, R52: 20 simultaneous pops of one group race for one ready partition; exactly one wins.
func TestConcurrency_PopsRaceForOnePartition_R51_R52(t *testing.T) {
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

// R16, R51, R56: 8 competing consumers drain 8 partitions; every message is handled once,
// and each partition's messages in offset order.
func TestConcurrency_CompetingConsumersDrainPartitions_R16_R51(t *testing.T) {
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

// R24: pops waiting on one queue are each woken by a push of one message per partition.
func TestConcurrency_PushWakesWaitingPops_R24(t *testing.T) {
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
		select {
		case res := <-results:
			if res == nil || len(res.Messages) != 1 {
				t.Fatalf("a woken pop answered %+v, want one message", res)
			}
			partitions[res.Partition] = true
		case <-time.After(10 * time.Second):
			t.Fatal("a waiting pop was not woken")
		}
	}
	if len(partitions) != waiters {
		t.Fatalf("woken pops shared partitions: %v", partitions)
	}
}

// R142: a waiting pop whose client leaves is abandoned and leases nothing.
func TestConcurrency_DisconnectedPopLeasesNothing_R142(t *testing.T) {
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

// R24: waiting pops are served in arrival order.
func TestConcurrency_WaitersServedInArrivalOrder_R24(t *testing.T) {
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
	case <-time.After(10 * time.Second):
		t.Fatal("no waiter was woken")
	}
	c.Push(testutil.Item{Queue: "fifo", Partition: "b", TransactionID: "two"})
	select {
	case res := <-second:
		if res == nil || res.Messages[0].TransactionID != "two" {
			t.Fatalf("the second waiter got %+v", res)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the second waiter was not woken")
	}
}
