package queen_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/queenmq/queen-go"
)

// The client, builder, message and transaction API, as a caller compiles against it: a
// change of a name or a signature fails to build.
func TestAPISignatures(t *testing.T) {
	t.Parallel()
	var (
		_ func(string, ...queen.Option) (*queen.Client, error) = queen.New
		_ func(...string) queen.Option                         = queen.WithServers
		_ func(string) queen.Option                            = queen.WithToken
		_ func(*http.Client) queen.Option                      = queen.WithHTTPClient
		_ func(*slog.Logger) queen.Option                      = queen.WithLogger
		_ func(int, time.Duration, time.Duration) queen.Option = queen.WithRetry
		_ func(int64) queen.Option                             = queen.WithMaxResponseBytes
		_ func(string) queen.AckOption                         = queen.WithError
		_ func(error) error                                    = queen.Retry
		_ func(error) error                                    = queen.DeadLetter
	)
	c, err := queen.New("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var (
		_ func() error                                                                                     = c.Close
		_ func(string) queen.QueueBuilder                                                                  = c.Queue
		_ func(context.Context, *queen.Message, queen.Status, ...queen.AckOption) (queen.AckResult, error) = c.Ack
		_ func(context.Context, []queen.AckItem) ([]queen.AckResult, error)                                = c.AckBatch
		_ func(context.Context, string, time.Duration) (time.Time, error)                                  = c.Renew
		_ func() *queen.Transaction                                                                        = c.Transaction
	)
	b := c.Queue("q")
	var (
		_ func(string) queen.QueueBuilder                                      = b.Partition
		_ func(string) queen.QueueBuilder                                      = b.Group
		_ func(queen.SubscriptionMode) queen.QueueBuilder                      = b.SubscriptionMode
		_ func(time.Time) queen.QueueBuilder                                   = b.SubscriptionFrom
		_ func(int) queen.QueueBuilder                                         = b.Batch
		_ func(bool) queen.QueueBuilder                                        = b.Wait
		_ func(time.Duration) queen.QueueBuilder                               = b.Timeout
		_ func(int) queen.QueueBuilder                                         = b.Partitions
		_ func(time.Duration) queen.QueueBuilder                               = b.LeaseTime
		_ func(bool) queen.QueueBuilder                                        = b.Autopilot
		_ func(bool) queen.QueueBuilder                                        = b.Conflation
		_ func(bool) queen.QueueBuilder                                        = b.AutoAck
		_ func(bool, time.Duration) queen.QueueBuilder                         = b.RenewLease
		_ func(int) queen.QueueBuilder                                         = b.Concurrency
		_ func(int) queen.QueueBuilder                                         = b.Limit
		_ func(time.Duration) queen.QueueBuilder                               = b.IdleTimeout
		_ func(time.Duration) queen.QueueBuilder                               = b.ShutdownTimeout
		_ func(func(*queen.Message, error)) queen.QueueBuilder                 = b.OnError
		_ func(string) queen.QueueBuilder                                      = b.Namespace
		_ func(string) queen.QueueBuilder                                      = b.Task
		_ func() queen.EachBuilder                                             = b.Each
		_ func(context.Context) ([]*queen.Message, error)                      = b.Pop
		_ func(context.Context, ...queen.PushItem) ([]queen.PushResult, error) = b.Push
		_ func(context.Context, queen.BatchHandler) error                      = b.Consume
		_ func(context.Context, queen.Handler) error                           = b.Each().Consume
	)
	var m queen.Message
	var (
		_ func(any) error                                         = m.Decode
		_ func(context.Context) error                             = m.Ack
		_ func(context.Context, error) error                      = m.Nack
		_ func(context.Context) error                             = m.Retry
		_ func(context.Context, error) error                      = m.DeadLetter
		_ func(context.Context, time.Duration) (time.Time, error) = m.Renew
	)
	m = queen.Message{ID: "i", TransactionID: "t", TraceID: "r", Queue: "q", Partition: "p", PartitionID: "pid",
		ConsumerGroup: "g", LeaseID: "l", Offset: -1, DeliveryAttempt: 0, CreatedAt: time.Time{}, Data: json.RawMessage(`{}`)}
	tx := c.Transaction()
	var (
		_ func(*queen.Message, queen.Status, ...queen.AckOption) *queen.Transaction = tx.Ack
		_ func(string, ...queen.PushItem) *queen.Transaction                        = tx.Push
		_ func(string, string, ...queen.PushItem) *queen.Transaction                = tx.PushTo
	)
	var (
		_ queen.Handler      = func(ctx context.Context, m *queen.Message) error { return nil }
		_ queen.BatchHandler = func(ctx context.Context, msgs []*queen.Message) error { return nil }
		_ queen.Option       = queen.WithToken("t")
		_ queen.AckOption    = queen.WithError("e")
		_ error              = &queen.APIError{}
		_ queen.EachBuilder  = c.Queue("q").Each()
	)
	_ = queen.AckItem{Message: &m, Status: queen.StatusFailed, Error: "e"}
	_ = queen.AckResult{TransactionID: "t", Success: true, Error: "", DLQ: false, LeaseReleased: false}
	_ = queen.PushItem{Data: 1, TransactionID: "t", TraceID: "", Partition: "p"}
	_ = queen.PushResult{TransactionID: "t", MessageID: "m", PartitionID: "p", Status: "queued", Offset: 0}
	_ = queen.APIError{StatusCode: 400, Message: "m", Method: "GET", Path: "/"}
	_ = []error{queen.ErrInvalidOption, queen.ErrLeaseLost, queen.ErrLeaseExpired, queen.ErrAlreadySettled,
		queen.ErrTransactionFailed, queen.ErrClosed}
	_ = []error{queen.ErrOutcomeUnknown}
	assert.Equal(t, []queen.Status{"completed", "failed", "retry", "dlq"},
		[]queen.Status{queen.StatusCompleted, queen.StatusFailed, queen.StatusRetry, queen.StatusDLQ})
	assert.Equal(t, []queen.SubscriptionMode{"new", "all"}, []queen.SubscriptionMode{queen.SubscribeNew, queen.SubscribeAll})
}

