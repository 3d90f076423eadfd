package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/queentest"
)

// TestMain fails the package if a command leaves a goroutine behind.
func TestMain(m *testing.M) {
	testmode.Main(m)
}

// result is one finished queenctl invocation.
type result struct {
	code           int
	stdout, stderr string
}

// queenctl runs the command in-process with env as its environment.
func queenctl(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, func(k string) string { return env[k] }, &stdout, &stderr)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// terminal is a stdin that stands for a person at a terminal.
type terminal struct{ strings.Reader }

func (*terminal) IsTerminal() bool { return true }

func atTerminal(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := runWith(context.Background(), args, func(k string) string { return env[k] }, &terminal{}, &stdout, &stderr)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// broker is a reference broker on a manual clock, with a client for setting up state.
type broker struct {
	srv    *queentest.Server
	client *queen.Client
	env    map[string]string // QUEEN_URL pointing at srv
}

// newBroker starts a 2.0 broker; a non-empty token makes it require Bearer auth.
func newBroker(t *testing.T, token string) broker {
	t.Helper()
	return newBrokerIn(t, testmode.Modes[0], token)
}

// newBroker015 is newBroker with the reference broker answering as a 0.15 broker does.
func newBroker015(t *testing.T) broker {
	t.Helper()
	return newBrokerIn(t, testmode.Modes[1], "")
}

func newBrokerIn(t *testing.T, m testmode.Mode, token string) broker {
	t.Helper()
	opts := []queentest.Option{queentest.WithManualClock()}
	var copts []queen.Option
	if token != "" {
		opts = append(opts, queentest.WithToken(token))
		copts = append(copts, queen.WithToken(token))
	}
	srv := m.Server(t, opts...)
	client, err := queen.New(srv.URL(), copts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close() })
	return broker{srv: srv, client: client, env: map[string]string{"QUEEN_URL": srv.URL()}}
}

func (b broker) push(t *testing.T, queue string, values ...int) {
	t.Helper()
	items := make([]queen.PushItem, len(values))
	for i, v := range values {
		items[i] = queen.PushItem{Data: map[string]int{"n": v}}
	}
	_, err := b.client.Queue(queue).Push(context.Background(), items...)
	require.NoError(t, err)
}

func (b broker) pop(t *testing.T, queue, group string) []*queen.Message {
	t.Helper()
	msgs, err := b.client.Queue(queue).Group(group).SubscriptionMode(queen.SubscribeAll).Batch(100).Pop(context.Background())
	require.NoError(t, err)
	return msgs
}

// fileDeadLetters pushes one message per value and dead-letters each for group.
func (b broker) fileDeadLetters(t *testing.T, queue, group string, values ...int) {
	t.Helper()
	b.push(t, queue, values...)
	for range values {
		msgs, err := b.client.Queue(queue).Group(group).SubscriptionMode(queen.SubscribeAll).Batch(1).Pop(context.Background())
		require.NoError(t, err)
		require.Len(t, msgs, 1)
		require.NoError(t, msgs[0].DeadLetter(context.Background(), fmt.Errorf("poison %s", msgs[0].Data)))
	}
}

// newestDeadLetter is the id of queue's newest dead letter, read with package admin.
func (b broker) newestDeadLetter(t *testing.T, queue string) string {
	t.Helper()
	page, err := b.adminClient().DeadLetters(context.Background(), admin.DLQQuery{Queue: queue})
	require.NoError(t, err)
	require.NotEmpty(t, page.DeadLetters)
	return page.DeadLetters[0].ID
}

func (b broker) adminClient() *admin.Admin { return admin.New(b.client) }

// deadLetterIDs are the ids dlq list prints for queue.
func deadLetterIDs(t *testing.T, b broker, queue string) []string {
	t.Helper()
	r := queenctl(t, b.env, "dlq", "list", "--queue", queue, "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	var page admin.DLQPage
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &page))
	ids := make([]string, len(page.DeadLetters))
	for i, dl := range page.DeadLetters {
		ids[i] = dl.ID
	}
	return ids
}

// lagBroker: queue orders with 3 messages and queue other with 1; group billing finished the
// first of orders and is 2 behind; 90 s later.
func lagBroker(t *testing.T) broker {
	t.Helper()
	b := newBroker(t, "")
	b.push(t, "orders", 1, 2, 3)
	b.push(t, "other", 9)
	msgs, err := b.client.Queue("orders").Group("billing").SubscriptionMode(queen.SubscribeAll).Batch(1).Pop(context.Background())
	require.NoError(t, err)
	require.NoError(t, msgs[0].Ack(context.Background()))
	b.srv.Advance(90 * time.Second)
	return b
}

func fields(line string) []string { return strings.Fields(line) }
