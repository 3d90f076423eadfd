package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/queenmq/queen-go/examples/internal/exampletest"
	"github.com/queenmq/queen-go/internal/testmode"
)

// The example closes its client and its in-process broker: nothing may keep running.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestQuickstart(t *testing.T) {
	exampletest.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		attempt := func(n string) string { return exampletest.PerMode(m, "(attempt "+n+")", "(attempt ?)") }
		got := exampletest.Output(t, run,
			"pushed 5 orders",
			"order 3: card declined "+attempt("1"),
			"dead letter: {\"id\":3,\"amount\":30} after 1 retries: card declined",
			"card fixed, dead letter replayed",
			"order 3: charged 30 "+attempt("1"),
			"quickstart done",
		)
		require.Equal(t, 2, strings.Count(got, "order 3: card declined"), "delivered retryLimit+1 times")
		if !m.V015 {
			require.Contains(t, got, "order 3: card declined (attempt 2)")
		}
		for _, id := range []string{"1", "2", "4", "5"} {
			require.Contains(t, got, "order "+id+": charged "+id+"0 "+attempt("1"), "other customers are not held up")
		}
		require.Equal(t, 1, strings.Count(got, "order 3: charged"), "the replay is handled once")
		require.NotContains(t, got, "attempt 0")
	})
}
