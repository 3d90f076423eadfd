package queen

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error the SDK returns works with errors.Is and errors.As.
var (
	// ErrInvalidOption is wrapped by every refusal of a builder setting or request field.
	// The message names the setting and the value.
	ErrInvalidOption = errors.New("queen: invalid option")
	// ErrLeaseLost is the cause of a handler ctx cancelled because its lease renewal was refused.
	ErrLeaseLost = errors.New("queen: lease lost")
	// ErrHandlerTimeout is the cause (context.Cause) of a handler ctx that HandlerTimeout ended.
	ErrHandlerTimeout = errors.New("queen: handler timeout")
	// ErrLeaseExpired reports an ack or renewal refused because the lease is expired, released or unknown.
	ErrLeaseExpired = errors.New("queen: lease expired or invalid")
	// ErrAlreadySettled is returned by a second settle of the same message; nothing is sent.
	ErrAlreadySettled = errors.New("queen: message already settled")
	// ErrTransactionFailed is wrapped by a transaction the broker rolled back.
	ErrTransactionFailed = errors.New("queen: transaction failed")
	// ErrClosed is returned by calls on a closed Client.
	ErrClosed = errors.New("queen: client closed")
	// ErrOutcomeUnknown is wrapped by the error of a call that changes state (a push, an ack,
	// a transaction commit, a lease renewal, a replay, seek or delete) whose answer was lost
	// after the request was sent: the broker may or may not have applied it. The error also
	// wraps what a resend got, when one was made. Check the state (or rely on idempotence)
	// before repeating it. A call that was never sent (its ctx was done first, the connection
	// was refused, the name did not resolve) never wraps it.
	ErrOutcomeUnknown = errors.New("queen: outcome unknown")
)

// APIError is any non-2xx answer of the broker, and a 200 that carries a
// top-level {"success":false,"error":...} where a result was expected (0.15 brokers).
type APIError struct {
	StatusCode int    // HTTP status; 200 for a 0.15 error answered as 200
	Message    string // the broker's "error" text, or the start of a non-JSON body
	Method     string // request method
	Path       string // request path, without the query
	// NotJSON is true when the body was not a JSON {"error":...} object (a 0.15 404 page, say).
	NotJSON bool
}

func (e *APIError) Error() string {
	return fmt.Sprintf("queen: %s %s: %d %s", e.Method, e.Path, e.StatusCode, e.Message)
}

// Temporary reports whether retrying the same request may succeed (5xx and 429).
func (e *APIError) Temporary() bool {
	return e.StatusCode == 429 || e.StatusCode >= 500
}

// invalidOption builds an error wrapping ErrInvalidOption that names the setting and the value.
func invalidOption(setting string, value any, why string) error {
	return fmt.Errorf("%w: %s=%v: %s", ErrInvalidOption, setting, value, why)
}

// invalidSetting builds the ErrInvalidOption of a builder setting: the method and the value it
// was given, then why (which names the setting as the broker knows it).
func invalidSetting(method string, value any, why string) error {
	return fmt.Errorf("%w: %s(%v): %s", ErrInvalidOption, method, value, why)
}
