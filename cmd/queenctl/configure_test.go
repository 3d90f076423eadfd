package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
)

func partitionNamesOf(t *testing.T, b broker, queue string) []string {
	t.Helper()
	info, err := b.adminClient().QueueInfo(context.Background(), queue)
	require.NoError(t, err)
	var names []string
	for _, p := range info.Partitions {
		names = append(names, p.Name)
	}
	return names
}

// queue configure on an existing queue with nothing to change writes nothing, so the broker
// adds no Default partition to a queue that has none; a change says that the broker adds it,
// and a dry run that it would.
func TestQueueConfigureAddsNoDefaultPartitionWhenNothingChanges(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		b := newBrokerIn(t, m, "")
		_, err := b.client.Queue("orders").Partition("eu-west").Push(context.Background(), queen.PushItem{Data: 1})
		require.NoError(t, err)

		r := queenctl(t, b.env, "queue", "configure", "orders")
		require.Equal(t, exitOK, r.code, r.stderr)
		assert.Contains(t, r.stdout, "queue orders: nothing to change")
		assert.Equal(t, []string{"eu-west"}, partitionNamesOf(t, b, "orders"))

		r = queenctl(t, b.env, "queue", "configure", "orders", "--retry-limit", "7", "--dry-run")
		require.Equal(t, exitOK, r.code, r.stderr)
		assert.Contains(t, r.stdout, "the broker would also add an empty partition Default")
		assert.Equal(t, []string{"eu-west"}, partitionNamesOf(t, b, "orders"))

		r = queenctl(t, b.env, "queue", "configure", "orders", "--retry-limit", "7")
		require.Equal(t, exitOK, r.code, r.stderr)
		assert.Contains(t, r.stdout, "changed retry limit: 3 -> 7")
		assert.Contains(t, r.stdout, "the broker added an empty partition Default")
		assert.ElementsMatch(t, []string{"eu-west", "Default"}, partitionNamesOf(t, b, "orders"))

		r = queenctl(t, b.env, "queue", "configure", "orders", "--retry-limit", "8")
		require.Equal(t, exitOK, r.code, r.stderr)
		assert.NotContains(t, r.stdout, "partition Default", "it has one now")
	})
}

// queue configure changes only the options given: the others, labels included, keep their
// stored values, on both generations.
func TestQueueConfigureKeepsWhatItIsNotTold(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		b := newBrokerIn(t, m, "")
		r := queenctl(t, b.env, "queue", "configure", "orders", "--lease-time", "30s", "--retry-limit", "5", "--namespace", "shop", "--task", "bill")
		require.Equal(t, exitOK, r.code, r.stderr)

		r = queenctl(t, b.env, "queue", "configure", "orders", "--retry-limit", "9")
		require.Equal(t, exitOK, r.code, r.stderr)
		info, err := b.adminClient().QueueInfo(context.Background(), "orders")
		require.NoError(t, err)
		assert.Equal(t, 9, info.Config.RetryLimit)
		assert.Equal(t, "30s", info.Config.LeaseTime.String(), "the lease time stays")
		assert.Equal(t, "shop", info.Namespace, "the labels stay")
		assert.Equal(t, "bill", info.Task)

		r = queenctl(t, b.env, "queue", "configure", "orders", "--task", "")
		require.Equal(t, exitOK, r.code, r.stderr)
		assert.Contains(t, r.stdout, "changed task: bill -> -")
		info, err = b.adminClient().QueueInfo(context.Background(), "orders")
		require.NoError(t, err)
		assert.Equal(t, "shop", info.Namespace)
		assert.Empty(t, info.Task, "a label given empty is cleared")
	})
}
