package queen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkPushThroughput sets Push and the Producer side by side with a raw net/http loop that
// sends the same items to the same broker, from 8 goroutines: small JSON payloads spread over 16
// partitions. The broker runs in a process of its own, so the allocations and the CPU time
// reported are the client's alone. Each op of a shape is one round that sends b.N items with
// every variant of the shape in turn, raw first in one round and last in the next, so that each
// round is a pair measured under the same load:
//
//	go test -run '^$' -bench BenchmarkPushThroughput -benchtime 50000x -count 3 .
//
// items=N compares Push of N items per call (push) with raw calls of N items (raw), encoded
// with encoding/json, whose results' identifiers are decoded; at one item per call also with
// raw calls whose http.Client has the 30s Timeout the SDK's has (raw-timeout). producer
// compares Producer.Send of one item at a time (default config, one Flush at the end) with raw
// calls of 100 and of 1,000 items. Per variant it reports items/s, the client's CPU time
// (cpu-µs/item), allocations (allocs/item) and bytes allocated (B/item); push/raw (send/raw-N)
// is the ratio of items/s.
func BenchmarkPushThroughput(b *testing.B) {
	const goroutines = 8
	base := startExternalBroker(b)
	for _, n := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			variants := []pushVariant{rawVariant("raw", n, 0), pushCallVariant("push", n)}
			if n == 1 { // where a request's fixed cost is all there is
				variants = slices.Insert(variants, 1, rawVariant("raw-timeout", n, 30*time.Second))
			}
			runShape(b, base, goroutines, variants)
		})
	}
	b.Run("producer", func(b *testing.B) {
		runShape(b, base, goroutines, []pushVariant{rawVariant("raw-100", 100, 0), rawVariant("raw-1000", 1000, 0),
			producerVariant("send")})
	})
}

// pushVariant is one way of sending items: open readies it for queue and returns the call that
// sends count items from first, per items at a time, and what to do once every call returned.
type pushVariant struct {
	name string
	per  int
	open func(b *testing.B, base, queue string) (send func(first, count int) error, finish func() error)
}

// rawVariant is the raw loop; with a timeout, its http.Client bounds each request as the
// SDK's does.
func rawVariant(name string, per int, timeout time.Duration) pushVariant {
	return pushVariant{name: name, per: per, open: func(b *testing.B, base, queue string) (func(int, int) error, func() error) {
		raw := newRawPusher(base)
		raw.hc.Timeout = timeout
		b.Cleanup(raw.close)
		return func(first, count int) error { return raw.push(queue, first, count) }, nil
	}}
}

func pushCallVariant(name string, per int) pushVariant {
	return pushVariant{name: name, per: per, open: func(b *testing.B, base, queue string) (func(int, int) error, func() error) {
		q := benchSDKClient(b, base).Queue(queue)
		return func(first, count int) error {
			items := make([]PushItem, count)
			for i := range items {
				items[i] = benchPushItem(first + i)
			}
			_, err := q.Push(context.Background(), items...)
			return err
		}, nil
	}}
}

func producerVariant(name string) pushVariant {
	return pushVariant{name: name, per: 1, open: func(b *testing.B, base, queue string) (func(int, int) error, func() error) {
		p, err := benchSDKClient(b, base).NewProducer(ProducerConfig{OnResult: func(_ string, _ PushItem, _ PushResult, err error) {
			if err != nil {
				b.Error(err)
			}
		}})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = p.Close(context.Background()) })
		return func(first, _ int) error { return p.Send(context.Background(), queue, benchPushItem(first)) },
			func() error { return p.Flush(context.Background()) }
	}}
}

// shapeRounds counts the rounds of each shape, to alternate which variant goes first.
var shapeRounds sync.Map // benchmark name → *atomic.Int64

