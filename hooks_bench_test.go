package queen

import (
	"context"
	"testing"

	"github.com/queenmq/queen-go/queentest"
)

// BenchmarkConsumeHooks measures what hooks and middleware cost a consume loop: the raw HTTP
// baseline, Consume with none set, with a no-op hook of each kind, and with those hooks plus
// a no-op middleware, side by side in one run (goals: none ≥ 1.0 × raw; no-op hooks within
// 5 % of none).
//
//	go test -run '^$' -bench BenchmarkConsumeHooks -benchtime 20000x -count 3 .
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
		rawConsume(b, srv.URL(), "bench", 1, b.N)
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
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
			err := c.Queue("bench").Batch(benchBatch).Limit(b.N).Each().
				Consume(context.Background(), func(context.Context, *Message) error { return nil })
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}
