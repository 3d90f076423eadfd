package queen_test

import (
	"testing"

	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Ping reads /health: status, and the version as sent.
func TestAcceptancePing(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		_, _, c := tapped(t, m, queentest.WithToken("tok"))
		info, err := c.Ping(testutil.Context(t))
		require.NoError(t, err, "health needs no token")
		assert.Equal(t, "healthy", info.Status)
		if m.V015 {
			assert.Equal(t, "1.0.0", info.Version)
		}
	})
}
