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

func TestTransaction(t *testing.T) {
	exampletest.ForEachMode(t, func(t *testing.T, _ testmode.Mode) {
		got := exampletest.Output(t, run,
			"committed transaction with 2 operations",
			"repeat rolled back: true",
			"transaction done",
		)
		require.Equal(t, 1, strings.Count(got, "invoice in partition cust-7: {\"order\":\"o-42\",\"total\":120}"))
	})
}