// runShape runs every variant once per op, in turn, and reports each one's figures.
func runShape(b *testing.B, base string, goroutines int, variants []pushVariant) {
	counter, _ := shapeRounds.LoadOrStore(b.Name(), new(atomic.Int64))
	round := counter.(*atomic.Int64).Add(1)
	order := slices.Clone(variants)
	if round%2 == 0 {
		slices.Reverse(order)
	}
	rate := map[string]float64{}
	for _, v := range order {
		queue := fmt.Sprintf("bench-%s-%d-%d", v.name, round, time.Now().UnixNano())
		send, finish := v.open(b, base, queue)
		m := sendAll(b, goroutines, v.per, send, finish)
		deleteBenchQueue(b, base, queue) // keeps the broker's memory flat across rounds
		rate[v.name] = m.perSec
		b.ReportMetric(m.perSec, v.name+"-items/s")
		b.ReportMetric(m.cpuNs/1e3, v.name+"-cpu-µs/item")
		b.ReportMetric(m.allocs, v.name+"-allocs/item")
		b.ReportMetric(m.bytes, v.name+"-B/item")
	}
	sdk := variants[len(variants)-1].name
	for _, v := range variants[:len(variants)-1] {
		b.ReportMetric(rate[sdk]/rate[v.name], sdk+"/"+v.name)
	}
}

// sendAll calls send from n goroutines with consecutive chunks of up to per items until b.N
// items are sent, then finish, and measures it.
func sendAll(b *testing.B, n, per int, send func(first, count int) error, finish func() error) runFigures {
	var next atomic.Int64
	f, _ := measureRun(b.N, func() error {
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				for {
					first := int(next.Add(int64(per))) - per
					if first >= b.N {
						return
					}
					if err := send(first, min(per, b.N-first)); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		if finish != nil {
			if err := finish(); err != nil {
				b.Error(err)
			}
		}
		return nil
	})
	return f
}

// benchPushItem is item i of every variant: a small JSON payload in one of 16 partitions.
func benchPushItem(i int) PushItem {
	return PushItem{Data: benchPayloads[i%len(benchPayloads)], Partition: benchPartitionNames[i%len(benchPartitionNames)]}
}

// benchPayloads (json.RawMessage values) and benchPartitionNames are made once, so that no
// variant pays for making them.
var (
	benchPayloads = func() (p [1024]any) {
		for i := range p {
			p[i] = json.RawMessage(fmt.Appendf(nil, `{"kind":"order","n":%d}`, i))
		}
		return p
	}()
	benchPartitionNames = func() (names [16]string) {
		for i := range names {
			names[i] = fmt.Sprintf("p%02d", i)
		}
		return names
	}()
)

// rawPusher is the baseline: what a careful hand-written client does with net/http and
// encoding/json, and nothing more (the broker makes the transactionIds).
type rawPusher struct {
	base string
	hc   *http.Client
}

func newRawPusher(base string) *rawPusher {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64 // a connection kept for each goroutine, as the SDK keeps them
	return &rawPusher{base: base, hc: &http.Client{Transport: tr}}
}

func (r *rawPusher) close() { r.hc.CloseIdleConnections() }

type rawPushItem struct {
	Queue     string          `json:"queue"`
	Partition string          `json:"partition"`
	Payload   json.RawMessage `json:"payload"`
}

// rawPushResult holds what a PushResult gives a caller.
type rawPushResult struct {
	TransactionID string `json:"transaction_id"`
	MessageID     string `json:"message_id"`
	PartitionID   string `json:"partition_id"`
	Status        string `json:"status"`
	Offset        int64  `json:"offset"`
}

func (r *rawPusher) push(queue string, first, count int) error {
	items := make([]rawPushItem, count)
	for i := range items {
		it := benchPushItem(first + i)
		items[i] = rawPushItem{Queue: queue, Partition: it.Partition, Payload: it.Data.(json.RawMessage)}
	}
	body, err := json.Marshal(struct {
		Items []rawPushItem `json:"items"`
	}{items})
	if err != nil {
		return err
	}
	resp, err := r.hc.Post(r.base+"/api/v1/push", "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("push answered %d", resp.StatusCode)
	}
	var results []rawPushResult
	if err := json.NewDecoder(resp.Body).Decode(&results); err != nil {
		return err
	}
	if len(results) != count {
		return fmt.Errorf("push answered %d results for %d items", len(results), count)
	}
	return nil
}

// benchSDKClient is a client of base with the default options, closed when b ends.
func benchSDKClient(b *testing.B, base string) *Client {
	c, err := New(base)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	return c
}

// deleteBenchQueue deletes queue and everything in it.
func deleteBenchQueue(b *testing.B, base, queue string) {
	req, err := http.NewRequest(http.MethodDelete, base+"/api/v1/resources/queues/"+queue, nil)
	if err != nil {
		b.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNotFound {
		b.Errorf("delete %s answered %d", queue, resp.StatusCode)
	}
}
