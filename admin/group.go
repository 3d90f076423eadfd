package admin

import (
	"context"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/wire"
)

// DeleteConsumerGroup forgets the group on every queue: its cursors, live leases (their lease
// ids become unknown), retry counters and stored start, so its next pop starts afresh. Dead
// letters it filed stay. A group with no state gives ErrNotFound, unless the request had to be
// sent again after its answer was lost (queen.ErrOutcomeUnknown: the first may have deleted it).
func (a *Admin) DeleteConsumerGroup(ctx context.Context, group string) error {
	if err := validName("group", group); err != nil {
		return err
	}
	return a.deleteGroup(ctx, at(route.DeleteGroup, group), "consumer group "+quote(group))
}

// DeleteConsumerGroupOnQueue is DeleteConsumerGroup on one queue only.
func (a *Admin) DeleteConsumerGroupOnQueue(ctx context.Context, group, queue string) error {
	if err := validName("group", group); err != nil {
		return err
	}
	if err := validName("queue", queue); err != nil {
		return err
	}
	return a.deleteGroup(ctx, at(route.DeleteGroupOnQueue, group, queue), "consumer group "+quote(group)+" on queue "+quote(queue))
}

// deleteGroup sends a group deletion. A 0.15 broker answers an unknown group with a success
// that deleted nothing, so no deleted partition means not found on every broker.
func (a *Admin) deleteGroup(ctx context.Context, e endpoint, what string) error {
	var answer wire.DeleteGroupAnswer
	ctx, sends := countSends(ctx)
	if err := a.call(ctx, e, nil, nil, &answer); err != nil {
		return notFound(err, what)
	}
	if answer.DeletedPartitions != nil && *answer.DeletedPartitions == 0 {
		return sends.deletedNothing(what, "deletedPartitions 0")
	}
	return nil
}
