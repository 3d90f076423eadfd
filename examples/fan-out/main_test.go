package main

import (
	"testing"

	"github.com/queenmq/queen-go/examples/internal/exampletest"
	"github.com/queenmq/queen-go/internal/testmode"
)

// The example closes its client and its in-process broker: nothing may keep running.
func TestMain(m *testing.M) { testmode.Main(m) }

// Each group handles every order, with the same output on both broker generations.
func TestFanOut(t *testing.T) {
	exampletest.SameInBothModes(t, run,
		"group billing handled 20 orders",
		"group analytics handled 20 orders",
		"fan-out done",
	)
}
