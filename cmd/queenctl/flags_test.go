package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
)

// Command lines written for the Go-flag queenctl keep their meaning: single-dash long flags
// become double-dash ones; values, shorthands and what follows "--" stay as they are.
func TestGoStyleFlagsAreRewritten(t *testing.T) {
	t.Parallel()
	root := (&app{}).rootCommand()
	for _, tc := range []struct{ in, want string }{
		{"-json queue list", "--json queue list"},
		{"-server http://x -token t -json ping", "--server http://x --token t --json ping"},
		{"seek --group g --queue q --to -1h -dry-run", "seek --group g --queue q --to -1h --dry-run"},
		{"seek -group g -queue q -to -1h", "seek --group g --queue q --to -1h"},
		{"messages peek q -limit=5 -offset 2", "messages peek q --limit=5 --offset 2"},
		{"tail q -f --f -interval 5ms", "tail q -f --f --interval 5ms"},
		{"-ojson status", "-ojson status"},
		{"-o yaml -timeout 2s status", "-o yaml --timeout 2s status"},
		{"push q --data -json", "push q --data -json"},
		{"push q -data -json", "push q --data -json"},
		{"dlq delete -- -json -yes", "dlq delete -- -json -yes"},
		{"queue delete q -yes", "queue delete q --yes"},
		{"-help", "--help"},
		{"-version", "--version"},
		{"status -bogus", "status -bogus"},
	} {
		assert.Equal(t, tc.want, strings.Join(goStyleFlags(root, strings.Fields(tc.in)), " "), tc.in)
	}
}

// The rewritten command lines run as before.
func TestGoStyleCommandLinesRun(t *testing.T) {
	t.Parallel()
	b := lagBroker(t)
	r := queenctl(t, nil, "-server", b.srv.URL(), "-json", "queue", "list")
	require.Equal(t, exitOK, r.code, r.stderr)
	var rows []queueRow
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows))
	assert.Len(t, rows, 2)

	r = queenctl(t, b.env, "queue", "configure", "orders", "-retry-limit", "4", "-dry-run")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, "queue orders: would change retry limit: 3 -> 4\ndry run: nothing changed\n", r.stdout)

	for _, args := range [][]string{{"-version"}, {"--version"}} {
		r = queenctl(t, nil, args...)
		assert.Equal(t, exitOK, r.code, r.stderr)
		assert.Equal(t, "queenctl (devel)\n", r.stdout, args)
	}
	for _, args := range [][]string{{"status", "--h"}, {"status", "-help"}} {
		r = queenctl(t, nil, args...)
		assert.Equal(t, exitOK, r.code, r.stderr)
		assert.Contains(t, r.stdout, "Usage: queenctl status", args)
	}
}

// -o picks the output format; --json is -o json; anything else is bad usage, and with a JSON
// format errors are JSON on stderr.
func TestOutputFlag(t *testing.T) {
	t.Parallel()
	b := lagBroker(t)
	j := queenctl(t, b.env, "--json", "queue", "list")
	o := queenctl(t, b.env, "-o", "json", "queue", "list")
	require.Equal(t, exitOK, o.code, o.stderr)
	assert.Equal(t, j.stdout, o.stdout)
	assert.Equal(t, exitOK, queenctl(t, b.env, "--json", "-o", "json", "status").code)
	assert.Equal(t, exitOK, queenctl(t, b.env, "-o", "TABLE", "status").code)

	for _, bad := range [][]string{{"--json", "-o", "yaml", "status"}, {"-o", "xml", "status"}} {
		r := queenctl(t, b.env, bad...)
		assert.Equal(t, exitUsage, r.code, bad)
	}
	r := queenctl(t, b.env, "-o", "ndjson", "queue", "show", "nope")
	assert.Equal(t, exitFailure, r.code)
	var e struct {
		Error string
		Exit  int
	}
	require.NoError(t, json.Unmarshal([]byte(r.stderr), &e), r.stderr)
	assert.Equal(t, exitFailure, e.Exit)
	r = queenctl(t, b.env, "-o", "ndjson", "queue", "show", "--bogus")
	require.NoError(t, json.Unmarshal([]byte(r.stderr), &e), "a flag error before the format is known: %s", r.stderr)
	assert.Equal(t, exitUsage, e.Exit)
}

// readState is a broker with a queue, a lagging group and a dead letter, for the reads.
func readState(t *testing.T, m testmode.Mode) (broker, string) {
	t.Helper()
	b := newBrokerIn(t, m, "")
	b.push(t, "orders", 1, 2, 3)
	b.fileDeadLetters(t, "orders", "billing", 4)
	return b, b.newestDeadLetter(t, "orders")
}

// normalized is a decoded value with every number a float64, as JSON decodes them.
func normalized(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalized(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalized(e)
		}
	case int:
		return float64(x)
	case uint64:
		return float64(x)
	case time.Time: // a YAML reader may take a plain timestamp for one: none may be plain
		return "a time written plain: " + x.String()
	}
	return v
}

// withoutTimings drops what differs between two runs of ping.
func withoutTimings(v any) any {
	if m, ok := v.(map[string]any); ok {
		delete(m, "ms")
	}
	return v
}

func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(s), &v), s)
	return withoutTimings(v)
}

