package main

import (
	"testing"

	"github.com/queenmq/queen-go/examples/internal/exampletest"
	"github.com/queenmq/queen-go/internal/testmode"
)

// The example closes its Producer, client and in-process broker: nothing may keep running.
func TestMain(m *testing.M) { testmode.Main(m) }

// Every event is stored once and read back in send order, with the same output on both broker
// generations.
func TestProducer(t *testing.T) {
	exampletest.SameInBothModes(t, run,
		"sent 2000 events for 8 customers",
		"answered: queued=2000 duplicate=0 failed=0",
		"customer-3: 250 events read back, in send order: true",
		"producer done",
	)
}
