package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHelpOnEveryCommandExitsZero(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		"queenctl":        {"--help"},
		"help":            {"help"},
		"dlq list":        {"dlq", "list", "--help"},
		"dlq replay":      {"dlq", "replay", "-h"},
		"dlq delete":      {"dlq", "delete", "--help"},
		"seek":            {"seek", "--help"},
		"queue configure": {"queue", "configure", "--help"},
		"queue delete":    {"queue", "delete", "--help"},
		"group delete":    {"group", "delete", "--help"},
		"dlq":             {"dlq", "--help"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := queenctl(t, nil, args...)
			assert.Equal(t, exitOK, r.code, r.stderr)
			assert.Contains(t, r.stdout, "Usage: queenctl")
			assert.Empty(t, r.stderr)
		})
	}
	r := queenctl(t, nil, "queue", "configure", "--help")
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

func TestProgressBarDrawing(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	drawProgress(&b, "replay", 3, 4)
	assert.Equal(t, "\rreplay [======================        ] 3/4", b.String())
}

func TestPipesGetNoProgressBar(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	assert.False(t, isTerminal(&b))
}
