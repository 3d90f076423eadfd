package main

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deleteWithStdin runs queue delete orders (no --yes) reading stdin from f.
func deleteWithStdin(t *testing.T, b broker, f *os.File) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := runWith(context.Background(), []string{"queue", "delete", "orders"}, func(k string) string { return b.env[k] }, f, &stdout, &stderr)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// stdin from /dev/null is a character device, but no person types into it: a delete needs no
// --yes there, as in a cron job.
func TestDevNullIsNoTerminal(t *testing.T) {
	t.Parallel()
	b := newBroker(t, "")
	b.push(t, "orders", 1)
	null, err := os.Open(os.DevNull)
	require.NoError(t, err)
	t.Cleanup(func() { _ = null.Close() })
	r := deleteWithStdin(t, b, null)
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, "deleted queue orders\n", r.stdout)
}

// A real terminal (a pseudo-terminal here) is one: a delete typed there needs --yes.
func TestATerminalNeedsYes(t *testing.T) {
	t.Parallel()
	tty := openPTY(t)
	b := newBroker(t, "")
	b.push(t, "orders", 1)
	r := deleteWithStdin(t, b, tty)
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, "needs --yes")
	assert.True(t, isTerminalReader(tty))
	assert.True(t, isTerminal(tty), "a terminal stdout gets the progress bar")
}
