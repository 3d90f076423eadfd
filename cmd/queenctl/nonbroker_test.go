package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/testmode"
)

// lists are the commands that print a list of what the broker holds.
var lists = [][]string{{"status"}, {"queue", "list"}, {"group", "list"}, {"lag"}, {"lag", "--min", "1"},
	{"messages", "peek", "orders"}, {"tail", "orders"}, {"dlq", "list", "--queue", "orders"},
	{"dlq", "replay", "--queue", "orders", "--all"}, {"dlq", "show", "some-id"}}

// Something that is not a broker and answers 200 with an empty or null body to everything is
// an error on every list (exit 1), never an empty list: lag --min 1 does not say "no consumer
// groups" and pass.
func TestNonBrokerAnswersAreAnErrorOnEveryList(t *testing.T) {
	t.Parallel()
	for _, body := range []string{"", "null", "{}"} {
		_, env := fake(t, answers(nil, body))
		for _, args := range lists {
			r := queenctl(t, env, args...)
			assert.Equal(t, exitFailure, r.code, "%q %v: %s", body, args, r.stdout)
			if body != "{}" { // an object where a list belongs fails to decode, which says enough
				assert.Contains(t, r.stderr, "is it a Queen broker?", "%q %v", body, args)
			}
			assert.NotContains(t, r.stdout, "no consumer groups", "%q %v", body, args)
			assert.NotContains(t, r.stdout, "no queues", "%q %v", body, args)
		}
		r := queenctl(t, env, "--json", "lag", "--min", "1")
		assert.Equal(t, exitFailure, r.code)
		var e struct{ Error string }
		require.NoError(t, json.Unmarshal([]byte(r.stderr), &e), r.stderr)
		assert.NotEmpty(t, e.Error)
		assert.Empty(t, r.stdout)
	}
}

// A server whose lists are empty but whose health route answers as a broker's is a broker
// with nothing in it; so is the reference broker, in both modes (0.15 answers an empty list
// with an empty body).
func TestEmptyBrokersListNothingAndPass(t *testing.T) {
	t.Parallel()
	_, env := fake(t, answers(map[route.Route]string{route.Health: `{"status":"healthy","version":"x"}`}, ""))
	for _, args := range [][]string{{"lag", "--min", "1"}, {"group", "list"}, {"queue", "list"}} {
		r := queenctl(t, env, args...)
		assert.Equal(t, exitOK, r.code, "%v: %s", args, r.stderr)
	}
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		b := newBrokerIn(t, m, "")
		for _, args := range lists[:8] {
			r := queenctl(t, b.env, args...)
			if args[0] == "messages" || args[0] == "tail" {
				continue // an unknown queue: not found on 2.0, nothing on 0.15
			}
			assert.Equal(t, exitOK, r.code, "%v: %s", args, r.stderr)
			assert.NotContains(t, r.stderr, "is it a Queen broker?", args)
		}
		r := queenctl(t, b.env, "lag", "--min", "1")
		assert.Equal(t, "no consumer groups\n", r.stdout)
		r = queenctl(t, b.env, "status")
		assert.True(t, strings.HasPrefix(r.stdout, "no queues\n"), r.stdout)
	})
}
