package main

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/queenmq/queen-go/examples/internal/exampletest"
)

// The example closes its client and its in-process broker: nothing may keep running.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Each group handles every order, with the same output on both broker generations.
func TestFanOut(t *testing.T) {
	exampletest.SameInBothModes(t, run,
		"group billing handled 20 orders",
		"group analytics handled 20 orders",
		"fan-out done",
	)
}
