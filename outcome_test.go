package queen

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOutcomeMapsHandlerErrors(t *testing.T) {
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
		{DeadLetter(cause), StatusDLQ, "boom"},
		{fmt.Errorf("step 2: %w", DeadLetter(cause)), StatusDLQ, "step 2: boom"},
		{Retry(nil), StatusRetry, "retry"},
	}
	for _, tc := range cases {
		status, text := outcome(tc.err)
		assert.Equal(t, tc.status, status, "%v", tc.err)
		assert.Equal(t, tc.text, text, "%v", tc.err)
	}
}
