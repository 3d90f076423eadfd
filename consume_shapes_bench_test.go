package queen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
)

// BenchmarkConsumeShapes sets Consume side by side with a raw net/http loop doing the same
// work with the same parallelism, at every shape: Concurrency 1 and 8 over 8 partitions, batch
// 1 and 100, on the reference broker as 2.0 and as 0.15. The broker runs in a process of its
// own, so the CPU time and the allocations reported are the client's alone. Each op is one
// round that consumes a fresh backlog with each variant in turn (raw first in one round, the
// SDK first in the next), so that each round is a pair measured under the same load; the
// figures reported are the medians over the rounds:
//
//	go test -run '^$' -bench BenchmarkConsumeShapes -benchtime 5x -timeout 30m .
//
// raw is C goroutines that each pop a batch of the queue and complete it with one batch ack,
// on an http.Client with the SDK's connection pool; sdk is one Consume with Batch(batch),
// Concurrency(C), Limit and a no-op batch handler. Per variant it reports msgs/s, the client's
// CPU time (cpu-ns/msg), allocations (allocs/msg) and bytes allocated (B/msg); sdk/raw is the
// median of the rounds' ratios of msgs/s.
func BenchmarkConsumeShapes(b *testing.B) {
	for _, mode := range testmode.Modes {
		b.Run("broker="+mode.Name, func(b *testing.B) {
			base := startExternalBroker(b, "-compat", mode.Name)
			fill := benchSDKClient(b, base)
			for _, conc := range []int{1, 8} {
				for _, batch := range []int{1, 100} {
					b.Run(fmt.Sprintf("concurrency=%d/batch=%d", conc, batch), func(b *testing.B) {
						runConsumeShape(b, base, fill, conc, batch)
					})
				}
			}
		})
	}
}

// shapePartitions is how many partitions each backlog is spread over.
const shapePartitions = 8

// shapeMessages is the backlog one variant consumes in a round of a shape.
func shapeMessages(conc, batch int) int {
	if batch == 1 {
		return 2000 * conc
	}
	return 30000
}

// runFigures is what one variant measured in one run, per message or item.
type runFigures struct{ perSec, cpuNs, allocs, bytes float64 }

// runConsumeShape runs b.N rounds of raw and sdk at one shape and reports their medians.
func runConsumeShape(b *testing.B, base string, fill *Client, conc, batch int) {
	n := shapeMessages(conc, batch)
	variants := []struct {
		name string
		run  func(queue string) error
	}{
		{"raw", func(queue string) error { return rawConsumeShape(base, queue, conc, batch, n) }},
		{"sdk", func(queue string) error {
			c := benchSDKClient(b, base)
			defer c.Close()
			return c.Queue(queue).Batch(batch).Concurrency(conc).Limit(n).
				Consume(context.Background(), func(context.Context, []*Message) error { return nil })
		}},
	}
	figures := map[string][]runFigures{}
	var ratios []float64
	for round := range b.N {
		order := slices.Clone(variants)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		rate := map[string]float64{}
		for _, v := range order {
			queue := fmt.Sprintf("shape-%s-%d", v.name, time.Now().UnixNano())
			fillShape(b, fill, queue, n)
			runtime.GC()
			f, err := measureRun(n, func() error { return v.run(queue) })
			if err != nil {
				b.Fatalf("%s: %v", v.name, err)
			}
			deleteBenchQueue(b, base, queue)
			figures[v.name] = append(figures[v.name], f)
			rate[v.name] = f.perSec
		}
		ratios = append(ratios, rate["sdk"]/rate["raw"])
	}
	for _, v := range variants {
		fs := figures[v.name]
		b.ReportMetric(median(fs, func(f runFigures) float64 { return f.perSec }), v.name+"-msgs/s")
		b.ReportMetric(median(fs, func(f runFigures) float64 { return f.cpuNs }), v.name+"-cpu-ns/msg")
		b.ReportMetric(median(fs, func(f runFigures) float64 { return f.allocs }), v.name+"-allocs/msg")
		b.ReportMetric(median(fs, func(f runFigures) float64 { return f.bytes }), v.name+"-B/msg")
	}
	b.ReportMetric(median(ratios, func(r float64) float64 { return r }), "sdk/raw")
}

