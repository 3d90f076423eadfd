package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
)

func (a *app) seekCommand(parent *cobra.Command) {
	c := a.command(parent, "seek --group G --queue Q (--to TIME | --to -1h | --to-start | --to-end) [--create] [--dry-run]",
		"Move a consumer group's cursors on a queue. With --to, the group next reads exactly the\n"+
			"messages pushed at or after TIME: RFC 3339 (2026-11-29T10:00:00Z), or a duration back from\n"+
			"now (-1h, 15m). --to-start rereads everything stored; --to-end skips the backlog. The group's\n"+
			"leases on the queue are released: batches in flight are abandoned. A group the broker does\n"+
			"not know on the queue (a typo?) is refused unless --create.")
	group := c.flags().String("group", "", "consumer group (required)")
	queue := c.flags().String("queue", "", "queue (required)")
	to := c.flags().String("to", "", "time to seek to: RFC 3339, or a duration back from now (-1h, 15m)")
	toStart := c.flags().Bool("to-start", false, "seek before every stored message")
	toEnd := c.flags().Bool("to-end", false, "seek past every stored message")
	create := c.flags().Bool("create", false, "start the group on the queue if the broker does not know it there")
	dryRun, _ := c.safetyFlags(false)
	_ = c.cmd.RegisterFlagCompletionFunc("group", a.completeGroups)
	_ = c.cmd.RegisterFlagCompletionFunc("queue", a.completeQueues)
	c.noArgs(func() error {
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
		r, err := a.connect()
		if err != nil {
			return err
		}
		known, lag, err := groupOnQueue(r, *group, *queue)
		if err != nil {
			return r.notQueen(fmt.Errorf("seek --group %q --queue %q: %w", *group, *queue, err))
		}
		if !known {
			if _, err := ask(r, func(ctx context.Context) (admin.QueueInfo, error) { return r.adm.QueueInfo(ctx, *queue) }); err != nil {
				return r.notQueen(fmt.Errorf("seek --group %q --queue %q: %w", *group, *queue, err))
			}
		}
		if !known && !*create {
			return fmt.Errorf("%w: seek: consumer group %q has no cursor or start on queue %q (a typo?); pass --create to start it there", errRefused, *group, *queue)
		}
		if *dryRun {
			if a.structured() {
				return a.encode(struct {
					DryRun        bool   `json:"dryRun"`
					ConsumerGroup string `json:"consumerGroup"`
					Queue         string `json:"queue"`
					Target        string `json:"target"`
					Known         bool   `json:"known"`
					Lag           int64  `json:"lag"`
				}{true, *group, *queue, target.String(), known, lag})
			}
			fmt.Fprintf(a.stdout, "dry run: would move consumer group %s on queue %s to %s (now %s behind); nothing changed\n",
				clean(*group), clean(*queue), target, count(lag))
			return nil
		}
		res, err := modify(r, fmt.Sprintf("seek --group %q --queue %q --to %s", *group, *queue, target),
			func(ctx context.Context) (admin.SeekResult, error) { return r.adm.Seek(ctx, *group, *queue, target) })
		if err != nil {
			return err
		}
		if a.structured() {
			return a.encode(res)
		}
		fmt.Fprintf(a.stdout, "moved consumer group %s on queue %s to %s (partitions updated: %d)\n", clean(*group), clean(*queue), target, res.PartitionsUpdated)
		return nil
	})
}

// groupOnQueue reports whether the broker knows the group on the queue, and its lag there
// (-1 when unknown).
func groupOnQueue(r *remote, group, queue string) (known bool, lag int64, err error) {
	g, err := ask(r, func(ctx context.Context) (admin.GroupInfo, error) { return r.adm.ConsumerGroup(ctx, group) })
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