// Middleware and hooks, as a caller compiles against them.
func TestObservabilitySignatures(t *testing.T) {
	t.Parallel()
	var (
		_ queen.Middleware = func(ctx context.Context, msgs []*queen.Message, next func(context.Context) error) error {
			return next(ctx)
		}
		_ func(...queen.Middleware) queen.Option = queen.WithMiddleware
		_ func(queen.Hooks) queen.Option         = queen.WithHooks
		_                                        = queen.Hooks{
			Request:   func(queen.RequestEvent) {},
			Handled:   func(queen.HandledEvent) {},
			Acked:     func(queen.AckedEvent) {},
			LeaseLost: func(queen.LeaseLostEvent) {},
		}
		_ = queen.RequestEvent{Method: "GET", Route: "/health", Server: "http://h", Status: 200, Attempt: 1,
			Duration: time.Second, Err: nil}
		_ = queen.HandledEvent{Message: &queen.Message{}, Outcome: queen.StatusCompleted, Err: nil,
			Duration: time.Second, Panicked: false}
		_ = queen.AckedEvent{Message: &queen.Message{}, Status: queen.StatusDLQ, Success: true, Error: ""}
		_ = queen.LeaseLostEvent{LeaseID: "l", Queue: "q", Messages: []*queen.Message{}}
	)
	c, err := queen.New("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var _ func(...queen.Middleware) queen.QueueBuilder = c.Queue("q").Use
}

// The consume loop's backoff, outcomes, health check and bounded shutdown, as a caller
// compiles against them.
func TestConsumeProductionSignatures(t *testing.T) {
	t.Parallel()
	var (
		_ func(time.Duration, error) error = queen.RetryAfter
		_ func(error) queen.Status         = queen.OutcomeOf
	)
	c, err := queen.New("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var (
		_ func(context.Context) (queen.ServerInfo, error) = c.Ping
		_ func(context.Context) error                     = c.Shutdown
	)
	b := c.Queue("q")
	var (
		_ func(time.Duration, time.Duration) queen.QueueBuilder = b.RetryBackoff
		_ func(int, time.Duration) queen.QueueBuilder           = b.AckEvery
	)
	_ = queen.ServerInfo{Status: "healthy", Version: ""}
}

// The Producer, as a caller compiles against it.
func TestProducerSignatures(t *testing.T) {
	t.Parallel()
	c, err := queen.New("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var (
		_ func(queen.ProducerConfig) (*queen.Producer, error) = c.NewProducer
		_                                                     = queen.ProducerConfig{
			Linger: time.Millisecond, MaxBatch: 1, MaxBuffered: 1,
			OnResult: func(queue string, item queen.PushItem, res queen.PushResult, err error) {},
		}
	)
	p, err := c.NewProducer(queen.ProducerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var (
		_ func(context.Context, string, queen.PushItem) error = p.Send
		_ func(context.Context) error                         = p.Flush
		_ func(context.Context) error                         = p.Close
	)
	assert.NoError(t, p.Close(t.Context()))
}
