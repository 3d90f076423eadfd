package queen

import "errors"

// outcomeError carries a handler's chosen ack status; errors.Is/As still reach the cause.
type outcomeError struct {
	status Status
	err    error
}

func (e *outcomeError) Error() string {
	if e.err == nil {
		return string(e.status)
	}
	return e.err.Error()
}

func (e *outcomeError) Unwrap() error { return e.err }

// Retry marks a handler error as "deliver again without spending a retry": the message is
// acked retry, and err's text is kept. errors.Is and errors.As still see err.
func Retry(err error) error { return &outcomeError{status: StatusRetry, err: err} }

// DeadLetter marks a handler error as "give up now": the message is filed as a dead letter
// with err's text. errors.Is and errors.As still see err.
func DeadLetter(err error) error { return &outcomeError{status: StatusDLQ, err: err} }

// outcome maps a handler's return to an ack: nil completes, Retry retries, DeadLetter files a
// dead letter, any other error fails the message. errText is the full text of err.
func outcome(err error) (status Status, errText string) {
	if err == nil {
		return StatusCompleted, ""
	}
	var o *outcomeError
	if errors.As(err, &o) {
		return o.status, err.Error()
	}
	return StatusFailed, err.Error()
}
