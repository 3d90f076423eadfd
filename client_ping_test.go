package queen_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// Ping reads the broker's health without a token: its status, and its version as sent; a
// broker that cannot be reached is an error.
func TestPingReadsTheBrokersHealth(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		_, _, c := tapped(t, m, queentest.WithToken("tok"))
		info, err := c.Ping(testutil.Context(t))
		require.NoError(t, err, "health needs no token")
		assert.Equal(t, "healthy", info.Status)
		assert.NotEmpty(t, info.Version)
		if m.V015 {
			assert.Equal(t, "1.0.0", info.Version, "a 0.15 broker's version, whatever its build")
		}
	})
	down := stubClient(t, "http://127.0.0.1:1")
	_, err := down.Ping(testutil.Context(t))
	assert.Error(t, err)
}
