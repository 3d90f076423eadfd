package queen

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// The Producer against Push, side by side, with 8 goroutines publishing one-item messages to
// an in-process reference broker. One op is one item: ns/op and allocs/op are per item (the
// broker's work, in the same process, included).
//
//	go test -run '^$' -bench 'BenchmarkProducer' -benchtime 20000x -count 3 .
//
// push-1 calls Push with one item per call; push-1000 calls Push with 1,000-item slices; send
// calls Producer.Send with one item per call and Flushes at the end, with the default config.
// partitions=1 puts every item in one partition (one request in flight at a time keeps their
// order); partitions=16 keys them, so several requests can be in flight.
func BenchmarkProducer(b *testing.B) {
	const goroutines = 8
	for _, parts := range []int{1, 16} {
		b.Run(fmt.Sprintf("partitions=%d/push-1", parts), func(b *testing.B) {
			c := benchClient(b)
			runSenders(b, goroutines, func(i int) {
				item := benchItem(i, parts)
				if _, err := c.Queue("bench").Push(context.Background(), item); err != nil {
					b.Error(err)
				}
			})
		})
		b.Run(fmt.Sprintf("partitions=%d/push-1000", parts), func(b *testing.B) {
			c := benchClient(b)
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ReportAllocs()
			b.ResetTimer()
			cpu := testutil.ProcessCPU()
			defer func() { reportCPU(b, cpu) }()
			for range goroutines {
				wg.Go(func() {
					items := make([]PushItem, 0, 1000)
					for {
						start := int(next.Add(1000)) - 1000
						if start >= b.N {
							return
						}
						items = items[:0]
						for i := start; i < min(start+1000, b.N); i++ {
							items = append(items, benchItem(i, parts))
						}
						if _, err := c.Queue("bench").Push(context.Background(), items...); err != nil {
							b.Error(err)
						}
					}
				})
			}
			wg.Wait()
			reportItems(b)
		})
		b.Run(fmt.Sprintf("partitions=%d/send", parts), func(b *testing.B) { benchSend(b, goroutines, parts) })
	}
}

func benchSend(b *testing.B, goroutines, parts int) {
	c := benchClient(b)
	sentAt := make([]int64, b.N)
	var waited, latency atomic.Int64
	p, err := c.NewProducer(ProducerConfig{OnResult: func(_ string, item PushItem, _ PushResult, err error) {
		if err != nil {
			b.Error(err)
		}
		i := item.Data.(benchData).i
		latency.Add(time.Now().UnixNano() - sentAt[i])
	}})
	if err != nil {
		b.Fatal(err)
	}
	runSenders(b, goroutines, func(i int) {
		item := benchItem(i, parts)
		start := time.Now().UnixNano()
		sentAt[i] = start
		if err := p.Send(context.Background(), "bench", item); err != nil {
			b.Error(err)
		}
		waited.Add(time.Now().UnixNano() - start)
	}, func() {
		if err := p.Flush(context.Background()); err != nil {
			b.Error(err)
		}
	})
	b.StopTimer()
	if err := p.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(waited.Load())/float64(b.N), "send-ns/item")
	b.ReportMetric(float64(latency.Load())/float64(b.N)/1e6, "answer-ms/item")
}

// BenchmarkProducerSend is the cost of one Send that does not wait, from one goroutine:
// checking, encoding and buffering the item. The broker holds every push until the timer stops,
// so only Send is measured.
//
//	go test -run '^$' -bench 'BenchmarkProducerSend' -benchtime 200000x .
func BenchmarkProducerSend(b *testing.B) {
	c, release := holdingClient(b)
	p, err := c.NewProducer(ProducerConfig{Linger: time.Hour, MaxBatch: maxPushItems, MaxBuffered: b.N + 1,
		OnResult: func(string, PushItem, PushResult, error) {}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := p.Send(context.Background(), "bench", benchItem(i, 16)); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	release()
	if err := p.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
}

// holdingClient is a client of a broker that answers no push until release is called.
func holdingClient(b *testing.B) (c *Client, release func()) {
	srv, err := queentest.Start()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Close() })
	hold := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hold:
		case <-r.Context().Done():
		}
		srv.Handler().ServeHTTP(w, r)
	}))
	b.Cleanup(hs.Close)
	c, err = New(hs.URL, WithRetry(0, 0, 0))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	var once sync.Once
	release = func() { once.Do(func() { close(hold) }) }
	b.Cleanup(release)
	return c, release
}

