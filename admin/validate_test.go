package admin_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
)

// Every bad argument is refused before anything is sent, naming the field and the value.
func TestBadInputIsRefusedLocally(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []struct {
		name string
		call func(a *admin.Admin) error
		want []string
	}{
		{"seek empty group", func(a *admin.Admin) error { return a.SeekConsumerGroup(ctx, "", "q", admin.SeekToEnd()) }, []string{`group=""`}},
		{"seek empty queue", func(a *admin.Admin) error { return a.SeekConsumerGroup(ctx, "g", "", admin.SeekToEnd()) }, []string{`queue=""`}},
		{"seek zero time", func(a *admin.Admin) error { return a.SeekConsumerGroup(ctx, "g", "q", admin.SeekToTime(time.Time{})) }, []string{"to=", "zero time"}},
		{"seek zero target", func(a *admin.Admin) error { return a.SeekConsumerGroup(ctx, "g", "q", admin.SeekTarget{}) }, []string{"to=none"}},
		{"dlq negative limit", func(a *admin.Admin) error { _, err := a.DeadLetters(ctx, admin.DLQQuery{Limit: -1}); return err }, []string{"Limit=-1"}},
		{"dlq negative offset", func(a *admin.Admin) error { _, err := a.DeadLetters(ctx, admin.DLQQuery{Offset: -3}); return err }, []string{"Offset=-3"}},
		{"dlq to before from", func(a *admin.Admin) error {
			_, err := a.DeadLetters(ctx, admin.DLQQuery{From: time.Unix(100, 0), To: time.Unix(50, 0)})
			return err
		}, []string{`To="1970-01-01T00:00:50Z"`, "before From"}},
		{"replay empty id", func(a *admin.Admin) error { _, err := a.ReplayDeadLetter(ctx, ""); return err }, []string{`id=""`}},
		{"delete empty id", func(a *admin.Admin) error { return a.DeleteDeadLetter(ctx, "") }, []string{`id=""`}},
		{"configure empty queue", func(a *admin.Admin) error { return a.ConfigureQueue(ctx, "", admin.QueueOptions{}) }, []string{`queue=""`}},
		{"configure negative lease", func(a *admin.Admin) error {
			return a.ConfigureQueue(ctx, "q", admin.QueueOptions{LeaseTime: -time.Second})
		}, []string{"LeaseTime=-1s", "negative"}},
		{"configure sub-second lease", func(a *admin.Admin) error {
			return a.ConfigureQueue(ctx, "q", admin.QueueOptions{LeaseTime: 500 * time.Millisecond})
		}, []string{"LeaseTime=500ms"}},
		{"configure fractional lease", func(a *admin.Admin) error {
			return a.ConfigureQueue(ctx, "q", admin.QueueOptions{LeaseTime: 1500 * time.Millisecond})
		}, []string{"LeaseTime=1.5s", "whole number of seconds"}},
		{"configure negative retry limit", func(a *admin.Admin) error {
			return a.ConfigureQueue(ctx, "q", admin.QueueOptions{RetryLimit: new(-1)})
		}, []string{"RetryLimit=-1"}},
		{"configure fractional retry delay", func(a *admin.Admin) error {
			return a.ConfigureQueue(ctx, "q", admin.QueueOptions{RetryDelay: 1500 * time.Microsecond})
		}, []string{"RetryDelay=1.5ms"}},
		{"delete queue empty", func(a *admin.Admin) error { return a.DeleteQueue(ctx, "") }, []string{`queue=""`}},
		{"delete group empty", func(a *admin.Admin) error { return a.DeleteConsumerGroup(ctx, "") }, []string{`group=""`}},
		{"delete group on empty queue", func(a *admin.Admin) error { return a.DeleteConsumerGroupOnQueue(ctx, "g", "") }, []string{`queue=""`}},
		{"queue info empty", func(a *admin.Admin) error { _, err := a.QueueInfo(ctx, ""); return err }, []string{`queue=""`}},
		{"queue info dot-dot", func(a *admin.Admin) error { _, err := a.QueueInfo(ctx, ".."); return err }, []string{`queue=".."`}},
		{"group info empty", func(a *admin.Admin) error { _, err := a.ConsumerGroup(ctx, ""); return err }, []string{`group=""`}},
		{"lagging negative", func(a *admin.Admin) error { _, err := a.Lagging(ctx, admin.LagQuery{MinLag: -time.Second}); return err }, []string{"MinLag=-1s"}},
		{"lagging fractional", func(a *admin.Admin) error {
			_, err := a.Lagging(ctx, admin.LagQuery{MinLag: 1500 * time.Millisecond})
			return err
		}, []string{"MinLag=1.5s", "whole"}},
		{"messages without a queue", func(a *admin.Admin) error { _, err := a.Messages(ctx, admin.MessageQuery{}); return err }, []string{`Queue=""`}},
		{"messages limit too high", func(a *admin.Admin) error {
			_, err := a.Messages(ctx, admin.MessageQuery{Queue: "q", Limit: 1001})
			return err
		}, []string{"Limit=1001"}},
		{"messages negative offset", func(a *admin.Admin) error {
			_, err := a.Messages(ctx, admin.MessageQuery{Queue: "q", Offset: -1})
			return err
		}, []string{"Offset=-1"}},
		{"messages unknown status", func(a *admin.Admin) error {
			_, err := a.Messages(ctx, admin.MessageQuery{Queue: "q", Status: "failed"})
			return err
		}, []string{`Status="failed"`}},
		{"messages from an offset without a partition", func(a *admin.Admin) error {
			_, err := a.Messages(ctx, admin.MessageQuery{Queue: "q", FromOffset: new(int64(1))})
			return err
		}, []string{"FromOffset=1", "needs Partition"}},
		{"messages from a negative offset", func(a *admin.Admin) error {
			_, err := a.Messages(ctx, admin.MessageQuery{Queue: "q", Partition: "p", FromOffset: new(int64(-1))})
			return err
		}, []string{"FromOffset=-1"}},
		{"message empty partition id", func(a *admin.Admin) error { _, err := a.Message(ctx, "", "tx"); return err }, []string{`partitionID=""`}},
		{"message empty transaction id", func(a *admin.Admin) error { _, err := a.Message(ctx, "p", ""); return err }, []string{`transactionID=""`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, mt := mockAdmin(t)
			err := tc.call(a)
			require.ErrorIs(t, err, queen.ErrInvalidOption)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Equal(t, 0, mt.GetTotalCallCount(), "nothing is sent")
		})
	}
}
