package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// group delete forgets the group on one queue or on every queue and says so; a group with no
// state left is not found and exits 1.
func TestGroupDeleteForgetsTheGroup(t *testing.T) {
	t.Parallel()
	b := newBroker(t, "")
	b.push(t, "orders", 1)
	b.push(t, "invoices", 2)
	require.Len(t, b.pop(t, "orders", "billing"), 1)
	require.Len(t, b.pop(t, "invoices", "billing"), 1)

	r := queenctl(t, b.env, "group", "delete", "billing", "--queue", "invoices")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, "deleted consumer group billing on queue invoices\n", r.stdout)

	r = queenctl(t, b.env, "group", "delete", "--json", "billing")
	require.Equal(t, exitOK, r.code, r.stderr)
	var g struct {
		ConsumerGroup string
		Deleted       bool
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &g))
	assert.Equal(t, "billing", g.ConsumerGroup)
	assert.True(t, g.Deleted)

	r = queenctl(t, b.env, "group", "delete", "billing")
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, `"billing"`)
}
