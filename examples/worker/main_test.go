package main

import (
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/examples/internal/exampletest"
	"github.com/queenmq/queen-go/internal/testmode"
)

// The example closes its client and its in-process broker: nothing may keep running.
func TestMain(m *testing.M) { testmode.Main(m) }

func TestWorkerHandlesDemoJobsAndStops(t *testing.T) {
	demo := func(ctx context.Context, out io.Writer) error {
		return run(ctx, []string{"-demo", "24", "-concurrency", "3"}, out)
	}
	exampletest.SameInBothModes(t, demo, "pushed demo jobs", `msg="worker stopped" handled=24`)
}

func TestWorkerRefusesBadFlags(t *testing.T) {
	t.Setenv("QUEEN_URL", "")
	require.Error(t, run(t.Context(), []string{"-concurrency", "zero"}, io.Discard))
}
