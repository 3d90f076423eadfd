package main

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
	"github.com/queenmq/queen-go/queentest"
)

// TestMain fails the package if a command leaves a goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
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

// broker is a reference broker on a manual clock, with a client for setting up state.
type broker struct {
	srv    *queentest.Server
	client *queen.Client
	env    map[string]string // QUEEN_URL pointing at srv
}

// newBroker starts a broker; a non-empty token makes it require Bearer auth.
func newBroker(t *testing.T, token string) broker {
	t.Helper()
	opts := []queentest.Option{queentest.WithManualClock()}
	var copts []queen.Option
	if token != "" {
		opts = append(opts, queentest.WithToken(token))
		copts = append(copts, queen.WithToken(token))
	}
	srv := queentest.NewServer(t, opts...)
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

func (b broker) adminClient() *admin.Admin { return admin.New(b.client) }

func adminDLQ(queue string) admin.DLQQuery { return admin.DLQQuery{Queue: queue} }

func adminPeek(queue string) admin.MessageQuery { return admin.MessageQuery{Queue: queue} }
