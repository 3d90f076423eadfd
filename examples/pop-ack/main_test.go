package main

import (
	"testing"

	"github.com/queenmq/queen-go/examples/internal/exampletest"
	"github.com/queenmq/queen-go/internal/testmode"
)

// The example closes its client and its in-process broker: nothing may keep running.
func TestMain(m *testing.M) { testmode.Main(m) }

// The batch is settled by hand and what was retried comes back, with the same output on both
// broker generations.
func TestPopAck(t *testing.T) {
	exampletest.SameInBothModes(t, run,
		"popped 4 messages under one lease: true",
		"ack task-resize: success=true",
		"ack task-watermark: success=true leaseReleased=true",
		"redelivered task-watermark\n",
		"redelivered task-upload\n",
		"second ack of task-watermark: queen: message already settled",
		"dead-lettered task-upload",
		"pop-ack done",
	)
}
