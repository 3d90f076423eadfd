package main

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/queenmq/queen-go/examples/internal/exampletest"
	"github.com/queenmq/queen-go/internal/testmode"
)

// The example closes its client and its in-process broker: nothing may keep running.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestPopAck(t *testing.T) {
	exampletest.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		exampletest.Output(t, run,
			"popped 4 messages",
			"ack task-resize: success=true",
			"ack task-watermark: success=true leaseReleased=true",
			exampletest.PerMode(m, "redelivered task-watermark (attempt 2)", "redelivered task-watermark (attempt ?)"),
			exampletest.PerMode(m, "redelivered task-upload (attempt 2)", "redelivered task-upload (attempt ?)"),
			"second ack of task-watermark: queen: message already settled",
			"dead-lettered task-upload",
			"pop-ack done",
		)
	})
}
