package main

import (
	"fmt"
	"strings"

	"github.com/queenmq/queen-go/admin"
)

func (a *app) groupDelete(args []string) error {
	c := a.command("group delete", "G [--queue Q]",
		"Forget consumer group G (on every queue, or only on --queue): its cursors, leases, retry\n"+
			"counters and start, so its next pop starts afresh. Dead letters it filed stay.")
	queue := c.fs.String("queue", "", "forget the group on this queue only")
	dryRun, yes := c.safetyFlags(true)
	group, adm, done, err := c.connectOneArg(args, "consumer group")
	if err != nil {
		return err
	}
	defer done()
	if *dryRun {
		g, err := adm.ConsumerGroup(a.ctx, group)
		if err != nil {
			return c.notQueen(fmt.Errorf("group delete %q: %w", group, err))
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
		if c.jsonOut() {
			return writeJSON(a.stdout, struct {
				DryRun        bool     `json:"dryRun"`
				ConsumerGroup string   `json:"consumerGroup"`
				Queues        []string `json:"queues"`
			}{true, group, queues})
		}
		fmt.Fprintf(a.stdout, "dry run: would forget consumer group %s on %s; nothing changed\n", group, strings.Join(queues, ", "))
		return nil
	}
	if err := c.confirmDelete(*yes, "consumer group "+group); err != nil {
		return err
	}
	if *queue != "" {
		err = adm.DeleteConsumerGroupOnQueue(a.ctx, group, *queue)
	} else {
		err = adm.DeleteConsumerGroup(a.ctx, group)
	}
	if err != nil {
		return fmt.Errorf("group delete %q: %w", group, err)
	}
	if c.jsonOut() {
		return writeJSON(a.stdout, struct {
			ConsumerGroup string `json:"consumerGroup"`
			Queue         string `json:"queue,omitempty"`
			Deleted       bool   `json:"deleted"`
		}{group, *queue, true})
	}
	if *queue != "" {
		fmt.Fprintf(a.stdout, "deleted consumer group %s on queue %s\n", group, *queue)
	} else {
		fmt.Fprintf(a.stdout, "deleted consumer group %s\n", group)
	}
	return nil
}
