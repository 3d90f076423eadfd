package admin_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/admin"
	"github.com/queenmq/queen-go/internal/testmode"
)

func TestConfigure_R5_AppliesAndEchoesOptions(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		f := newFixtureIn(t, mode)
		cfg, err := f.admin.Configure(context.Background(), "orders", admin.QueueOptions{
			LeaseTime: 30 * time.Second, RetryLimit: new(5), DeadLetterQueue: new(false), Namespace: "shop", Task: "bill",
		})
		require.NoError(t, err)
		assert.Equal(t, "orders", cfg.Queue)
		assert.NotEmpty(t, cfg.QueueID)
		assert.NotEmpty(t, cfg.PartitionID)
		assert.Equal(t, "shop", cfg.Namespace)
		assert.Equal(t, "bill", cfg.Task)
		assert.Equal(t, 30*time.Second, cfg.LeaseTime)
		assert.Equal(t, 5, cfg.RetryLimit)
		assert.False(t, cfg.DeadLetterQueue)
		assert.Equal(t, mode.V015, cfg.DeadLetterQueueIgnored, "0.15 files dead letters whatever it echoes")

		// Configure replaces: what is left out takes the defaults again.
		cfg, err = f.admin.Configure(context.Background(), "orders", admin.QueueOptions{})
		require.NoError(t, err)
		assert.Equal(t, 3, cfg.RetryLimit)
		assert.Empty(t, cfg.Namespace)
		if mode.V015 { // 0.15's defaults: a 300 s lease, and deadLetterQueue echoed false (ignored)
			assert.Equal(t, 300*time.Second, cfg.LeaseTime)
			assert.False(t, cfg.DeadLetterQueue)
			return
		}
		assert.Equal(t, 60*time.Second, cfg.LeaseTime)
		assert.True(t, cfg.DeadLetterQueue)
	})
}

func TestConfigureQueue_R91_RetryLimitZeroFilesTheFirstFailure(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		f := newFixtureIn(t, mode)
		ctx := context.Background()
		require.NoError(t, f.admin.ConfigureQueue(ctx, "orders", admin.QueueOptions{RetryLimit: new(0)}))
		f.push(t, "orders", "", 1)
		msgs := f.pop(t, "orders", "", 1)
		require.Len(t, msgs, 1)
		require.NoError(t, msgs[0].Nack(ctx, errors.New("boom")))

		page, err := f.admin.DeadLetters(ctx, admin.DLQQuery{Queue: "orders"})
		require.NoError(t, err)
		require.Len(t, page.DeadLetters, 1)
		assert.Equal(t, unknownOn015(mode, 1), page.Total)
		assert.Equal(t, "boom", page.DeadLetters[0].Error)
		assert.Equal(t, 0, page.DeadLetters[0].RetryCount)
	})
}

func TestDeleteQueue_R141_RemovesEverything(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		f := newFixtureIn(t, mode)
		ctx := context.Background()
		f.fileDeadLetters(t, "orders", "billing", 1)
		f.push(t, "orders", "", 2)

		require.NoError(t, f.admin.DeleteQueue(ctx, "orders"))

		page, err := f.admin.DeadLetters(ctx, admin.DLQQuery{Queue: "orders"})
		require.NoError(t, err)
		assert.Equal(t, unknownOn015(mode, 0), page.Total)
		assert.Empty(t, page.DeadLetters)
		assert.Empty(t, f.pop(t, "orders", "billing", 10))
		require.ErrorIs(t, f.admin.DeleteQueue(ctx, "orders"), admin.ErrNotFound)
	})
}

func TestDeleteConsumerGroup_R143_GroupStartsAfresh(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		f := newFixtureIn(t, mode)
		ctx := context.Background()
		f.push(t, "orders", "", 1, 2)
		f.push(t, "invoices", "", 3)
		f.ackAll(t, f.pop(t, "orders", "billing", 10))
		f.ackAll(t, f.pop(t, "invoices", "billing", 10))

		require.NoError(t, f.admin.DeleteConsumerGroupOnQueue(ctx, "billing", "invoices"))
		assert.Equal(t, []int{3}, values(t, f.pop(t, "invoices", "billing", 10)))
		assert.Empty(t, f.pop(t, "orders", "billing", 10), "other queues keep the group's cursor")

		require.NoError(t, f.admin.DeleteConsumerGroup(ctx, "billing"))
		assert.Equal(t, []int{1, 2}, values(t, f.pop(t, "orders", "billing", 10)))

		require.ErrorIs(t, f.admin.DeleteConsumerGroup(ctx, "nobody"), admin.ErrNotFound)
	})
}
