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

func TestWorkerHandlesDemoJobsAndStops(t *testing.T) {
	t.Setenv("QUEEN_URL", "")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"-demo", "24", "-concurrency", "3"}, &out))
	got := out.String()
	require.Contains(t, got, "pushed demo jobs")
	require.Contains(t, got, `msg="worker stopped" handled=24`)
}

func TestWorkerRefusesBadFlags(t *testing.T) {
	t.Setenv("QUEEN_URL", "")
	var out bytes.Buffer
	require.Error(t, run(context.Background(), []string{"-concurrency", "zero"}, &out))
}
