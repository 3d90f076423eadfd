package queen

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkConsumeClientCost sets the client's own cost per message beside a raw net/http
// loop's, with no network and no broker: both send their requests to an in-memory transport
// that answers every pop with one fresh message (of 8 partitions in turn) and every ack with
// its result. What each variant costs is then the client alone, without the noise of a shared
// machine, and without the slowdown a real network's waits add to every step (caches gone
// cold between round trips):
//
//	go test -run '^$' -bench BenchmarkConsumeClientCost -benchtime 10x .
//
// raw is C goroutines that each pop one message and ack it, as in BenchmarkConsumeShapes; sdk
// is one Consume with Concurrency(C) and a no-op handler. Each op is one round of both
// variants (in turn, the order swapped every round), 50,000 messages each; the figures are
// medians over the rounds: the process's CPU time per message (cpu-ns/msg) and allocations.
func BenchmarkConsumeClientCost(b *testing.B) {
	const n = 50000
	for _, conc := range []int{1, 8} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			variants := []struct {
				name string
				run  func(t http.RoundTripper) error
			}{
				// Without a Timeout, as in BenchmarkConsumeShapes; the SDK's own client has its
				// default one, which it applies without http.Client's timer and goroutine.
				{"raw", func(t http.RoundTripper) error {
					return rawPopAckLoops(&http.Client{Transport: t}, costPopURL, costAckURL, conc, n)
				}},
				{"sdk", func(t http.RoundTripper) error {
					hc := &http.Client{Transport: t, Timeout: defaultHTTPTimeout}
					c, err := New(costBrokerURL, WithHTTPClient(hc))
					if err != nil {
						return err
					}
					defer c.Close()
					return c.Queue("q").Batch(1).Concurrency(conc).Limit(n).
						Consume(context.Background(), func(context.Context, []*Message) error { return nil })
				}},
			}
			figures := map[string][]runFigures{}
			for round := range b.N {
				order := slices.Clone(variants)
				if round%2 == 1 {
					slices.Reverse(order)
				}
				for _, v := range order {
					t := &inMemoryBroker{}
					f, err := measureRun(n, func() error { return v.run(t) })
					if err != nil {
						b.Fatalf("%s: %v", v.name, err)
					}
					figures[v.name] = append(figures[v.name], f)
				}
			}
			for _, v := range variants {
				fs := figures[v.name]
				b.ReportMetric(median(fs, func(f runFigures) float64 { return f.cpuNs }), v.name+"-cpu-ns/msg")
				b.ReportMetric(median(fs, func(f runFigures) float64 { return f.allocs }), v.name+"-allocs/msg")
				b.ReportMetric(median(fs, func(f runFigures) float64 { return f.bytes }), v.name+"-B/msg")
			}
		})
	}
}

// The broker the in-memory transport stands for, and the raw loop's requests to it.
const (
	costBrokerURL = "http://broker.invalid:6632"
	costPopURL    = costBrokerURL + "/api/v1/pop/queue/q?batch=1"
	costAckURL    = costBrokerURL + "/api/v1/ack/batch"
)

// inMemoryBroker answers pops and acks in memory: each pop leases one new message, of 8
// partitions in turn, and each ack succeeds for every item it carries.
type inMemoryBroker struct{ popped atomic.Int64 }

func (t *inMemoryBroker) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if strings.Contains(r.URL.Path, "/pop/") {
		body = t.popAnswer(t.popped.Add(1))
	} else {
		raw, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		body = ackAnswerFor(bytes.Count(raw, []byte(`"transactionId"`)))
	}
	if r.Body != nil {
		_ = r.Body.Close()
	}
	return &http.Response{StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/json"}, "Date": {inMemoryDate}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)), Request: r}, nil
}

// inMemoryDate is every answer's Date.
var inMemoryDate = time.Now().UTC().Format(http.TimeFormat)

// popAnswer is the answer of the pop that leases message number i.
func (t *inMemoryBroker) popAnswer(i int64) []byte {
	part := strconv.FormatInt(i%8, 10)
	id := fmt.Sprintf("01a2315b-2269-74c8-897e-%012d", i)
	pid := "99fee5aa-5753-422b-be1c-ed7420de2cb" + part
	lease := fmt.Sprintf("f5ba7391-6469-4851-b87a-%012d", i)
	var b strings.Builder
	b.WriteString(`{"success":true,"queue":"q","partition":"p` + part + `","partitionId":"` + pid + `","leaseId":"` + lease +
		`","consumerGroup":"__QUEUE_MODE__","partitionsClaimed":1,"messages":[{"id":"` + id + `","transactionId":"` + id +
		`","traceId":null,"data":{"customer":{"id":"cust-004000","tier":"gold"},"order":91370,"qty":1,"sku":"SKU-00000"},` +
		`"producerSub":null,"createdAt":"2026-12-01T11:26:25.898604Z","partitionId":"` + pid + `","partition":"p` + part +
		`","leaseId":"` + lease + `","consumerGroup":"__QUEUE_MODE__","offset":` + strconv.FormatInt(i, 10) + `,"deliveryAttempt":1}]}`)
	return []byte(b.String())
}

// ackAnswerFor is the answer of an ack of n items, all of them applied.
func ackAnswerFor(n int) []byte {
	b := []byte{'['}
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"index":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"transactionId":"t","success":true,"error":null,"leaseReleased":true,"dlq":false,"queueName":"q","partitionName":"p"}`...)
	}
	return append(b, ']')
}
