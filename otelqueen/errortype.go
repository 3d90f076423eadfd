package otelqueen

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"

	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	queen "github.com/queenmq/queen-go"
)

// sentinelNames name the SDK's sentinel errors for error.type, in the order they are tried:
// an unknown outcome first, as it wraps whatever its resend got.
var sentinelNames = []struct {
	err  error
	name string
}{
	{queen.ErrOutcomeUnknown, "outcome_unknown"},
	{queen.ErrLeaseLost, outcomeLeaseLost},
	{queen.ErrHandlerTimeout, "handler_timeout"},
	{queen.ErrLeaseExpired, "lease_expired"},
	{queen.ErrAlreadySettled, "already_settled"},
	{queen.ErrTransactionFailed, "transaction_failed"},
	{queen.ErrClosed, "closed"},
	{queen.ErrInvalidOption, "invalid_option"},
}

// errorTypeOf is the error.type of err: a name from a short, fixed list, so that a dashboard
// can group by it and a metric keeps few series. The conventions ask for a predictable, low
// cardinality value; a Go type such as *errors.errorString says nothing and changes with the
// way an error was wrapped. It is the SDK sentinel err wraps (outcome_unknown, lease_lost, ...),
// else timeout or canceled for a context's end, the status class (4xx, 5xx) of a broker's
// error answer, network for a connection that failed, and _OTHER for anything else (a
// handler's own error).
func errorTypeOf(err error) string {
	for _, s := range sentinelNames {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	var apiErr *queen.APIError
	var netErr net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &apiErr):
		return statusClass(apiErr.StatusCode)
	case errors.As(err, &netErr) && netErr.Timeout():
		return "timeout"
	case errors.As(err, &netErr), errors.Is(err, io.ErrUnexpectedEOF):
		return "network"
	}
	return semconv.ErrorTypeOther.Value.AsString()
}

// statusClass is an error answer's status class: "4xx" or "5xx". A 0.15 broker answers some
// failures of its database with a 200 that says success false: that is a server error too.
func statusClass(status int) string {
	if status < 300 {
		return "5xx"
	}
	return strconv.Itoa(status/100) + "xx"
}
