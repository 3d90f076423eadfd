package route

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPathEscapesEachNameIntoItsPlaceholder(t *testing.T) {
	assert.Equal(t, "/api/v1/push", Push.Path())
	assert.Equal(t, "/api/v1/pop/queue/a%2Fb/partition/p%20q", PopPartition.Path("a/b", "p q"))
	assert.Equal(t, "/api/v1/consumer-groups/g/queues/q/seek", Seek.Path("g", "q"))
	assert.Panics(t, func() { Seek.Path("g") })
	assert.Panics(t, func() { Push.Path("x") })
}

func TestMatchPrefersLiteralSegmentsOverPlaceholders(t *testing.T) {
	r, ok := Match("GET", "/api/v1/consumer-groups/lagging")
	require.True(t, ok)
	assert.Equal(t, Lagging, r)
	r, ok = Match("GET", "/api/v1/consumer-groups/billing")
	require.True(t, ok)
	assert.Equal(t, GroupDetail, r)
	r, ok = Match("DELETE", "/api/v1/consumer-groups/billing")
	require.True(t, ok)
	assert.Equal(t, DeleteGroup, r)
	r, ok = Match("POST", "/api/v1/lease/abc/extend")
	require.True(t, ok)
	assert.Equal(t, OpRenew, r.Op)
	assert.Equal(t, FamilyExtend, r.Family)
}

func TestMatchNeverReturnsAConcretePathForAnUnknownOne(t *testing.T) {
	r, ok := Match("GET", "/api/v1/secret-queue/x")
	assert.False(t, ok)
	assert.Equal(t, Unknown, r.Pattern)
	r, ok = Match("GET", "/metrics")
	assert.False(t, ok)
	assert.Equal(t, UnknownAny, r.Pattern)
	_, ok = Match("GET", "/api/v1/pop/queue/")
	assert.False(t, ok, "an empty name fits no placeholder")
}

func TestEveryRouteMatchesItself(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range All {
		require.False(t, seen[r.Mux()], "%s listed twice", r.Mux())
		seen[r.Mux()] = true
		names := make([]string, 0, 2)
		for range countPlaceholders(r.Pattern) {
			names = append(names, "n")
		}
		got, ok := Match(r.Method, r.Path(names...))
		require.True(t, ok, r.Pattern)
		assert.Equal(t, r, got)
	}
}

func countPlaceholders(p string) int {
	n := 0
	for _, c := range p {
		if c == '{' {
			n++
		}
	}
	return n
}