// median is the median of f over xs.
func median[T any](xs []T, f func(T) float64) float64 {
	vs := make([]float64, len(xs))
	for i, x := range xs {
		vs[i] = f(x)
	}
	slices.Sort(vs)
	if len(vs)%2 == 1 {
		return vs[len(vs)/2]
	}
	return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
}

// measureRun runs run, which handles n messages or items, and measures it: the rate, and the
// process's CPU time, allocations and bytes allocated per message or item.
func measureRun(n int, run func() error) (runFigures, error) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpu, start := testutil.ProcessCPU(), time.Now()
	err := run()
	elapsed, used := time.Since(start), testutil.ProcessCPU()-cpu
	runtime.ReadMemStats(&after)
	count := float64(n)
	return runFigures{
		perSec: count / elapsed.Seconds(),
		cpuNs:  float64(used.Nanoseconds()) / count,
		allocs: float64(after.Mallocs-before.Mallocs) / count,
		bytes:  float64(after.TotalAlloc-before.TotalAlloc) / count,
	}, err
}

// fillShape pushes n small messages to queue, spread over shapePartitions partitions.
func fillShape(b *testing.B, c *Client, queue string, n int) {
	const chunk = 1000
	items := make([]PushItem, 0, chunk)
	for i := range n {
		items = append(items, PushItem{Data: benchPayloads[i%len(benchPayloads)],
			Partition: benchPartitionNames[i%shapePartitions]})
		if len(items) == chunk || i == n-1 {
			if _, err := c.Queue(queue).Push(context.Background(), items...); err != nil {
				b.Fatal(err)
			}
			items = items[:0]
		}
	}
}

// rawConsumeShape is the baseline: conc goroutines that each pop up to batch messages of the
// queue over plain HTTP and complete them with one batch ack, until n messages are acked. Its
// http.Client keeps as many idle connections as the SDK's.
func rawConsumeShape(base, queue string, conc, batch, n int) error {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 1024, 512
	hc := &http.Client{Transport: tr}
	defer hc.CloseIdleConnections()
	return rawPopAckLoops(hc, base+route.PopQueue.Path(queue)+"?batch="+strconv.Itoa(batch), base+route.AckBatch.Path(), conc, n)
}

// rawPopAckLoops is conc goroutines that each pop from popURL and ack at ackURL what they
// brought, until n messages are acked.
func rawPopAckLoops(hc *http.Client, popURL, ackURL string, conc, n int) error {
	var acked atomic.Int64
	errs := make(chan error, conc)
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for acked.Load() < int64(n) {
				got, err := rawPopAck(hc, popURL, ackURL)
				if err != nil {
					errs <- err
					return
				}
				acked.Add(int64(got))
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// rawPopAck sends one pop and acks what it brought; it returns how many messages that was.
func rawPopAck(hc *http.Client, popURL, ackURL string) (int, error) {
	resp, err := hc.Get(popURL)
	if err != nil {
		return 0, err
	}
	// What any consumer needs: the ack's identifiers and the payload.
	var pop struct {
		Messages []struct {
			TransactionID string          `json:"transactionId"`
			PartitionID   string          `json:"partitionId"`
			LeaseID       string          `json:"leaseId"`
			Data          json.RawMessage `json:"data"`
		} `json:"messages"`
	}
	if resp.StatusCode == http.StatusOK {
		err = json.NewDecoder(resp.Body).Decode(&pop)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || len(pop.Messages) == 0 {
		return 0, err
	}
	type ack struct {
		TransactionID string `json:"transactionId"`
		PartitionID   string `json:"partitionId"`
		LeaseID       string `json:"leaseId"`
		Status        string `json:"status"`
	}
	acks := make([]ack, len(pop.Messages))
	for i, m := range pop.Messages {
		acks[i] = ack{m.TransactionID, m.PartitionID, m.LeaseID, "completed"}
	}
	body, err := json.Marshal(struct {
		Acknowledgments []ack `json:"acknowledgments"`
	}{acks})
	if err != nil {
		return 0, err
	}
	resp, err = hc.Post(ackURL, "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("ack answered %d", resp.StatusCode)
	}
	return len(pop.Messages), nil
}
