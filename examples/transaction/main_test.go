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

// The ack and the invoice's push are committed together, and a repeat is rolled back, with the
// same output on both broker generations.
func TestTransaction(t *testing.T) {
	got := exampletest.SameInBothModes(t, run,
		"committed transaction with 2 operations",
		"repeat rolled back: true",
		"transaction done",
	)
	require.Equal(t, 1, strings.Count(got, "invoice in partition cust-7: {\"order\":\"o-42\",\"total\":120}"))
}
