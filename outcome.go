package queen

import (
	"errors"
	"time"
)

// outcomeError carries a handler's chosen ack status; errors.Is/As still reach the cause.
type outcomeError struct {
	status Status
	err    error
	after  time.Duration // RetryAfter's wait; 0 with after unset
	timed  bool          // RetryAfter chose the wait
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

// RetryAfter marks a handler error as "deliver again without spending a retry, but not before
// d": Consume acks the message retry once d (plus up to 25 % jitter) has passed, whatever
// RetryBackoff says. errors.Is and errors.As still see err.
func RetryAfter(d time.Duration, err error) error {
	return &outcomeError{status: StatusRetry, err: err, after: max(d, 0), timed: true}
}

// DeadLetter marks a handler error as "give up now": the message is filed as a dead letter
// with err's text. errors.Is and errors.As still see err.
func DeadLetter(err error) error { return &outcomeError{status: StatusDLQ, err: err} }

// OutcomeOf is the ack a consume handler's return value means: nil completes the message,
// Retry and RetryAfter retry it, DeadLetter files it as a dead letter, and any other error
// fails it. Use it to test a handler without a broker.
func OutcomeOf(err error) Status {
	status, _ := outcome(err)
	return status
}

// retryAfter is the wait RetryAfter chose for err, if it did.
func retryAfter(err error) (time.Duration, bool) {
	var o *outcomeError
	if errors.As(err, &o) && o.timed {
		return o.after, true
	}
	return 0, false
}

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
