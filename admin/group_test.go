package admin_test

import (
	"context"
	"testing"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/admin"
	"github.com/queenmq/queen-go/internal/testmode"
)

// A deleted group starts afresh: deleted on one queue it rereads that queue and keeps its
// cursor elsewhere; deleted everywhere it rereads everything. An unknown group is ErrNotFound.
func TestADeletedGroupStartsAfresh(t *testing.T) {
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

// A 0.15 broker's answers to group deletions that deleted something are successes.
func TestDeleteConsumerGroupDecodesA015Answer(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("DELETE", broker+"/api/v1/consumer-groups/g-new2/queues/smoke-sub", httpmock.NewStringResponder(200, capturedGroupOnQueue))
	mt.RegisterResponder("DELETE", broker+"/api/v1/consumer-groups/g-from", httpmock.NewStringResponder(200, capturedGroup))

	require.NoError(t, a.DeleteConsumerGroupOnQueue(context.Background(), "g-new2", "smoke-sub"))
	require.NoError(t, a.DeleteConsumerGroup(context.Background(), "g-from"))
	assert.Equal(t, 2, mt.GetTotalCallCount())
}

// A 0.15 broker answers the deletion of an unknown group with a 200 that deleted no partition:
// the SDK says not found, on every queue or on one.
func TestDeletingAnUnknownGroupOn015IsNotFound(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("DELETE", broker+"/api/v1/consumer-groups/spec-gC",
		httpmock.NewStringResponder(200, `{"consumerGroup":"spec-gC","deletedPartitions":0,"metadataDeleted":true,"success":true}`))
	mt.RegisterResponder("DELETE", broker+"/api/v1/consumer-groups/spec-gC/queues/q",
		httpmock.NewStringResponder(200, `{"consumerGroup":"spec-gC","deletedPartitions":0,"metadataDeleted":true,"queueName":"q","success":true}`))

	require.ErrorIs(t, a.DeleteConsumerGroup(context.Background(), "spec-gC"), admin.ErrNotFound)
	require.ErrorIs(t, a.DeleteConsumerGroupOnQueue(context.Background(), "spec-gC", "q"), admin.ErrNotFound)
}
