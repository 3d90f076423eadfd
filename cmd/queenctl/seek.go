package main

import (
	"errors"
	"fmt"
	"time"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
)

func (a *app) seek(args []string) error {
	c := a.command("seek", "--group G --queue Q (--to TIME | --to -1h | --to-start | --to-end) [--create] [--dry-run]",
		"Move a consumer group's cursors on a queue. With --to, the group next reads exactly the\n"+
			"messages pushed at or after TIME: RFC 3339 (2026-11-29T10:00:00Z), or a duration back from\n"+
			"now (-1h, 15m). --to-start rereads everything stored; --to-end skips the backlog. The group's\n"+
			"leases on the queue are released: batches in flight are abandoned. A group the broker does\n"+
			"not know on the queue (a typo?) is refused unless --create.")
	group := c.fs.String("group", "", "consumer group (required)")
	queue := c.fs.String("queue", "", "queue (required)")
	to := c.fs.String("to", "", "time to seek to: RFC 3339, or a duration back from now (-1h, 15m)")
	toStart := c.fs.Bool("to-start", false, "seek before every stored message")
	toEnd := c.fs.Bool("to-end", false, "seek past every stored message")
	create := c.fs.Bool("create", false, "start the group on the queue if the broker does not know it there")
	dryRun, _ := c.safetyFlags(false)
	if err := c.noArgs(args); err != nil {
		return err
	}
	targets := 0
	for _, set := range []bool{*to != "", *toStart, *toEnd} {
		if set {
			targets++
		}
	}
	switch {
	case *group == "":
		return c.usagef("seek: --group is required")
	case *queue == "":
		return c.usagef("seek: --queue is required")
	case targets > 1:
		return c.usagef("seek: give one of --to, --to-start or --to-end, not both (got --to %q, --to-start %v, --to-end %v)", *to, *toStart, *toEnd)
	case targets == 0:
		return c.usagef("seek: give --to TIME or --to-end (or --to-start)")
	}
	target := admin.SeekToEnd()
	switch {
	case *toStart:
		target = admin.SeekToTime(time.Unix(0, 0).UTC())
	case *to != "":
		t, err := parseSeekTime(*to, time.Now())
		if err != nil {
			return c.usagef("seek: %v", err)
		}
		target = admin.SeekToTime(t)
	}
	adm, done, err := c.connect()
	if err != nil {
		return err
	}
	defer done()
	known, lag, err := groupOnQueue(a, adm, *group, *queue)
	if err != nil {
		return c.notQueen(fmt.Errorf("seek --group %q --queue %q: %w", *group, *queue, err))
	}
	if !known {
		if _, err := adm.QueueInfo(a.ctx, *queue); err != nil {
			return c.notQueen(fmt.Errorf("seek --group %q --queue %q: %w", *group, *queue, err))
		}
	}
	if !known && !*create {
		return fmt.Errorf("%w: seek: consumer group %q has no cursor or start on queue %q (a typo?); pass --create to start it there", errRefused, *group, *queue)
	}
	if *dryRun {
		if c.jsonOut() {
			return writeJSON(a.stdout, struct {
				DryRun        bool   `json:"dryRun"`
				ConsumerGroup string `json:"consumerGroup"`
				Queue         string `json:"queue"`
				Target        string `json:"target"`
				Known         bool   `json:"known"`
				Lag           int64  `json:"lag"`
			}{true, *group, *queue, target.String(), known, lag})
		}
		fmt.Fprintf(a.stdout, "dry run: would move consumer group %s on queue %s to %s (now %s behind); nothing changed\n",
			*group, *queue, target, count(lag))
		return nil
	}
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

// groupOnQueue reports whether the broker knows the group on the queue, and its lag there
// (-1 when unknown).
func groupOnQueue(a *app, adm *admin.Admin, group, queue string) (known bool, lag int64, err error) {
	g, err := adm.ConsumerGroup(a.ctx, group)
	switch {
	case errors.Is(err, admin.ErrNotFound):
		return false, -1, nil
	case errors.Is(err, queen.ErrInvalidOption): // "lagging" cannot be described; let the seek decide
		return true, -1, nil
	case err != nil:
		return false, -1, err
	}
	for _, q := range g.Queues {
		if q.Queue == queue {
			return true, q.Lag, nil
		}
	}
	return false, -1, nil
}
