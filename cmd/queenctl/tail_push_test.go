package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lines is a stdout that tells, line by line, what a running command printed.
type lines struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	seen chan string
}

func newLines() *lines { return &lines{seen: make(chan string, 100)} }

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	for {
		i := bytes.IndexByte(l.buf.Bytes(), '\n')
		if i < 0 {
			return len(p), nil
		}
		l.seen <- string(l.buf.Next(i + 1))
	}
}

// background runs queenctl until cancel; done yields its exit status.
func background(t *testing.T, env map[string]string, args ...string) (out *lines, stderr *syncBuffer, cancel func(), done <-chan int) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	out, stderr = newLines(), &syncBuffer{}
	codes := make(chan int, 1)
	go func() {
		codes <- runWith(ctx, args, func(k string) string { return env[k] }, strings.NewReader(""), out, stderr)
	}()
	t.Cleanup(stop)
	return out, stderr, stop, codes
}

func TestTailFollowPeeksUntilInterrupted(t *testing.T) {
	t.Parallel()
	b := newBroker(t, "")
	b.push(t, "orders", 1, 2)
	out, _, cancel, done := background(t, b.env, "tail", "orders", "-f", "--json", "--interval", "5ms")
	var got []messageLine
	for len(got) < 2 {
		var l messageLine
		require.NoError(t, json.Unmarshal([]byte(<-out.seen), &l))
		got = append(got, l)
	}
	b.push(t, "orders", 3)
	var l messageLine
	require.NoError(t, json.Unmarshal([]byte(<-out.seen), &l))
	got = append(got, l)
	cancel()
	assert.Equal(t, exitOK, <-done)
	assert.Equal(t, []int64{0, 1, 2}, []int64{got[0].Offset, got[1].Offset, got[2].Offset}, "oldest first, then as they arrive")
	assert.JSONEq(t, `{"n":3}`, string(got[2].Data))
	msgs := b.pop(t, "orders", "fresh")
	require.Len(t, msgs, 3)
	assert.Equal(t, 1, msgs[0].DeliveryAttempt, "a peek delivers nothing")
}

func TestTailAsGroupConsumesAndSaysSo(t *testing.T) {
	t.Parallel()
	b := newBroker(t, "")
	b.push(t, "orders", 1)
	r := queenctl(t, b.env, "tail", "orders", "--group", "audit")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stderr, "as consumer group audit")
	assert.Empty(t, r.stdout, "a new group starts after what is stored")

	out, _, cancel, done := background(t, b.env, "tail", "orders", "--group", "audit", "-f")
	b.push(t, "orders", 2, 3)
	first, second := <-out.seen, <-out.seen
	cancel()
	assert.Equal(t, exitOK, <-done)
	assert.Contains(t, first, `{"n":2}`)
	assert.Contains(t, second, `{"n":3}`)
	g, err := b.adminClient().ConsumerGroup(context.Background(), "audit")
	require.NoError(t, err)
	assert.Equal(t, int64(0), g.Queues[0].Lag, "what it printed is acked")
}

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

	msgs, err := b.adminClient().Messages(context.Background(), adminPeek("orders"))
	require.NoError(t, err)
	assert.Len(t, msgs, 4)

	for _, bad := range [][]string{{"push"}, {"push", "orders"}, {"push", "orders", "--data", "{nope"},
		{"push", "orders", "--transaction-id", "x", "--data", "1 2"}} {
		assert.Equal(t, exitUsage, queenctl(t, b.env, bad...).code, bad)
	}
}

// syncBuffer is a bytes.Buffer safe for a command writing while a test reads.
type syncBuffer struct {
	mu sync.Mutex
	bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Buffer.Write(p)
}

// tail -f ends on SIGINT, as a person's Ctrl-C, and exits 0.
func TestTailFollowStopsOnInterrupt(t *testing.T) {
	t.Parallel()
	b := newBroker(t, "")
	b.push(t, "orders", 1)
	out, stderr := newLines(), &syncBuffer{}
	codes := make(chan int, 1)
	go func() {
		codes <- runMain([]string{"--server", b.srv.URL(), "tail", "orders", "-f", "--interval", "5ms"}, strings.NewReader(""), out, stderr)
	}()
	assert.Contains(t, <-out.seen, `{"n":1}`)
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGINT))
	assert.Equal(t, exitOK, <-codes, stderr.String())
}
