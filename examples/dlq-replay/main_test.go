package main

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/queenmq/queen-go/examples/internal/exampletest"
	"github.com/queenmq/queen-go/internal/testmode"
)

// The example closes its client and its in-process broker: nothing may keep running.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestDLQReplay(t *testing.T) {
	exampletest.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		got := exampletest.Output(t, run,
			exampletest.PerMode(m, "dead letters: 1 (total 1)", "dead letters: 1 (total unknown)"),
			"group settlement: invalid IBAN:",
			"replayed as dlq:",
			exampletest.PerMode(m, "group settlement received the replay (attempt 1)", "group settlement received the replay (attempt ?)"),
			exampletest.PerMode(m, "group audit received the replay (attempt 1)", "group audit received the replay (attempt ?)"),
			exampletest.PerMode(m, "second replay refused: true", "second replay: a duplicate, nothing stored"),
			"dlq-replay done",
		)
		require.NotContains(t, got, "total -1")
		require.NotContains(t, got, "attempt 0")
	})
}
