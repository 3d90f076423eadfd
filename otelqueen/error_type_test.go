package otelqueen_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/otelqueen"
)

// timeoutError is a network error that says it timed out, as a dial or read deadline does.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// error.type is one of a few fixed names, whatever the handler's error is made of and however
// it is wrapped: a dashboard groups by it, and a metric gets one series per name, never one per
// Go type or message.
func TestErrorTypeIsAStableName(t *testing.T) {
	t.Parallel()
	refused := &url.Error{Op: "Post", URL: "http://broker", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"an error of the handler's own", errors.New("card declined"), "_OTHER"},
		{"a wrapped error of the handler's own", fmt.Errorf("charge: %w", &chargeError{}), "_OTHER"},
		{"a broker's 5xx", &queen.APIError{StatusCode: 503, Message: "overloaded"}, "5xx"},
		{"a broker's 4xx, wrapped", fmt.Errorf("push invoice: %w", &queen.APIError{StatusCode: 413}), "4xx"},
		{"a 0.15 database failure answered as 200", &queen.APIError{StatusCode: 200, Message: "deadlock"}, "5xx"},
		{"a lost answer, whatever its resend got", fmt.Errorf("%w: %w", queen.ErrOutcomeUnknown, &queen.APIError{StatusCode: 404}), "outcome_unknown"},
		{"a lost lease", fmt.Errorf("renew: %w", queen.ErrLeaseLost), "lease_lost"},
		{"an expired lease", queen.ErrLeaseExpired, "lease_expired"},
		{"a second settle", queen.ErrAlreadySettled, "already_settled"},
		{"a rolled back transaction", fmt.Errorf("%w: duplicate", queen.ErrTransactionFailed), "transaction_failed"},
		{"a closed client", queen.ErrClosed, "closed"},
		{"an invalid option", fmt.Errorf("%w: Batch(0)", queen.ErrInvalidOption), "invalid_option"},
		{"a deadline", fmt.Errorf("charge: %w", context.DeadlineExceeded), "timeout"},
		{"a network timeout", &url.Error{Op: "Get", URL: "http://bank", Err: timeoutError{}}, "timeout"},
		{"a cancellation", context.Canceled, "canceled"},
		{"a refused connection", refused, "network"},
		{"a retried refused connection", queen.Retry(refused), "network"},
		{"a dead-lettered error of the handler's own", queen.DeadLetter(&chargeError{}), "_OTHER"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			spans := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
			t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
			mw := otelqueen.Middleware(otelqueen.WithTracerProvider(tp))

			msg := &queen.Message{Queue: "orders", Partition: "Default", ConsumerGroup: "billing", ID: "m1"}
			err := mw(context.Background(), []*queen.Message{msg}, func(context.Context) error { return tc.err })
			require.ErrorIs(t, err, tc.err, "the middleware returns the handler's error")
			ended := spans.Ended()
			require.Len(t, ended, 1)
			assert.Equal(t, tc.want, spanAttrs(ended[0])["error.type"])
		})
	}
}
