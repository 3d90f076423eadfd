package queen

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A handler's return is an ack status and a text: nil completes, Retry and RetryAfter retry,
// DeadLetter files a dead letter, any other error fails; the text is the error's whole text,
// wrapping included, and OutcomeOf says the status of a wrapped outcome too.
func TestAHandlersReturnIsAnAckStatusAndText(t *testing.T) {
	t.Parallel()
	cause := errors.New("boom")
	cases := []struct {
		err    error
		status Status
		text   string
	}{
		{nil, StatusCompleted, ""},
		{cause, StatusFailed, "boom"},
		{Retry(cause), StatusRetry, "boom"},
		{RetryAfter(time.Second, cause), StatusRetry, "boom"},
		{DeadLetter(cause), StatusDLQ, "boom"},
		{fmt.Errorf("step 2: %w", DeadLetter(cause)), StatusDLQ, "step 2: boom"},
		{errors.Join(errors.New("ctx"), Retry(cause)), StatusRetry, "ctx\nboom"},
		{Retry(nil), StatusRetry, "retry"},
	}
	for _, tc := range cases {
		status, text := outcome(tc.err)
		assert.Equal(t, tc.status, status, "%v", tc.err)
		assert.Equal(t, tc.text, text, "%v", tc.err)
		assert.Equal(t, tc.status, OutcomeOf(tc.err), "%v", tc.err)
	}
}

// Retry, RetryAfter and DeadLetter keep their cause for errors.Is and errors.As, and its text.
func TestOutcomesKeepTheirCause(t *testing.T) {
	t.Parallel()
	cause := errors.New("db down")
	for _, err := range []error{Retry(cause), RetryAfter(time.Second, cause), DeadLetter(cause)} {
		assert.ErrorIs(t, err, cause)
		assert.Equal(t, "db down", err.Error())
	}
}
