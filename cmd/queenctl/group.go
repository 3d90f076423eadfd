package main

import "fmt"

func (a *app) groupDelete(args []string) error {
	c := a.command("group delete", "G [--queue Q]",
		"Forget consumer group G (on every queue, or only on --queue): its cursors, leases, retry\n"+
			"counters and start, so its next pop starts afresh. Dead letters it filed stay.")
	queue := c.fs.String("queue", "", "forget the group on this queue only")
	pos, err := c.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return c.usagef("group delete: give exactly one consumer group, got %d (%q)", len(pos), pos)
	}
	adm, done, err := c.connect()
	if err != nil {
		return err
	}
	defer done()
	group := pos[0]
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
