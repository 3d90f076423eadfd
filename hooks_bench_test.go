package queen

import (
	"context"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// BenchmarkConsumeHooks measures what hooks and middleware cost a consume loop: the raw HTTP
// baseline, Consume with none set, with a no-op hook of each kind, and with those hooks plus
// a no-op middleware, side by side in one run (goals: none ≥ 1.0 × raw; no-op hooks within
// 5 % of none). On a shared machine compare cpu-ns/msg, and run the variants interleaved:
//
//	for i in 1 2 3 4 5 6 7 8; do go test -run '^$' -bench BenchmarkConsumeHooks -benchtime 20000x .; done
func BenchmarkConsumeHooks(b *testing.B) {
	noop := Hooks{
		Request:   func(RequestEvent) {},
		Handled:   func(HandledEvent) {},
		Acked:     func(AckedEvent) {},
		LeaseLost: func(LeaseLostEvent) {},
	}
	pass := func(ctx context.Context, _ []*Message, next func(context.Context) error) error { return next(ctx) }
	b.Run("raw", func(b *testing.B) {
		srv, c := brokerAndClient(b)
		fillQueue(b, c, "bench", b.N)
		b.ResetTimer()
		cpu := testutil.ProcessCPU()
		rawConsume(b, srv.URL(), "bench", 1, b.N)
		reportConsume(b, testutil.ProcessCPU()-cpu)
	})
	for _, v := range []struct {
		name string
		opts []Option
	}{
		{"none", nil},
		{"hooks", []Option{WithHooks(noop)}},
		{"hooks+middleware", []Option{WithHooks(noop), WithMiddleware(pass)}},
	} {
		b.Run(v.name, func(b *testing.B) {
			srv := queentest.NewServer(b)
			c := newTestClient(b, srv.URL(), v.opts...)
			fillQueue(b, c, "bench", b.N)
			b.ResetTimer()
			cpu := testutil.ProcessCPU()
			err := c.Queue("bench").Batch(benchBatch).Limit(b.N).Each().
				Consume(context.Background(), func(context.Context, *Message) error { return nil })
			if err != nil {
				b.Fatal(err)
			}
			reportConsume(b, testutil.ProcessCPU()-cpu)
		})
	}
}

// reportConsume reports messages per second and, where it is measured, the process's CPU time
// per message (client and in-process broker together), which a busy machine disturbs less.
func reportConsume(b *testing.B, cpu time.Duration) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/msg")
	}
}

// BenchmarkHookDispatch is what the SDK adds per message for hooks and middleware, without
// the network: Handled and Acked once per message and Request once per request of a
// 100-message batch (a pop and an ack), and one no-op middleware around a handler call.
//
//	go test -run '^$' -bench BenchmarkHookDispatch .
func BenchmarkHookDispatch(b *testing.B) {
	noop := Hooks{
		Request: func(RequestEvent) {},
		Handled: func(HandledEvent) {},
		Acked:   func(AckedEvent) {},
	}
	m := &Message{ID: "m", Queue: "q"}
	msgs := []*Message{m}
	handler := func(context.Context, *Message) error { return nil }
	pass := func(ctx context.Context, _ []*Message, next func(context.Context) error) error { return next(ctx) }
	for _, v := range []struct {
		name  string
		hooks []Hooks
		mws   []Middleware
	}{
		{"none", nil, nil},
		{"hooks", []Hooks{noop}, nil},
		{"middleware", nil, []Middleware{pass}},
	} {
		b.Run(v.name, func(b *testing.B) {
			var set hookSet
			for _, h := range v.hooks {
				set.add(h)
			}
			c := &Client{hooks: set}
			l := &consumer{c: c, h: eachHandling(handler), middleware: v.mws}
			ctx := context.Background()
			batch := &leasedBatch{msgs: msgs}
			b.ReportAllocs()
			for i := range b.N {
				_, _ = l.call(ctx, batch, 0, msgs)
				l.handled(m, StatusCompleted, nil, time.Microsecond)
				if len(c.hooks.acked) > 0 {
					c.hooks.onAcked(AckedEvent{Message: m, Status: StatusCompleted, Success: true})
				}
				if i%50 == 0 && len(c.hooks.request) > 0 {
					c.hooks.onRequest(RequestEvent{Method: "GET", Route: route.PopQueue.Pattern, Attempt: 1})
				}
			}
		})
	}
}
