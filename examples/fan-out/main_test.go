package main

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/queenmq/queen-go/examples/internal/exampletest"
	"github.com/queenmq/queen-go/internal/testmode"
)

// The example closes its client and its in-process broker: nothing may keep running.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestFanOut(t *testing.T) {
	exampletest.ForEachMode(t, func(t *testing.T, _ testmode.Mode) {
		exampletest.Output(t, run,
			"group billing handled 20 orders",
			"group analytics handled 20 orders",
			"fan-out done",
		)
	})
}
