package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/queenmq/queen-go/admin"
)

func (a *app) dlqListCommand(parent *cobra.Command) {
	c := a.command(parent, "list --queue Q [--group G] [--limit N] [--offset N]",
		"List the dead letters of a queue, newest failure first.")
	var q admin.DLQQuery
	c.flags().StringVar(&q.Queue, "queue", "", "queue whose dead letters to list (required)")
	c.flags().StringVar(&q.ConsumerGroup, "group", "", "only dead letters filed by this consumer group")
	c.flags().StringVar(&q.Partition, "partition", "", "only dead letters of this partition (name)")
	c.flags().IntVar(&q.Limit, "limit", 0, "page size (default: the broker's, 100)")
	c.flags().IntVar(&q.Offset, "offset", 0, "dead letters to skip")
	_ = c.cmd.RegisterFlagCompletionFunc("queue", a.completeQueues)
	_ = c.cmd.RegisterFlagCompletionFunc("group", a.completeGroups)
	c.noArgs(func() error {
		switch {
		case q.Queue == "":
			return c.usagef("dlq list: --queue is required")
		case q.Limit < 0:
			return c.usagef("dlq list: --limit %d: must not be negative", q.Limit)
		case q.Offset < 0:
			return c.usagef("dlq list: --offset %d: must not be negative", q.Offset)
		}
		r, err := a.connect()
		if err != nil {
			return err
		}
		page, err := ask(r, func(ctx context.Context) (admin.DLQPage, error) { return r.adm.DeadLetters(ctx, q) })
		if err != nil {
			return fmt.Errorf("dlq list --queue %q: %w", q.Queue, err)
		}
		if q.Offset > 0 && page.Total < 0 { // a broker that does not page (0.15) lists nothing past 0
			return fmt.Errorf("dlq list --offset %d: the broker cannot page its dead-letter list (it reports no total and lists nothing past offset 0); list without --offset", q.Offset)
		}
		if len(page.DeadLetters) == 0 {
			if err := r.confirmBroker("dead-letter list"); err != nil {
				return fmt.Errorf("dlq list --queue %q: %w", q.Queue, err)
			}
		}
		return a.show(deadLetterPage(page), func(w io.Writer) error { return printDeadLetters(w, page) })
	})
}

// replayedRow is one replay's outcome, with the name of the partition its copy went to.
type replayedRow struct {
	admin.Replayed
	Partition string `json:"partition"`
}

func (a *app) dlqReplayCommand(parent *cobra.Command) {
	c := a.command(parent, "replay ID... | --queue Q --all [--group G]",
		"Replay dead letters: push a copy of each message to the end of its partition under the\n"+
			"transaction id dlq:<id>, for every consumer group to read again. A replay whose answer\n"+
			"was lost may have been applied: it is reported so, with exit status 4.")
	queue := c.flags().String("queue", "", "with --all: the queue whose dead letters to replay")
	group := c.flags().String("group", "", "with --all: only dead letters filed by this consumer group")
	all := c.flags().Bool("all", false, "replay every dead letter of --queue")
	dryRun, _ := c.safetyFlags(false)
	_ = c.cmd.RegisterFlagCompletionFunc("queue", a.completeQueues)
	_ = c.cmd.RegisterFlagCompletionFunc("group", a.completeGroups)
	c.anyArgs(func(ids []string) error {
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
		r, err := a.connect()
		if err != nil {
			return err
		}
		names := partitionNames{r: r, byID: map[string]string{}}
		if *all {
			letters, err := ask(r, func(ctx context.Context) ([]admin.DeadLetter, error) {
				return r.adm.AllDeadLetters(ctx, admin.DLQQuery{Queue: *queue, ConsumerGroup: *group})
			})
			if err != nil {
				return fmt.Errorf("dlq replay --queue %q --all: listing dead letters: %w", *queue, err)
			}
			if len(letters) == 0 {
				if err := r.confirmBroker("dead-letter list"); err != nil {
					return fmt.Errorf("dlq replay --queue %q --all: %w", *queue, err)
				}
			}
			ids = distinctIDs(letters)
			for _, dl := range letters {
				names.byID[dl.PartitionID] = dl.Partition
			}
		}
		if *dryRun {
			return a.dryRunList("replay", "dead letters", ids)
		}
		return a.forEach("replay", ids, func(id string) (any, string, error) {
			rep, err := modify(r, "replay "+id, func(ctx context.Context) (admin.Replayed, error) { return r.adm.ReplayDeadLetter(ctx, id) })
			if err != nil {
				return nil, "", err
			}
			row := replayedRow{rep, names.of(rep.PartitionID, rep.TransactionID)}
			part := clean(row.Partition)
			line := fmt.Sprintf("replayed %s as %s (partition %s, offset %s)", clean(id), clean(rep.TransactionID), part, offsetText(rep.Offset))
			switch {
			case rep.Duplicate:
				line = fmt.Sprintf("replayed %s as %s before: a duplicate, nothing stored (partition %s); the broker has no replay route, the dead letter stays listed",
					clean(id), clean(rep.TransactionID), part)
			case rep.Emulated:
				line += " by a push: the broker has no replay route, the dead letter stays listed"
			}
			return row, line, nil
		})
	})
}

// partitionNames finds the name of a partition known by its id: from the dead letters listed,
// else from the message that a replay stored there.
type partitionNames struct {
	r    *remote
	byID map[string]string
}

func (p partitionNames) of(partitionID, transactionID string) string {
	if name, ok := p.byID[partitionID]; ok {
		return name
	}
	if partitionID == "" {
		return "?"
	}
	name := "id " + partitionID // when the broker cannot say, the id is all there is
	m, err := ask(p.r, func(ctx context.Context) (admin.StoredMessage, error) {
		return p.r.adm.Message(ctx, partitionID, transactionID)
	})
	if err == nil && m.Partition != "" {
		name = m.Partition
		p.byID[partitionID] = name
	}
	return name
}

func (a *app) dlqDeleteCommand(parent *cobra.Command) {
	c := a.command(parent, "delete ID... [--dry-run] [--yes]",
		"Delete dead letters without replaying them. A delete whose answer was lost may have been\n"+
			"applied: it is reported so, with exit status 4.")
	dryRun, yes := c.safetyFlags(true)
	c.anyArgs(func(ids []string) error {
		if len(ids) == 0 {
			return c.usagef("dlq delete: give at least one dead-letter id")
		}
		if err := nonEmptyIDs(c, ids); err != nil {
			return err
		}
		if *dryRun {
			return a.dryRunList("delete", "dead letters", ids)
		}
		if err := c.confirmDelete(*yes, fmt.Sprintf("%d dead letters", len(ids))); err != nil {
			return err
		}
		r, err := a.connect()
		if err != nil {
			return err
		}
		return a.forEach("delete", ids, func(id string) (any, string, error) {
			if err := r.modifyDo("delete "+id, func(ctx context.Context) error { return r.adm.DeleteDeadLetter(ctx, id) }); err != nil {
				return nil, "", err
			}
			return struct {
				ID      string `json:"id"`
				Deleted bool   `json:"deleted"`
			}{id, true}, "deleted " + clean(id), nil
		})
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
