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

func TestFanOut(t *testing.T) {
	t.Setenv("QUEEN_URL", "")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	got := out.String()
	require.Contains(t, got, "group billing handled 20 orders")
	require.Contains(t, got, "group analytics handled 20 orders")
	require.Contains(t, got, "fan-out done")
}
