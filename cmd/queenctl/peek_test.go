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

	"github.com/queenmq/queen-go/internal/testutil"
)

// messages peek shows stored messages newest first with their payloads, and leases nothing.
func TestMessagesPeekLeasesNothing(t *testing.T) {
	t.Parallel()
	b := lagBroker(t)
	r := queenctl(t, b.env, "messages", "peek", "orders", "--limit", "2")
	require.Equal(t, exitOK, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 3)
	assert.Equal(t, []string{"Default", "2"}, fields(lines[1])[1:3])
	assert.Contains(t, lines[1], `{"n":3}`)

	r = queenctl(t, b.env, "messages", "peek", "orders", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	var out []messageLine
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	require.Len(t, out, 3)
	assert.JSONEq(t, `{"n":1}`, string(out[2].Data))
	assert.Equal(t, "pending", out[0].Status)

	msgs := b.pop(t, "orders", "fresh")
	require.Len(t, msgs, 3)
	assert.Equal(t, 1, msgs[0].DeliveryAttempt, "the peek delivered nothing")

	for _, bad := range [][]string{{"messages", "peek"}, {"messages", "peek", "orders", "--limit", "0"}, {"messages", "nope"}} {
		assert.Equal(t, exitUsage, queenctl(t, b.env, bad...).code, bad)
	}
	r = queenctl(t, b.env, "messages", "peek", "nope")
	assert.Equal(t, exitFailure, r.code)
}

// dlq show prints one dead letter with its error and payload.
func TestDLQShowPrintsOneDeadLetterWithItsPayload(t *testing.T) {
	t.Parallel()
	b := newBroker(t, "")
	b.fileDeadLetters(t, "orders", "billing", 7)
	id := b.newestDeadLetter(t, "orders")
	r := queenctl(t, b.env, "dlq", "show", id)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "poison")
	assert.Contains(t, r.stdout, `{"n":7}`)
	r = queenctl(t, b.env, "dlq", "show", id, "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, `"id": "`+id+`"`)
	r = queenctl(t, b.env, "dlq", "show", "nope")
	assert.Equal(t, exitFailure, r.code)
	assert.Equal(t, exitUsage, queenctl(t, b.env, "dlq", "show").code)
}

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
func background(t *testing.T, env map[string]string, args ...string) (out *lines, stderr *testutil.LogBuffer, cancel func(), done <-chan int) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	out, stderr = newLines(), &testutil.LogBuffer{}
	codes := make(chan int, 1)
	go func() {
		codes <- runWith(ctx, args, func(k string) string { return env[k] }, strings.NewReader(""), out, stderr)
	}()
	t.Cleanup(stop)
	return out, stderr, stop, codes
}

// tail -f peeks: it prints what is stored oldest first, then what arrives, until interrupted,
// and delivers nothing.
func TestTailFollowPeeksUntilInterrupted(t *testing.T) {
	t.Parallel()
	b := newBroker(t, "")
	b.push(t, "orders", 1, 2)
	out, _, cancel, done := background(t, b.env, "tail", "orders", "-f", "--json", "--interval", "5ms")
	var got []messageLine
	for len(got) < 2 {
		var l messageLine
		require.NoError(t, json.Unmarshal([]byte(testutil.Recv(t, out.seen, "a printed message")), &l))
		got = append(got, l)
	}
	b.push(t, "orders", 3)
	var l messageLine
	require.NoError(t, json.Unmarshal([]byte(testutil.Recv(t, out.seen, "a printed message")), &l))
	got = append(got, l)
	cancel()
	assert.Equal(t, exitOK, testutil.Recv(t, done, "tail to stop"))
	assert.Equal(t, []int64{0, 1, 2}, []int64{got[0].Offset, got[1].Offset, got[2].Offset}, "oldest first, then as they arrive")
	assert.JSONEq(t, `{"n":3}`, string(got[2].Data))
	msgs := b.pop(t, "orders", "fresh")
	require.Len(t, msgs, 3)
	assert.Equal(t, 1, msgs[0].DeliveryAttempt, "a peek delivers nothing")
}

// tail --group consumes as the group, says so, and acks what it prints; a new group starts
// after what is stored.
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
	first := testutil.Recv(t, out.seen, "the first message printed")
	second := testutil.Recv(t, out.seen, "the second message printed")
	cancel()
	assert.Equal(t, exitOK, testutil.Recv(t, done, "tail to stop"))
	assert.Contains(t, first, `{"n":2}`)
	assert.Contains(t, second, `{"n":3}`)
	g, err := b.adminClient().ConsumerGroup(context.Background(), "audit")
	require.NoError(t, err)
	assert.Equal(t, int64(0), g.Queues[0].Lag, "what it printed is acked")
}

// tail -f ends on SIGINT, as a person's Ctrl-C, and exits 0.
func TestTailFollowStopsOnInterrupt(t *testing.T) {
	t.Parallel()
	b := newBroker(t, "")
	b.push(t, "orders", 1)
	out, stderr := newLines(), &testutil.LogBuffer{}
	codes := make(chan int, 1)
	go func() {
		codes <- runMain([]string{"--server", b.srv.URL(), "tail", "orders", "-f", "--interval", "5ms"}, strings.NewReader(""), out, stderr)
	}()
	assert.Contains(t, testutil.Recv(t, out.seen, "the message printed"), `{"n":1}`)
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGINT))
	assert.Equal(t, exitOK, testutil.Recv(t, codes, "tail to stop on SIGINT"), stderr.String())
}
