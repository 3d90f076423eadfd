package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/examples/internal/exampletest"
	"github.com/queenmq/queen-go/internal/testmode"
)

// The example closes its client and its in-process broker: nothing may keep running.
func TestMain(m *testing.M) { testmode.Main(m) }

// The dead letter is listed, replayed once to both groups, and never copied twice, with the
// same output on both broker generations.
func TestDLQReplay(t *testing.T) {
	got := exampletest.SameInBothModes(t, run,
		"dead letters: 1\n",
		"group settlement: invalid IBAN:",
		"replayed as dlq:",
		"group settlement received the replay",
		"group audit received the replay",
		"second replay stored a second copy: false",
		"dlq-replay done",
	)
	require.Equal(t, 2, strings.Count(got, "received the replay"))
}
