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

func TestDLQReplay(t *testing.T) {
	t.Setenv("QUEEN_URL", "")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	got := out.String()
	for _, want := range []string{
		"dead letters: 1 (total 1)",
		"group settlement: invalid IBAN:",
		"replayed as dlq:",
		"group settlement received the replay (attempt 1)",
		"group audit received the replay (attempt 1)",
		"second replay refused: true",
		"dlq-replay done",
	} {
		require.Contains(t, got, want)
	}
}
