package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/admin"
)

// push sends the payloads of stdin (NDJSON or one value) or --data; a transaction id pushed
// again is a duplicate.
func TestPushFromStdinAndData(t *testing.T) {
	t.Parallel()
	b := newBroker(t, "")
	var stdout, stderr bytes.Buffer
	code := runWith(context.Background(), []string{"push", "orders", "--partition", "p1", "--json"}, func(k string) string { return b.env[k] },
		strings.NewReader("{\"n\":1}\n{\"n\":2}\n\"three\"\n"), &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	var rows []pushRow
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &rows))
	require.Len(t, rows, 3)
	assert.Equal(t, []int64{0, 1, 2}, []int64{rows[0].Offset, rows[1].Offset, rows[2].Offset})
	for _, r := range rows {
		assert.Equal(t, "queued", r.Status)
	}

	stdout.Reset()
	code = runWith(context.Background(), []string{"push", "orders", "--transaction-id", "t1"}, func(k string) string { return b.env[k] },
		strings.NewReader("{\n  \"multi\": \"line\"\n}\n"), &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	assert.Contains(t, stdout.String(), "t1")
	r := queenctl(t, b.env, "push", "orders", "--transaction-id", "t1", "--data", `{"again":true}`)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "duplicate")

	msgs, err := b.adminClient().Messages(context.Background(), admin.MessageQuery{Queue: "orders"})
	require.NoError(t, err)
	assert.Len(t, msgs, 4)

	for _, bad := range [][]string{{"push"}, {"push", "orders"}, {"push", "orders", "--data", "{nope"},
		{"push", "orders", "--transaction-id", "x", "--data", "1 2"}} {
		assert.Equal(t, exitUsage, queenctl(t, b.env, bad...).code, bad)
	}
}
