package queen

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/route"
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

// A request's URL is built on the broker's parsed URL without a parse of its own; it must be
// the very URL a parse of the whole text gives, on any base and for any path and query.
func TestARequestURLIsWhatParsingItGives(t *testing.T) {
	t.Parallel()
	bases := []string{"http://a", "http://a:6632", "https://a.example/", "http://a/prefix", "http://a/pre%20fix/",
		"http://[::1]:6632", "http://a:"}
	requests := []request{
		{path: "/api/v1/push"},
		{path: "/api/v1/pop/queue/orders", rawQuery: "batch=1&wait=true"},
		{path: route.PopPartition.Path("q q", "p/1"), rawQuery: "consumerGroup=g%20h"},
		{path: route.PopQueue.Path("ünï;,+"), rawQuery: "x=1"},
	}
	for _, raw := range bases {
		s, err := parseServer(raw)
		require.NoError(t, err, raw)
		for _, r := range requests {
			want, err := url.Parse(s.url(&r))
			require.NoError(t, err)
			got, err := s.requestURL(&r)
			require.NoError(t, err)
			assert.Equal(t, want, got, "%s %s?%s", raw, r.path, r.rawQuery)
			assert.Equal(t, s.url(&r), got.String())
		}
	}
}
