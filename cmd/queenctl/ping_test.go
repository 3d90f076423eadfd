package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ping says whether the broker is healthy; version prints queenctl's and the broker's.
func TestPingAndVersionAskTheBroker(t *testing.T) {
	t.Parallel()
	b := newBroker(t, "tok")
	r := queenctl(t, b.env, "ping")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "healthy (queen-go reference broker")
	r = queenctl(t, b.env, "version", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	var v struct{ Client, BrokerStatus, BrokerVersion string }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &v))
	assert.Equal(t, "healthy", v.BrokerStatus)
	assert.NotEmpty(t, v.Client)
	r = queenctl(t, nil, "--version")
	assert.Equal(t, exitOK, r.code)
	assert.True(t, strings.HasPrefix(r.stdout, "queenctl "))
}
