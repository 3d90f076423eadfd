// Package exampletest runs an example the way the test suite checks it.
package exampletest

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// Output runs an example against an in-process broker (QUEEN_URL cleared), fails the test on
// its error or on a missing line of want, and returns what the example printed.
func Output(t *testing.T, run func(context.Context, io.Writer) error, want ...string) string {
	t.Helper()
	t.Setenv("QUEEN_URL", "")
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), &out))
	got := out.String()
	for _, w := range want {
		require.Contains(t, got, w)
	}
	return got
}
