package queen

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/testutil"
)

// Benchmarks of the consume loop against the in-process reference broker.
//
//	go test -run '^$' -bench 'BenchmarkConsume' -benchtime 20000x .
//
// BenchmarkConsumeThroughput compares Consume with a no-op handler (per batch, and per message
// with the default progress acks) to a bare HTTP pop + batch-ack loop on the same broker, in
// the same run (goal: Consume ≥ 1.0 × raw). On a shared machine compare cpu-ns/msg (process
// CPU time, client and in-process broker together), which load disturbs less than msgs/s.
// BenchmarkConsumeLatency measures push-to-handler latency on an idle queue (goal: p99 < 5ms).
// BenchmarkConsumeBacklogHeap consumes a backlog from a broker in another process and reports
// the client's peak live heap growth; it should not depend on the backlog's size (in-flight
// messages are bounded by Batch × Concurrency).
// The default backlog is 20,000 messages; for the full run:
//
//	QUEEN_BENCH_BACKLOG=1000000 go test -run '^$' -bench BenchmarkConsumeBacklogHeap -benchtime 1x -timeout 30m .

const (
	benchBatch      = 100
	benchPartitions = 16
)

// fillQueue pushes n small messages spread over benchPartitions partitions.
func fillQueue(b testing.TB, c *Client, queue string, n int) {
	b.Helper()
	const chunk = 1000
	per := (n + benchPartitions - 1) / benchPartitions
	left := n
	for p := 0; p < benchPartitions && left > 0; p++ {
		count := min(per, left)
		left -= count
		items := make([]PushItem, 0, chunk)
		for i := range count {
			items = append(items, PushItem{Data: json.RawMessage(`{"n":` + strconv.Itoa(i) + `}`)})
			if len(items) == chunk || i == count-1 {
				if _, err := c.Queue(queue).Partition(fmt.Sprintf("p%02d", p)).Push(context.Background(), items...); err != nil {
					b.Fatal(err)
				}
				items = items[:0]
			}
		}
	}
}

func BenchmarkConsumeThroughput(b *testing.B) {
	for _, conc := range []int{1, 4, 8} {
		b.Run(fmt.Sprintf("raw/concurrency=%d", conc), func(b *testing.B) {
			srv, c := brokerAndClient(b)
			fillQueue(b, c, "bench", b.N)
			b.ResetTimer()
			cpu := testutil.ProcessCPU()
			rawConsume(b, srv.URL(), "bench", conc, b.N)
			reportConsume(b, testutil.ProcessCPU()-cpu)
		})
		b.Run(fmt.Sprintf("consume/concurrency=%d", conc), func(b *testing.B) {
			benchConsume(b, func(q QueueBuilder) error {
				return q.Concurrency(conc).Consume(context.Background(), func(context.Context, []*Message) error { return nil })
			})
		})
		// One handler call per message, with the default progress acks (AckEvery(0, 1s)).
		b.Run(fmt.Sprintf("consume-each/concurrency=%d", conc), func(b *testing.B) {
			benchConsume(b, func(q QueueBuilder) error {
				return q.Concurrency(conc).Each().Consume(context.Background(), func(context.Context, *Message) error { return nil })
			})
		})
	}
}

// benchConsume fills a queue with b.N messages and times consume on it with Batch(100) and
// Limit(b.N).
func benchConsume(b *testing.B, consume func(QueueBuilder) error) {
	_, c := brokerAndClient(b)
	fillQueue(b, c, "bench", b.N)
	b.ResetTimer()
	cpu := testutil.ProcessCPU()
	if err := consume(c.Queue("bench").Batch(benchBatch).Limit(b.N)); err != nil {
		b.Fatal(err)
	}
	reportConsume(b, testutil.ProcessCPU()-cpu)
}

// rawConsume is the baseline: conc goroutines each popping one partition's batch over plain
// HTTP and completing it with one batch ack, until n messages are acked (rawConsumeShape at
// batch benchBatch).
func rawConsume(b *testing.B, base, queue string, conc, n int) {
	if err := rawConsumeShape(base, queue, conc, benchBatch, n); err != nil {
		b.Error(err)
	}
}

func BenchmarkConsumeLatency(b *testing.B) {
	_, c := brokerAndClient(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	arrived := make(chan time.Time, 1)
	done := testutil.Go(func() error {
		return c.Queue("latency").Wait(true).Each().Consume(ctx, func(context.Context, *Message) error {
			arrived <- time.Now()
			return nil
		})
	})
	// Warm up: the first pop, and the connection, are in place before measuring.
	if _, err := c.Queue("latency").Push(ctx, PushItem{Data: 0}); err != nil {
		b.Fatal(err)
	}
	<-arrived

	latencies := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		pushed := time.Now()
		if _, err := c.Queue("latency").Push(ctx, PushItem{Data: i}); err != nil {
			b.Fatal(err)
		}
		latencies = append(latencies, (<-arrived).Sub(pushed))
	}
	b.StopTimer()
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	slices.Sort(latencies)
	b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds()), "p99-µs")
}

func BenchmarkConsumeBacklogHeap(b *testing.B) {
	backlog := 20_000
	if s := os.Getenv("QUEEN_BENCH_BACKLOG"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("QUEEN_BENCH_BACKLOG=%q: want a positive integer", s)
		}
		backlog = n
	}
	// The broker runs in a process of its own, so the heap measured here is the client's.
	url := startExternalBroker(b)
	c := newTestClient(b, url)
	for i := range b.N {
		queue := fmt.Sprintf("backlog-%d", i)
		fillQueue(b, c, queue, backlog)

		before := liveHeap()
		var peak atomic.Uint64
		var handled atomic.Int64
		const every = 10_000
		err := c.Queue(queue).Batch(benchBatch).Concurrency(4).Limit(backlog).
			Consume(context.Background(), func(_ context.Context, msgs []*Message) error {
				if n := handled.Add(int64(len(msgs))); n%every < int64(len(msgs)) {
					h := liveHeap()
					for cur := peak.Load(); h > cur && !peak.CompareAndSwap(cur, h); cur = peak.Load() {
					}
				}
				return nil
			})
		if err != nil {
			b.Fatal(err)
		}
		growth := int64(peak.Load()) - int64(before)
		b.ReportMetric(float64(backlog), "msgs")
		b.ReportMetric(float64(max(growth, 0))/(1<<10), "peak-live-heap-growth-KB")
	}
}

// liveHeap is the heap still in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// startExternalBroker builds cmd/queen-ref and runs it on a free port, with args (such as
// -compat 0.15), until the benchmark ends.
func startExternalBroker(b *testing.B, args ...string) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "queen-ref")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/queen-ref").CombinedOutput(); err != nil {
		b.Fatalf("building the broker: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	url := ""
	for url == "" && lines.Scan() {
		if _, after, ok := strings.Cut(lines.Text(), "url="); ok {
			url, _, _ = strings.Cut(after, " ")
		}
	}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for lines.Scan() {
		}
	}()
	b.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		<-drained
		_ = cmd.Wait()
	})
	if url == "" {
		b.Fatal("the broker did not say where it listens")
	}
	return url
}
