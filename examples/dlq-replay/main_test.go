package main

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/queenmq/queen-go/examples/internal/exampletest"
)

// The example closes its client and its in-process broker: nothing may keep running.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestDLQReplay(t *testing.T) {
	exampletest.Output(t, run,
		"dead letters: 1 (total 1)",
		"group settlement: invalid IBAN:",
		"replayed as dlq:",
		"group settlement received the replay (attempt 1)",
		"group audit received the replay (attempt 1)",
		"second replay refused: true",
		"dlq-replay done",
	)
}