func decodeYAML(t *testing.T, s string) []any {
	t.Helper()
	dec := yaml.NewDecoder(strings.NewReader(s))
	var docs []any
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return docs
		}
		require.NoError(t, err, s)
		docs = append(docs, withoutTimings(normalized(v)))
	}
}

func ndjsonLines(t *testing.T, s string) []any {
	t.Helper()
	var out []any
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		out = append(out, decodeJSON(t, sc.Text()))
	}
	return out
}

// Every read prints -o json, ndjson and yaml; the YAML reads back (with a YAML library) as
// exactly the JSON, and the NDJSON holds the same values, a line per row of a list. On both
// generations.
func TestEveryReadPrintsEveryFormat(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		b, id := readState(t, m)
		for _, args := range [][]string{
			{"status"}, {"queue", "list"}, {"queue", "show", "orders"}, {"group", "list"}, {"group", "show", "billing"},
			{"lag"}, {"lag", "--min", "0"}, {"messages", "peek", "orders"}, {"dlq", "list", "--queue", "orders"},
			{"dlq", "show", id}, {"ping"}, {"version"}, {"tail", "orders"},
		} {
			name := strings.Join(args, " ")
			js := queenctl(t, b.env, append(args, "-o", "json")...)
			nd := queenctl(t, b.env, append(args, "-o", "ndjson")...)
			ym := queenctl(t, b.env, append(args, "-o", "yaml")...)
			want := exitOK
			if args[0] == "lag" && len(args) > 1 {
				want = exitFailure // over the bound: the output is printed all the same
			}
			for _, r := range []result{js, nd, ym} {
				require.Equal(t, want, r.code, "%s: %s", name, r.stderr)
			}
			if args[0] == "tail" { // a stream: NDJSON either way, a YAML document per message
				lines := ndjsonLines(t, js.stdout)
				assert.Equal(t, lines, ndjsonLines(t, nd.stdout), name)
				assert.Equal(t, lines, decodeYAML(t, ym.stdout), name)
				assert.Len(t, lines, 4, name)
				continue
			}
			whole := decodeJSON(t, js.stdout)
			docs := decodeYAML(t, ym.stdout)
			require.Len(t, docs, 1, name)
			assert.Equal(t, whole, docs[0], "%s: the YAML\n%s", name, ym.stdout)

			lines := ndjsonLines(t, nd.stdout)
			switch w := whole.(type) {
			case []any:
				assert.Equal(t, w, lines, name)
			case map[string]any:
				if args[0] == "dlq" && args[1] == "list" {
					assert.Equal(t, w["deadLetters"], any(lines), name)
				} else {
					assert.Equal(t, []any{w}, lines, name)
				}
			}
		}
	})
}

// completion bash, zsh and fish print the script for each shell.
func TestCompletionScripts(t *testing.T) {
	t.Parallel()
	for shell, marker := range map[string]string{"bash": "__start_queenctl", "zsh": "#compdef queenctl", "fish": "complete -c queenctl"} {
		r := queenctl(t, nil, "completion", shell)
		assert.Equal(t, exitOK, r.code, r.stderr)
		assert.Contains(t, r.stdout, marker, shell)
		r = queenctl(t, nil, "completion", shell, "--help")
		assert.Equal(t, exitOK, r.code, r.stderr)
		assert.Contains(t, r.stdout, "Usage: queenctl completion "+shell)
	}
	r := queenctl(t, nil, "--help")
	assert.Contains(t, r.stdout, "completion bash|zsh|fish")
}

// Completion asks the broker for queue and group names where a command takes one, and
// completes flags' fixed values; an unreachable broker completes nothing, at once.
func TestCompletionOfNames(t *testing.T) {
	t.Parallel()
	b := lagBroker(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"queue", "show", ""}, "orders\nother\n"},
		{[]string{"queue", "show", "or"}, "orders\n"},
		{[]string{"queue", "show", "orders", ""}, ""},
		{[]string{"tail", "o"}, "orders\nother\n"},
		{[]string{"dlq", "list", "--queue", ""}, "orders\nother\n"},
		{[]string{"group", "show", ""}, "billing\n"},
		{[]string{"lag", "--group", "b"}, "billing\n"},
		{[]string{"seek", "--group", "billing", "--queue", "ot"}, "other\n"},
		{[]string{"-o", ""}, "table\njson\nndjson\nyaml\n"},
	} {
		r := queenctl(t, b.env, append([]string{"__complete"}, tc.args...)...)
		require.Equal(t, exitOK, r.code, "%v: %s", tc.args, r.stderr)
		assert.Equal(t, tc.want+":4\n", r.stdout, tc.args)
	}
	start := time.Now()
	r := queenctl(t, map[string]string{"QUEEN_URL": testutil.RefusedURL}, "__complete", "queue", "show", "")
	assert.Equal(t, exitOK, r.code)
	assert.Equal(t, ":4\n", r.stdout)
	assert.Less(t, time.Since(start), completionTimeout+time.Second)
}

// A shell's completion runs queenctl with __complete: the script and the binary agree on it.
func TestCompletionScriptCallsTheCompleteCommand(t *testing.T) {
	t.Parallel()
	var stdout bytes.Buffer
	code := run(context.Background(), []string{"completion", "bash"}, nil, &stdout, io.Discard)
	require.Equal(t, exitOK, code)
	assert.Contains(t, stdout.String(), "__complete")
}
