package queen_test

import (
	"context"
	"testing"
	"time"

	"github.com/queenmq/queen-go"
)

// The Producer section of API.md, as a caller compiles against it.
func TestAcceptanceProducerSignatures(t *testing.T) {
	t.Parallel()
	c, err := queen.New("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cfg := queen.ProducerConfig{
		Linger:      time.Millisecond,
		MaxBatch:    1,
		MaxBuffered: 1,
		OnResult:    func(queue string, item queen.PushItem, res queen.PushResult, err error) {},
	}
	var _ func(queen.ProducerConfig) (*queen.Producer, error) = c.NewProducer
	p, err := c.NewProducer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var (
		_ func(context.Context, string, queen.PushItem) error = p.Send
		_ func(context.Context) error                         = p.Flush
		_ func(context.Context) error                         = p.Close
	)
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	var (
		_ queen.Handler      = func(ctx context.Context, m *queen.Message) error { return nil }
		_ queen.BatchHandler = func(ctx context.Context, msgs []*queen.Message) error { return nil }
		_ queen.Option       = queen.WithToken("t")
		_ queen.AckOption    = queen.WithError("e")
		_ error              = &queen.APIError{}
		_ queen.EachBuilder  = c.Queue("q").Each()
	)
}
