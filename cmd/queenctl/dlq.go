package main

import (
	"fmt"

	"github.com/queenmq/queen-go/admin"
)

func (a *app) dlqList(args []string) error {
	c := a.command("dlq list", "--queue Q [--group G] [--limit N] [--offset N]",
		"List the dead letters of a queue, newest failure first.")
	queue := c.fs.String("queue", "", "queue whose dead letters to list (required)")
	group := c.fs.String("group", "", "only dead letters filed by this consumer group")
	partition := c.fs.String("partition", "", "only dead letters of this partition (name)")
	limit := c.fs.Int("limit", 0, "page size (default: the broker's, 100)")
	offset := c.fs.Int("offset", 0, "dead letters to skip")
	if err := c.noArgs(args); err != nil {
		return err
	}
	switch {
	case *queue == "":
		return c.usagef("dlq list: --queue is required")
	case *limit < 0:
		return c.usagef("dlq list: --limit %d: must not be negative", *limit)
	case *offset < 0:
		return c.usagef("dlq list: --offset %d: must not be negative", *offset)
	}
	adm, done, err := c.connect()
	if err != nil {
		return err
	}
	defer done()
	page, err := adm.DeadLetters(a.ctx, admin.DLQQuery{
		Queue: *queue, ConsumerGroup: *group, Partition: *partition, Limit: *limit, Offset: *offset,
	})
	if err != nil {
		return fmt.Errorf("dlq list --queue %q: %w", *queue, err)
	}
	if *offset > 0 && page.Total < 0 { // a broker that does not page (0.15) lists nothing past 0
		return fmt.Errorf("dlq list --offset %d: the broker cannot page its dead-letter list (it reports no total and lists nothing past offset 0); list without --offset", *offset)
	}
	if c.jsonOut() {
		return writeJSON(a.stdout, page)
	}
	printDeadLetters(a.stdout, page)
	return nil
}

func (a *app) dlqReplay(args []string) error {
	c := a.command("dlq replay", "ID... | --queue Q --all [--group G]",
		"Replay dead letters: push a copy of each message to the end of its partition under the\n"+
			"transaction id dlq:<id>, for every consumer group to read again.")
	queue := c.fs.String("queue", "", "with --all: the queue whose dead letters to replay")
	group := c.fs.String("group", "", "with --all: only dead letters filed by this consumer group")
	all := c.fs.Bool("all", false, "replay every dead letter of --queue")
	dryRun, _ := c.safetyFlags(false)
	ids, err := c.parse(args)
	if err != nil {
		return err
	}
	switch {
	case *all && len(ids) > 0:
		return c.usagef("dlq replay: give either ids or --all, not both (got --all and %q)", ids[0])
	case *all && *queue == "":
		return c.usagef("dlq replay --all: --queue is required")
	case !*all && (*queue != "" || *group != ""):
		return c.usagef("dlq replay: --queue and --group go with --all (got --queue %q --group %q)", *queue, *group)
	case !*all && len(ids) == 0:
		return c.usagef("dlq replay: give at least one dead-letter id, or --queue Q --all")
	}
	if err := nonEmptyIDs(c, ids); err != nil {
		return err
	}
	adm, done, err := c.connect()
	if err != nil {
		return err
	}
	defer done()
	if *all {
		letters, err := adm.AllDeadLetters(a.ctx, admin.DLQQuery{Queue: *queue, ConsumerGroup: *group})
		if err != nil {
			return fmt.Errorf("dlq replay --queue %q --all: listing dead letters: %w", *queue, err)
		}
		ids = distinctIDs(letters)
	}
	if *dryRun {
		return a.dryRunList(c, "replay", "dead letters", ids)
	}
	return a.forEach(c, "replay", ids, func(id string) (any, string, error) {
		r, err := adm.ReplayDeadLetter(a.ctx, id)
		if err != nil {
			return nil, "", err
		}
		line := fmt.Sprintf("replayed %s as %s (partition %s, offset %s)", id, r.TransactionID, r.PartitionID, offsetText(r.Offset))
		switch {
		case r.Duplicate:
			line = fmt.Sprintf("replayed %s as %s before: a duplicate, nothing stored (partition %s); the broker has no replay route, the dead letter stays listed", id, r.TransactionID, r.PartitionID)
		case r.Emulated:
			line += " by a push: the broker has no replay route, the dead letter stays listed"
		}
		return r, line, nil
	})
}

func (a *app) dlqDelete(args []string) error {
	c := a.command("dlq delete", "ID... [--dry-run] [--yes]", "Delete dead letters without replaying them.")
	dryRun, yes := c.safetyFlags(true)
	ids, err := c.parse(args)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return c.usagef("dlq delete: give at least one dead-letter id")
	}
	if err := nonEmptyIDs(c, ids); err != nil {
		return err
	}
	if *dryRun {
		return a.dryRunList(c, "delete", "dead letters", ids)
	}
	if err := c.confirmDelete(*yes, fmt.Sprintf("%d dead letters", len(ids))); err != nil {
		return err
	}
	adm, done, err := c.connect()
	if err != nil {
		return err
	}
	defer done()
	return a.forEach(c, "delete", ids, func(id string) (any, string, error) {
		if err := adm.DeleteDeadLetter(a.ctx, id); err != nil {
			return nil, "", err
		}
		return struct {
			ID      string `json:"id"`
			Deleted bool   `json:"deleted"`
		}{id, true}, "deleted " + id, nil
	})
}

func nonEmptyIDs(c *command, ids []string) error {
	for i, id := range ids {
		if id == "" {
			return c.usagef("%s: id number %d is empty", c.name, i+1)
		}
	}
	return nil
}

// distinctIDs keeps the first of each id: a 0.15 broker lists one entry per (message, group)
// under the message's id, and one replay serves them all.
func distinctIDs(letters []admin.DeadLetter) []string {
	seen := make(map[string]bool, len(letters))
	ids := make([]string, 0, len(letters))
	for _, dl := range letters {
		if !seen[dl.ID] {
			seen[dl.ID] = true
			ids = append(ids, dl.ID)
		}
	}
	return ids
}

func offsetText(off int64) string {
	if off < 0 {
		return "unknown"
	}
	return fmt.Sprint(off)
}
