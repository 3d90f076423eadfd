package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// The example closes its client and its in-process broker: nothing may keep running.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestPopAck(t *testing.T) {
	t.Setenv("QUEEN_URL", "")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	got := out.String()
	for _, want := range []string{
		"popped 4 messages",
		"ack task-resize: success=true",
		"ack task-watermark: success=true leaseReleased=true",
		"redelivered task-watermark (attempt 2)",
		"redelivered task-upload (attempt 2)",
		"second ack of task-watermark: queen: message already settled",
		"dead-lettered task-upload",
		"pop-ack done",
	} {
		require.Contains(t, got, want)
	}
}
