package queen

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPickServerSkipsUnhealthy(t *testing.T) {
	t.Parallel()
	c, err := New("http://a", WithServers("http://b", "http://c"))
	require.NoError(t, err)
	defer c.Close()
	key := affinityKey("q", "p", "g")
	first := c.pickServer(key, nil)
	assert.Same(t, first, c.pickServer(key, nil), "stable while health is unchanged")
	first.markDown()
	second := c.pickServer(key, nil)
	assert.NotSame(t, first, second)
	for _, s := range c.servers {
		s.markDown()
	}
	assert.NotNil(t, c.pickServer(key, nil), "with every server down, one is still tried")
	assert.NotSame(t, second, c.pickServer(key, second), "except is avoided when another exists")
}
