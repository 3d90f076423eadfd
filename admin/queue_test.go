package admin_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/admin"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
)

// Configure applies the options and echoes what the broker applied; configuring again
// replaces, so what is left out takes the broker's defaults again. A 0.15 broker files dead
// letters whatever deadLetterQueue says, and defaults the lease to 300 s.
func TestConfigureAppliesEchoesAndReplacesOptions(t *testing.T) {
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

// A zero LeaseTime, a nil RetryLimit and a nil DeadLetterQueue leave the option to the broker:
// it is not sent. new(0) and new(false) mean something and are sent as such.
func TestConfigureSendsOnlyTheOptionsSet(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		o    admin.QueueOptions
		want string
	}{
		{"defaults", admin.QueueOptions{}, `{"queue":"orders","options":{}}`},
		{"zero values that mean something", admin.QueueOptions{RetryLimit: new(0), DeadLetterQueue: new(false)},
			`{"queue":"orders","options":{"retryLimit":0,"deadLetterQueue":false}}`},
		{"every option", admin.QueueOptions{LeaseTime: 90 * time.Second, RetryLimit: new(5), DeadLetterQueue: new(true),
			Namespace: "shop", Task: "bill"},
			`{"queue":"orders","namespace":"shop","task":"bill","options":{"leaseTime":90,"retryLimit":5,"deadLetterQueue":true}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, mt := mockAdmin(t)
			spy := &testutil.Spy{}
			mt.RegisterResponder("POST", broker+"/api/v1/configure", spy.Respond(200,
				`{"configured":true,"queue":"orders","queueId":"qid","partitionId":"pid","namespace":"","task":"","options":{"leaseTime":60,"retryLimit":3,"deadLetterQueue":true}}`))
			require.NoError(t, a.ConfigureQueue(context.Background(), "orders", tc.o))
			assert.JSONEq(t, tc.want, string(spy.Only(t).Body))
		})
	}
}

// A 0.15 broker echoes its whole option set: the configuration says it ignores
// deadLetterQueue, and the lease time it defaults to.
func TestConfigureDecodesA015Answer(t *testing.T) {
	t.Parallel()
	t.Run("a lease time given", func(t *testing.T) {
		t.Parallel()
		a, mt := mockAdmin(t)
		spy := &testutil.Spy{}
		mt.RegisterResponder("POST", broker+"/api/v1/configure", spy.Respond(200, capturedConfigureLease2))

		cfg, err := a.Configure(context.Background(), "smoke-expiry", admin.QueueOptions{LeaseTime: 2 * time.Second, RetryLimit: new(3)})
		require.NoError(t, err)
		assert.Equal(t, `{"queue":"smoke-expiry","options":{"leaseTime":2,"retryLimit":3}}`, string(spy.Only(t).Body))
		assert.Equal(t, admin.QueueConfig{
			Queue:                  "smoke-expiry",
			QueueID:                "ee2f7973-47a1-469b-a45a-c2c19cdf6771",
			PartitionID:            "dd2c5c1f-d21d-45e5-bfda-4fae8eb77fc2",
			LeaseTime:              2 * time.Second,
			RetryLimit:             3,
			DeadLetterQueueIgnored: true, // 0.15 files dead letters whatever deadLetterQueue says
		}, cfg)
	})
	t.Run("no lease time given", func(t *testing.T) {
		t.Parallel()
		a, mt := mockAdmin(t)
		spy := &testutil.Spy{}
		mt.RegisterResponder("POST", broker+"/api/v1/configure", spy.Respond(200, capturedConfigureNoRetries))

		cfg, err := a.Configure(context.Background(), "smoke-qdlq", admin.QueueOptions{RetryLimit: new(0), DeadLetterQueue: new(true)})
		require.NoError(t, err)
		assert.Equal(t, `{"queue":"smoke-qdlq","options":{"retryLimit":0,"deadLetterQueue":true}}`, string(spy.Only(t).Body))
		assert.Equal(t, 300*time.Second, cfg.LeaseTime, "0.15 defaults leaseTime to 300")
		assert.Equal(t, 0, cfg.RetryLimit)
		assert.True(t, cfg.DeadLetterQueue)
	})
}

// With RetryLimit new(0), the first failure files the message as a dead letter.
func TestRetryLimitZeroFilesTheFirstFailure(t *testing.T) {
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

// DeleteQueue removes the queue's messages, cursors and dead letters; deleting it again is
// ErrNotFound.
func TestDeleteQueueRemovesEverything(t *testing.T) {
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

// A 0.15 broker answers the deletion of an unknown queue with a 200 that deleted nothing
// (existed false): the SDK says not found, naming the queue.
func TestDeletingAnUnknownQueueOn015IsNotFound(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("DELETE", broker+"/api/v1/resources/queues/spec-insp-115691",
		httpmock.NewStringResponder(200, `{"deleted":true,"existed":false,"queue":"spec-insp-115691"}`))

	err := a.DeleteQueue(context.Background(), "spec-insp-115691")
	require.ErrorIs(t, err, admin.ErrNotFound)
	assert.Contains(t, err.Error(), `"spec-insp-115691"`)
}
