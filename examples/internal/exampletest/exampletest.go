// Package exampletest runs an example the way the test suite checks it.
package exampletest

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/testmode"
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

// ForEachMode runs body once per broker generation, the in-process broker answering as 2.0
// and then as 0.15 (QUEEN_COMPAT); the subtests run one after the other, as they set the
// environment.
func ForEachMode(t *testing.T, body func(t *testing.T, m testmode.Mode)) {
	t.Helper()
	for _, m := range testmode.Modes {
		t.Run(m.Name, func(t *testing.T) {
			t.Setenv("QUEEN_COMPAT", m.Name)
			body(t, m)
		})
	}
}

// PerMode is want on 2.0 and want015 on 0.15.
func PerMode(m testmode.Mode, want, want015 string) string {
	if m.V015 {
		return want015
	}
	return want
}
