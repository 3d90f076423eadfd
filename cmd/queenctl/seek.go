package main

import (
	"fmt"
	"time"

	"github.com/queenmq/queen-go/admin"
)

func (a *app) seek(args []string) error {
	c := a.command("seek", "--group G --queue Q (--to TIME | --to-end)",
		"Move a consumer group's cursors on a queue. With --to, the group next reads exactly the\n"+
			"messages pushed at or after TIME (RFC 3339, e.g. 2026-11-29T10:00:00Z); with --to-end it\n"+
			"skips the backlog. The group's leases on the queue are released: batches in flight are abandoned.")
	group := c.fs.String("group", "", "consumer group (required)")
	queue := c.fs.String("queue", "", "queue (required)")
	to := c.fs.String("to", "", "RFC 3339 time to seek to")
	toEnd := c.fs.Bool("to-end", false, "seek past every stored message")
	pos, err := c.parse(args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return c.usagef("seek takes no arguments, got %q", pos[0])
	case *group == "":
		return c.usagef("seek: --group is required")
	case *queue == "":
		return c.usagef("seek: --queue is required")
	case *to != "" && *toEnd:
		return c.usagef("seek: give --to or --to-end, not both (got --to %q and --to-end)", *to)
	case *to == "" && !*toEnd:
		return c.usagef("seek: give --to TIME or --to-end")
	}
	target := admin.SeekToEnd()
	if *to != "" {
		t, err := time.Parse(time.RFC3339Nano, *to)
		if err != nil {
			return c.usagef("seek: --to %q is not an RFC 3339 time like 2026-11-29T10:00:00Z", *to)
		}
		target = admin.SeekToTime(t)
	}
	adm, done, err := c.connect()
	if err != nil {
		return err
	}
	defer done()
	res, err := adm.Seek(a.ctx, *group, *queue, target)
	if err != nil {
		return fmt.Errorf("seek --group %q --queue %q --to %s: %w", *group, *queue, target, err)
	}
	if c.jsonOut() {
		return writeJSON(a.stdout, res)
	}
	fmt.Fprintf(a.stdout, "moved consumer group %s on queue %s to %s (partitions updated: %d)\n", *group, *queue, target, res.PartitionsUpdated)
	return nil
}
