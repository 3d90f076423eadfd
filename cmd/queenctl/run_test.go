package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/testutil"
)

// Every command prints its usage and its flags with --help (or -h), exits 0 and writes nothing
// on stderr.
func TestHelpOnEveryCommandExitsZero(t *testing.T) {
	t.Parallel()
	commands := [][]string{{}, {"dlq"}, {"dlq", "list"}, {"dlq", "replay"}, {"dlq", "delete"}, {"dlq", "show"},
		{"seek"}, {"queue", "configure"}, {"queue", "delete"}, {"queue", "list"}, {"queue", "show"},
		{"group", "delete"}, {"group", "list"}, {"group", "show"}, {"status"}, {"lag"}, {"messages", "peek"},
		{"tail"}, {"push"}, {"ping"}, {"version"}}
	for _, command := range commands {
		usage := "Usage: queenctl " + strings.Join(command, " ")
		if len(command) == 0 || len(command) == 1 && command[0] == "dlq" { // no command yet: the top usage
			usage = "Usage: queenctl [--server URL]"
		}
		for _, help := range []string{"--help", "-h"} {
			args := append(append([]string(nil), command...), help)
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				t.Parallel()
				r := queenctl(t, nil, args...)
				assert.Equal(t, exitOK, r.code, r.stderr)
				assert.Contains(t, r.stdout, usage)
				assert.Contains(t, r.stdout, "-json")
				assert.Empty(t, r.stderr)
			})
		}
	}
	r := queenctl(t, nil, "help")
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "Usage: queenctl")
	r = queenctl(t, nil, "queue", "configure", "--help")
	for _, flag := range []string{"-lease-time", "-retry-limit", "-no-dlq", "-namespace", "-task", "-server", "-token", "-json"} {
		assert.Contains(t, r.stdout, flag)
	}
}

// Bad command lines exit 2 and say what was wrong, with the value; nothing reaches a broker
// (the default server is not running in tests).
func TestBadUsageExitsTwo(t *testing.T) {
	t.Parallel()
	env := map[string]string{"QUEEN_URL": "http://127.0.0.1:1"} // nothing listens there
	cases := []struct {
		args []string
		want string
	}{
		{nil, "no command given"},
		{[]string{"frob"}, `"frob"`},
		{[]string{"dlq"}, "missing subcommand"},
		{[]string{"dlq", "frob"}, `"dlq frob"`},
		{[]string{"dlq", "list"}, "--queue is required"},
		{[]string{"dlq", "list", "--queue", "q", "--limit", "-1"}, "--limit -1"},
		{[]string{"dlq", "list", "--queue", "q", "--limit", "abc"}, `"abc"`},
		{[]string{"dlq", "list", "--queue", "q", "extra"}, `"extra"`},
		{[]string{"dlq", "list", "--queue", "q", "--bogus"}, "-bogus"},
		{[]string{"dlq", "replay"}, "at least one dead-letter id"},
		{[]string{"dlq", "replay", "--all"}, "--queue is required"},
		{[]string{"dlq", "replay", "id1", "--all", "--queue", "q"}, `"id1"`},
		{[]string{"dlq", "replay", "id1", "--queue", "q"}, `--queue "q"`},
		{[]string{"dlq", "delete"}, "at least one dead-letter id"},
		{[]string{"dlq", "delete", "a", ""}, "id number 2 is empty"},
		{[]string{"seek", "--queue", "q", "--to-end"}, "--group is required"},
		{[]string{"seek", "--group", "g", "--to-end"}, "--queue is required"},
		{[]string{"seek", "--group", "g", "--queue", "q"}, "--to TIME or --to-end"},
		{[]string{"seek", "--group", "g", "--queue", "q", "--to", "2026-11-29T10:00:00Z", "--to-end"}, "not both"},
		{[]string{"seek", "--group", "g", "--queue", "q", "--to", "yesterday"}, `"yesterday"`},
		{[]string{"queue"}, "missing subcommand"},
		{[]string{"queue", "configure"}, "exactly one queue name, got 0"},
		{[]string{"queue", "configure", "a", "b"}, `["a" "b"]`},
		{[]string{"queue", "configure", "q", "--lease-time", "soon"}, `"soon"`},
		{[]string{"queue", "configure", "q", "--lease-time", "500ms"}, "LeaseTime=500ms"},
		{[]string{"queue", "configure", "q", "--lease-time", "-5s"}, "LeaseTime=-5s"},
		{[]string{"queue", "configure", "q", "--retry-limit", "-1"}, "RetryLimit=-1"},
		{[]string{"queue", "delete"}, "exactly one queue name"},
		{[]string{"group", "delete"}, "exactly one consumer group"},
		{[]string{"group", "frob"}, `"group frob"`},
		{[]string{"--server", "://nope", "queue", "delete", "q"}, `"://nope"`},
		{[]string{"status", "x"}, `status takes no arguments, got "x"`},
		{[]string{"group", "list", "x"}, `group list takes no arguments, got "x"`},
		{[]string{"group", "show"}, "exactly one consumer group, got 0"},
		{[]string{"queue", "show", "a", "b"}, `["a" "b"]`},
		{[]string{"tail"}, "exactly one queue name, got 0"},
		{[]string{"tail", "q", "--limit", "0"}, "--limit 0"},
		{[]string{"ping", "x"}, `ping takes no arguments, got "x"`},
		{[]string{"version", "x"}, `version takes no arguments, got "x"`},
		{[]string{"lag", "--min", "x"}, `"x"`},
		{[]string{"messages"}, "missing subcommand"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			r := queenctl(t, env, tc.args...)
			assert.Equal(t, exitUsage, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
			assert.Contains(t, r.stderr, tc.want)
		})
	}
}

