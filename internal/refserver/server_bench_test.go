package refserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/testutil"
)

// Benchmarks run over loopback HTTP with raw net/http requests, so they measure the broker as
// a client sees it: JSON decoding, routing, the engine, and JSON encoding.
//
//	go test -run '^$' -bench . ./internal/refserver/

type benchClient struct {
	b    *testing.B
	base string
	hc   *http.Client
}

func newBenchClient(b *testing.B, opts ...option) (*testServer, *benchClient) {
	srv := newTestServer(b, opts...)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	b.Cleanup(hc.CloseIdleConnections)
	return srv, &benchClient{b: b, base: srv.URL(), hc: hc}
}

func (c *benchClient) send(method, path string, body []byte, wantStatus int) []byte {
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(body))
	if err != nil {
		c.b.Fatal(err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.b.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		c.b.Fatal(err)
	}
	if resp.StatusCode != wantStatus {
		c.b.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, out)
	}
	return out
}

// pushBody builds a push of n items to queue with payloads of payloadBytes bytes.
func pushBody(queue string, n, payloadBytes int) []byte {
	payload := `{"n":1}`
	if payloadBytes > 0 {
		payload = `"` + repeat('x', payloadBytes-2) + `"`
	}
	var b bytes.Buffer
	b.WriteString(`{"items":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"queue":"` + queue + `","payload":` + payload + `}`)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

func (c *benchClient) fill(queue string, n int) {
	const chunk = 1000
	full := pushBody(queue, chunk, 0)
	for n > 0 {
		body := full
		if n < chunk {
			body = pushBody(queue, n, 0)
		}
		c.send("POST", "/api/v1/push", body, http.StatusCreated)
		n -= chunk
	}
}

// popped is the part of a pop answer an ack needs.
type popped struct {
	LeaseID  string `json:"leaseId"`
	Messages []struct {
		TransactionID string `json:"transactionId"`
		PartitionID   string `json:"partitionId"`
	} `json:"messages"`
}

func ackBody(p *popped, buf []byte) []byte {
	buf = append(buf[:0], `{"acknowledgments":[`...)
	for i, m := range p.Messages {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"transactionId":"`...)
		buf = append(buf, m.TransactionID...)
		buf = append(buf, `","partitionId":"`...)
		buf = append(buf, m.PartitionID...)
		buf = append(buf, `","leaseId":"`...)
		buf = append(buf, p.LeaseID...)
		buf = append(buf, `","status":"completed"}`...)
	}
	return append(buf, "]}"...)
}

// BenchmarkPopAck pops a batch and acks it with one batch ack; one op is one message. With
// several clients each runs that loop on its own queue, so the engine serves them at once.
// Goal at batch 100: at least 100,000 msgs/s.
func BenchmarkPopAck(b *testing.B) {
	for _, tc := range []struct{ batch, clients int }{{100, 1}, {1, 1}, {100, 4}} {
		name := "batch=" + strconv.Itoa(tc.batch)
		if tc.clients > 1 {
			name += "/clients=" + strconv.Itoa(tc.clients)
		}
		b.Run(name, func(b *testing.B) {
			_, c := newBenchClient(b)
			share := (b.N + tc.clients - 1) / tc.clients
			for i := range tc.clients {
				c.fill("bench"+strconv.Itoa(i), share)
			}
			b.ResetTimer()
			cpu := testutil.ProcessCPU()
			var wg sync.WaitGroup
			for i := range tc.clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					path := "/api/v1/pop/queue/bench" + strconv.Itoa(i) + "?batch=" + strconv.Itoa(tc.batch)
					var ack []byte
					for done := 0; done < share; {
						var p popped
						if err := json.Unmarshal(c.send("GET", path, nil, http.StatusOK), &p); err != nil {
							b.Error(err)
							return
						}
						ack = ackBody(&p, ack)
						c.send("POST", "/api/v1/ack/batch", ack, http.StatusOK)
						done += len(p.Messages)
					}
				}()
			}
			wg.Wait()
			reportPerMessage(b, share*tc.clients, cpu)
		})
	}
}

// reportPerMessage reports msgs/s and the process's CPU time per message since cpu.
func reportPerMessage(b *testing.B, msgs int, cpu time.Duration) {
	b.ReportMetric(float64(msgs)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64((testutil.ProcessCPU()-cpu).Nanoseconds())/float64(msgs)/1e3, "cpu-µs/msg")
}

// BenchmarkPush pushes small items, 100 and 1,000 per request, from one client or from four at
// once (each to a queue of its own); one op is one message.
// Goal at 100 per request: at least 100,000 msgs/s.
func BenchmarkPush(b *testing.B) {
	for _, tc := range []struct{ perRequest, clients int }{{100, 1}, {1000, 1}, {1000, 4}} {
		name := "items=" + strconv.Itoa(tc.perRequest)
		if tc.clients > 1 {
			name += "/clients=" + strconv.Itoa(tc.clients)
		}
		b.Run(name, func(b *testing.B) {
			_, c := newBenchClient(b)
			requests := (b.N + tc.perRequest*tc.clients - 1) / (tc.perRequest * tc.clients)
			b.ResetTimer()
			cpu := testutil.ProcessCPU()
			var wg sync.WaitGroup
			for i := range tc.clients {
				body := pushBody("push-bench"+strconv.Itoa(i), tc.perRequest, 0)
				wg.Go(func() {
					for range requests {
						c.send("POST", "/api/v1/push", body, http.StatusCreated)
					}
				})
			}
			wg.Wait()
			reportPerMessage(b, requests*tc.perRequest*tc.clients, cpu)
		})
	}
}

// BenchmarkRetainedMemory reports the heap the broker keeps per stored 1 KB message, after GC.
// Goal: at most 2 KB per message.
func BenchmarkRetainedMemory(b *testing.B) {
	const messages, perRequest, payload = 20000, 100, 1024
	for b.Loop() {
		srv, c := newBenchClient(b)
		body := pushBody("mem", perRequest, payload)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for range messages / perRequest {
			c.send("POST", "/api/v1/push", body, http.StatusCreated)
		}
		c.hc.CloseIdleConnections()
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/messages, "bytes/msg")
		runtime.KeepAlive(srv)
	}
}

// BenchmarkLongPollWake measures from the start of a push to the answer of the pop it wakes.
// Goal: p50 under 1 ms.
func BenchmarkLongPollWake(b *testing.B) {
	srv, c := newBenchClient(b)
	push := pushBody("wake-bench", 1, 0)
	latencies := make([]time.Duration, 0, b.N)
	answered := make(chan time.Time, 1)
	b.ResetTimer()
	for range b.N {
		go func() {
			c.send("GET", "/api/v1/pop/queue/wake-bench?wait=true&timeout=30000&autoAck=true", nil, http.StatusOK)
			answered <- time.Now()
		}()
		for srv.WaitingPops() == 0 {
			runtime.Gosched() // outside the measured span: the push has not started yet
		}
		start := time.Now()
		c.send("POST", "/api/v1/push", push, http.StatusCreated)
		latencies = append(latencies, (<-answered).Sub(start))
	}
	b.StopTimer()
	slices.Sort(latencies)
	pct := func(p float64) float64 {
		return float64(latencies[int(p*float64(len(latencies)-1))].Microseconds())
	}
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}
