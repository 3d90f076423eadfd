package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/queenmq/queen-go/admin"
)

func (a *app) groupDeleteCommand(parent *cobra.Command) {
	c := a.command(parent, "delete G [--queue Q]",
		"Forget consumer group G (on every queue, or only on --queue): its cursors, leases, retry\n"+
			"counters and start, so its next pop starts afresh. Dead letters it filed stay. A delete\n"+
			"whose answer was lost may have been applied: it is reported so, with exit status 4.")
	c.cmd.ValidArgsFunction = a.groupArg
	queue := c.flags().String("queue", "", "forget the group on this queue only")
	_ = c.cmd.RegisterFlagCompletionFunc("queue", a.completeQueues)
	dryRun, yes := c.safetyFlags(true)
	c.oneArg("consumer group", func(group string) error {
		r, err := a.connect()
		if err != nil {
			return err
		}
		if *dryRun {
			g, err := ask(r, func(ctx context.Context) (admin.GroupInfo, error) { return r.adm.ConsumerGroup(ctx, group) })
			if err != nil {
				return r.notQueen(fmt.Errorf("group delete %q: %w", group, err))
			}
			var queues []string
			for _, q := range g.Queues {
				if *queue == "" || q.Queue == *queue {
					queues = append(queues, q.Queue)
				}
			}
			if len(queues) == 0 {
				return fmt.Errorf("group delete %q: %w: the group has no state on queue %q", group, admin.ErrNotFound, *queue)
			}
			if a.structured() {
				return a.encode(struct {
					DryRun        bool     `json:"dryRun"`
					ConsumerGroup string   `json:"consumerGroup"`
					Queues        []string `json:"queues"`
				}{true, group, queues})
			}
			fmt.Fprintf(a.stdout, "dry run: would forget consumer group %s on %s; nothing changed\n", clean(group), clean(strings.Join(queues, ", ")))
			return nil
		}
		if err := c.confirmDelete(*yes, "consumer group "+group); err != nil {
			return err
		}
		err = r.modifyDo(fmt.Sprintf("group delete %q", group), func(ctx context.Context) error {
			if *queue != "" {
				return r.adm.DeleteConsumerGroupOnQueue(ctx, group, *queue)
			}
			return r.adm.DeleteConsumerGroup(ctx, group)
		})
		if err != nil {
			return err
		}
		if a.structured() {
			return a.encode(struct {
				ConsumerGroup string `json:"consumerGroup"`
				Queue         string `json:"queue,omitempty"`
				Deleted       bool   `json:"deleted"`
			}{group, *queue, true})
		}
		if *queue != "" {
			fmt.Fprintf(a.stdout, "deleted consumer group %s on queue %s\n", clean(group), clean(*queue))
		} else {
			fmt.Fprintf(a.stdout, "deleted consumer group %s\n", clean(group))
		}
		return nil
	})
}