// The server and the token come from the flags, else QUEEN_URL and QUEEN_TOKEN; the token is
// never printed.
func TestServerAndTokenFromFlagsOrEnvironment(t *testing.T) {
	t.Parallel()
	const token = "s3cret-token"
	b := newBroker(t, token)

	r := queenctl(t, b.env, "queue", "configure", "orders")
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, "401")

	env := map[string]string{"QUEEN_URL": b.srv.URL(), "QUEEN_TOKEN": token}
	r = queenctl(t, env, "queue", "configure", "orders")
	assert.Equal(t, exitOK, r.code, r.stderr)

	r = queenctl(t, nil, "--server", b.srv.URL(), "--token", token, "queue", "delete", "orders")
	assert.Equal(t, exitOK, r.code, r.stderr)

	r = queenctl(t, map[string]string{"QUEEN_URL": "http://127.0.0.1:1"}, "queue", "configure", "orders", "--server", b.srv.URL(), "--token", "wrong")
	assert.Equal(t, exitFailure, r.code)
	assert.NotContains(t, r.stderr, "wrong")

	r = queenctl(t, nil, "queue", "configure", "--help")
	assert.NotContains(t, r.stdout, token)
}

// Exit 3 when nothing answers; 1 when something answers no; errors as JSON with --json; a
// 404 page from something that is not a Queen broker says so.
func TestUnreachableAndNotQueen(t *testing.T) {
	t.Parallel()
	env := map[string]string{"QUEEN_URL": testutil.RefusedURL}
	for _, args := range [][]string{{"ping"}, {"status"}, {"queue", "list"}, {"lag", "--min", "1"}, {"messages", "peek", "q"}, {"version"},
		{"push", "q", "--data", "1"}, {"push", "q", "--data", "1 2"}, {"tail", "q"}} {
		r := queenctl(t, env, args...)
		assert.Equal(t, exitOffline, r.code, "%v: %s", args, r.stderr)
	}
	r := queenctl(t, env, "--json", "ping")
	assert.Equal(t, exitOffline, r.code)
	var e struct {
		Error string
		Exit  int
	}
	require.NoError(t, json.Unmarshal([]byte(r.stderr), &e), r.stderr)
	assert.Equal(t, exitOffline, e.Exit)
	assert.NotEmpty(t, e.Error)

	web := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(web.Close)
	r = queenctl(t, map[string]string{"QUEEN_URL": web.URL}, "queue", "list")
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, "is QUEEN_URL a Queen broker?")

	r = queenctl(t, nil, "--json", "status", "extra")
	assert.Equal(t, exitUsage, r.code)
	require.NoError(t, json.Unmarshal([]byte(r.stderr), &e), r.stderr)
	assert.Equal(t, exitUsage, e.Exit)
}