// BenchmarkProducerMemory fills a Producer whose broker holds every push unanswered and reports
// the heap it keeps per buffered item: memory follows MaxBuffered, not the items sent, as Send
// blocks once MaxBuffered items wait.
//
//	go test -run '^$' -bench 'BenchmarkProducerMemory' -benchtime 1x .
func BenchmarkProducerMemory(b *testing.B) {
	for _, buffered := range []int{1000, 10000, 50000} {
		b.Run(fmt.Sprintf("maxBuffered=%d", buffered), func(b *testing.B) {
			c, release := holdingClient(b)
			defer release()
			for range b.N {
				before := heapInUse()
				p, err := c.NewProducer(ProducerConfig{MaxBuffered: buffered,
					OnResult: func(string, PushItem, PushResult, error) {}})
				if err != nil {
					b.Fatal(err)
				}
				for i := range buffered {
					if err := p.Send(context.Background(), "bench", benchItem(i, 16)); err != nil {
						b.Fatal(err)
					}
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
				if err := p.Send(ctx, "bench", benchItem(0, 16)); err == nil {
					b.Fatal("Send did not block with MaxBuffered items unanswered")
				}
				cancel()
				b.ReportMetric(float64(heapInUse()-before)/float64(buffered), "heap-B/buffered-item")
				b.ReportMetric(float64(heapInUse()-before)/(1<<20), "heap-MiB")
				ctx, cancel = context.WithCancel(context.Background())
				cancel()
				_ = p.Close(ctx) // gives up at once: every item is reported
			}
		})
	}
}

func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

// benchData is a small payload, encoded the same way by every variant.
type benchData struct{ i int }

func (d benchData) MarshalJSON() ([]byte, error) { return fmt.Appendf(nil, `{"n":%d}`, d.i), nil }

var _ json.Marshaler = benchData{}

func benchItem(i, parts int) PushItem {
	return PushItem{Data: benchData{i}, Partition: fmt.Sprintf("p%d", i%parts)}
}

// benchClient is a client of a fresh in-process broker. QUEEN_BENCH_PUSH_DELAY=2ms (say) holds
// every push that long, as a broker across a network would.
func benchClient(b *testing.B) *Client {
	b.Helper()
	srv, err := queentest.Start()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Close() })
	if v := os.Getenv("QUEEN_BENCH_PUSH_DELAY"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatalf("QUEEN_BENCH_PUSH_DELAY=%q: %v", v, err)
		}
		srv.Fail(queentest.Fault{Route: "push", Delay: d, Times: math.MaxInt32})
	}
	c, err := New(srv.URL())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	return c
}

// runSenders calls send for items 0..b.N-1 from n goroutines, then each of after, timed, and
// reports items/s.
func runSenders(b *testing.B, n int, send func(i int), after ...func()) {
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	cpu := testutil.ProcessCPU()
	defer reportCPU(b, cpu)
	for range n {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				send(i)
			}
		})
	}
	wg.Wait()
	for _, f := range after {
		f()
	}
	reportItems(b)
}

// reportCPU reports the process's CPU time per item since start (client and broker together).
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64((testutil.ProcessCPU()-start).Nanoseconds())/float64(b.N)/1e3, "cpu-µs/item")
}

func reportItems(b *testing.B) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "items/s")
}
