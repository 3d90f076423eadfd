package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// The example closes its client and its in-process broker: nothing may keep running.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestTransaction(t *testing.T) {
	t.Setenv("QUEEN_URL", "")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	got := out.String()
	require.Contains(t, got, "committed transaction with 2 operations")
	require.Contains(t, got, "repeat rolled back: true")
	require.Equal(t, 1, strings.Count(got, "invoice in partition cust-7: {\"order\":\"o-42\",\"total\":120}"))
	require.Contains(t, got, "transaction done")
}
