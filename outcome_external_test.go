package queen_test

import (
	"errors"
	"testing"
	"time"

	"github.com/queenmq/queen-go"
	"github.com/stretchr/testify/assert"
)

// OutcomeOf says which ack a handler's return means.
func TestAcceptanceOutcomeOf(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	assert.Equal(t, queen.StatusCompleted, queen.OutcomeOf(nil))
	assert.Equal(t, queen.StatusFailed, queen.OutcomeOf(boom))
	assert.Equal(t, queen.StatusRetry, queen.OutcomeOf(queen.Retry(boom)))
	assert.Equal(t, queen.StatusRetry, queen.OutcomeOf(queen.RetryAfter(time.Second, boom)))
	assert.Equal(t, queen.StatusDLQ, queen.OutcomeOf(queen.DeadLetter(boom)))
	assert.Equal(t, queen.StatusRetry, queen.OutcomeOf(errors.Join(errors.New("ctx"), queen.Retry(boom))), "wrapped")
	assert.ErrorIs(t, queen.Retry(boom), boom)
	assert.ErrorIs(t, queen.DeadLetter(boom), boom)
	assert.ErrorIs(t, queen.RetryAfter(time.Second, boom), boom)
}

func TestOutcomeWrappersKeepTheCause(t *testing.T) {
	t.Parallel()
	cause := errors.New("db down")
	r := queen.Retry(cause)
	d := queen.DeadLetter(cause)
	assert.ErrorIs(t, r, cause)
	assert.ErrorIs(t, d, cause)
	assert.Equal(t, "db down", r.Error())
	assert.Equal(t, "db down", d.Error())
}
