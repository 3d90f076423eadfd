package admin

import (
	"context"
	"net/url"
)

// DeleteConsumerGroup forgets the group on every queue: its cursors, live leases (their lease
// ids become unknown), retry counters and stored start, so its next pop starts afresh. Dead
// letters it filed stay. A group with no state gives ErrNotFound.
func (a *Admin) DeleteConsumerGroup(ctx context.Context, group string) error {
	if err := validName("group", group); err != nil {
		return err
	}
	path := "/api/v1/consumer-groups/" + url.PathEscape(group)
	if err := a.call(ctx, "DELETE", path, nil, nil, nil); err != nil {
		return notFound(err, "consumer group "+quote(group))
	}
	return nil
}

// DeleteConsumerGroupOnQueue is DeleteConsumerGroup on one queue only.
func (a *Admin) DeleteConsumerGroupOnQueue(ctx context.Context, group, queue string) error {
	if err := validName("group", group); err != nil {
		return err
	}
	if err := validName("queue", queue); err != nil {
		return err
	}
	path := "/api/v1/consumer-groups/" + url.PathEscape(group) + "/queues/" + url.PathEscape(queue)
	if err := a.call(ctx, "DELETE", path, nil, nil, nil); err != nil {
		return notFound(err, "consumer group "+quote(group)+" on queue "+quote(queue))
	}
	return nil
}
