package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/queenmq/queen-go/admin"
)

// The read-only commands: what is stored, and how far behind each consumer group is.

type queueRow struct {
	Queue       string `json:"queue"`
	Namespace   string `json:"namespace"`
	Task        string `json:"task"`
	Partitions  int64  `json:"partitions"`
	Messages    int64  `json:"messages"`
	Pending     int64  `json:"pending"`
	Processing  int64  `json:"processing"`
	DeadLetters int64  `json:"deadLetters"` // -1: not reported
	Approximate bool   `json:"approximate"`
}

func queueRowOf(q admin.QueueInfo) queueRow {
	return queueRow{q.Name, q.Namespace, q.Task, q.PartitionCount, q.Messages, q.Pending, q.Processing, q.DeadLetters, q.Approximate}
}

type groupRow struct {
	Group             string  `json:"group"`
	Queue             string  `json:"queue"`
	Lag               int64   `json:"lag"` // -1: not reported
	TimeLagSeconds    float64 `json:"timeLagSeconds"`
	PartitionsWithLag int64   `json:"partitionsWithLag"`
	State             string  `json:"state"`
	Approximate       bool    `json:"approximate"`
	Over              bool    `json:"over,omitempty"`
	// LagSummed: the broker reports no total, so Lag is the sum over the partitions the group
	// has read (what group show lists); LagUnknown: not even that could be read.
	LagSummed  bool `json:"lagSummed,omitempty"`
	LagUnknown bool `json:"lagUnknown,omitempty"`
}

func groupRows(groups []admin.GroupInfo) []groupRow {
	rows := []groupRow{}
	for _, g := range groups {
		for _, q := range g.Queues {
			rows = append(rows, groupRow{Group: g.Name, Queue: q.Queue, Lag: q.Lag, TimeLagSeconds: q.TimeLag.Seconds(),
				PartitionsWithLag: q.PartitionsWithLag, State: q.State, Approximate: q.Approximate})
		}
	}
	return rows
}

func printQueues(w io.Writer, rows []queueRow) error {
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "no queues")
		return err
	}
	t := newTable(w, "QUEUE", "NAMESPACE", "TASK", "PARTITIONS", "MESSAGES", "PENDING", "PROCESSING", "DEAD LETTERS")
	approx := false
	for _, r := range rows {
		t.row(r.Queue, dash(r.Namespace), dash(r.Task), r.Partitions, r.Messages, r.Pending, r.Processing, count(r.DeadLetters))
		approx = approx || r.Approximate
	}
	if err := t.flush(); err != nil {
		return err
	}
	if approx {
		fmt.Fprintln(w, "(counts are the broker's background statistics: approximate, and minutes old)")
	}
	return nil
}

func printGroups(w io.Writer, rows []groupRow) error {
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "no consumer groups")
		return err
	}
	t := newTable(w, "GROUP", "QUEUE", "LAG", "TIME LAG", "PARTITIONS BEHIND", "STATE")
	approx, summed := false, false
	for _, r := range rows {
		mark := ""
		switch {
		case r.Over && r.LagUnknown:
			mark = "  <- over (lag unknown)"
		case r.Over:
			mark = "  <- over"
		}
		t.row(r.Group, r.Queue, count(r.Lag), durationText(time.Duration(r.TimeLagSeconds*float64(time.Second)), r.Approximate),
			r.PartitionsWithLag, r.State+mark)
		approx = approx || r.Approximate
		summed = summed || r.LagSummed
	}
	if err := t.flush(); err != nil {
		return err
	}
	switch {
	case summed:
		fmt.Fprintln(w, "(this broker reports no total lag: lag is summed over the partitions the group has read, as group show lists them, and time lag is a lower bound)")
	case approx:
		fmt.Fprintln(w, "(this broker reports no total lag, and time lag only as a lower bound)")
	}
	return nil
}

// count shows a count the broker may not report (-1) as "?".
func count(n int64) string {
	if n < 0 {
		return "?"
	}
	return fmt.Sprint(n)
}

func durationText(d time.Duration, lowerBound bool) string {
	s := d.Round(time.Second).String()
	if lowerBound && d > 0 {
		s = "≥" + s
	}
	return s
}

func (a *app) statusCommand(parent *cobra.Command) {
	c := a.command(parent, "status", "Every queue (partitions, messages, pending, dead letters) and every consumer group's lag.")
	c.noArgs(func() error {
		r, err := a.connect()
		if err != nil {
			return err
		}
		qs, err := ask(r, r.adm.Queues)
		if err != nil {
			return r.notQueen(fmt.Errorf("status: listing queues: %w", err))
		}
		groups, err := ask(r, r.adm.ConsumerGroups)
		if err != nil {
			return r.notQueen(fmt.Errorf("status: listing consumer groups: %w", err))
		}
		if len(qs) == 0 && len(groups) == 0 {
			if err := r.confirmBroker("queue list"); err != nil {
				return fmt.Errorf("status: %w", err)
			}
		}
		qrows := make([]queueRow, 0, len(qs))
		for _, q := range qs {
			qrows = append(qrows, queueRowOf(q))
		}
		out := struct {
			Queues []queueRow `json:"queues"`
			Groups []groupRow `json:"groups"`
		}{qrows, groupRows(groups)}
		return a.show(out, func(w io.Writer) error {
			if err := printQueues(w, out.Queues); err != nil {
				return err
			}
			fmt.Fprintln(w)
			return printGroups(w, out.Groups)
		})
	})
}

func (a *app) queueListCommand(parent *cobra.Command) {
	c := a.command(parent, "list [--namespace N] [--task T]", "List the queues, newest first, with their message counts.")
	namespace := c.flags().String("namespace", "", "only queues with this namespace")
	task := c.flags().String("task", "", "only queues with this task")
	c.noArgs(func() error {
		r, err := a.connect()
		if err != nil {
			return err
		}
		qs, err := ask(r, func(ctx context.Context) ([]admin.QueueInfo, error) { return r.adm.QueuesIn(ctx, *namespace, *task) })
		if err != nil {
			return r.notQueen(fmt.Errorf("queue list: %w", err))
		}
		if len(qs) == 0 {
			if err := r.confirmBroker("queue list"); err != nil {
				return err
			}
		}
		rows := make([]queueRow, 0, len(qs))
		for _, q := range qs {
			rows = append(rows, queueRowOf(q))
		}
		return a.show(rows, func(w io.Writer) error { return printQueues(w, rows) })
	})
}

type partitionRow struct {
	Partition   string `json:"partition"`
	ID          string `json:"id"`
	Messages    int64  `json:"messages"`
	Pending     int64  `json:"pending"`
	Processing  int64  `json:"processing"`
	DeadLetters int64  `json:"deadLetters"`
	LastOffset  int64  `json:"lastOffset"` // -1: empty or not reported
	Newest      string `json:"newest,omitempty"`
}

func (a *app) queueShowCommand(parent *cobra.Command) {
	c := a.command(parent, "show Q", "Show queue Q: its options, and each partition's depth.")
	c.cmd.ValidArgsFunction = a.queueArg
	c.oneArg("queue name", func(queue string) error {
		r, err := a.connect()
		if err != nil {
			return err
		}
		q, err := ask(r, func(ctx context.Context) (admin.QueueInfo, error) { return r.adm.QueueInfo(ctx, queue) })
		if err != nil {
			return r.notQueen(fmt.Errorf("queue show %q: %w", queue, err))
		}
		parts := make([]partitionRow, 0, len(q.Partitions))
		for _, p := range q.Partitions {
			row := partitionRow{p.Name, p.ID, p.Messages, p.Pending, p.Processing, p.DeadLetters, p.LastOffset, ""}
			if !p.Newest.IsZero() {
				row.Newest = p.Newest.UTC().Format(time.RFC3339Nano)
			}
			parts = append(parts, row)
		}
		out := struct {
			queueRow
			LeaseTimeSeconds int64          `json:"leaseTimeSeconds"`
			RetryLimit       int            `json:"retryLimit"`
			DeadLetterQueue  bool           `json:"deadLetterQueue"`
			PartitionList    []partitionRow `json:"partitionList"`
		}{queueRowOf(q), int64(q.Config.LeaseTime.Seconds()), q.Config.RetryLimit, q.Config.DeadLetterQueue, parts}
		return a.show(out, func(w io.Writer) error {
			fmt.Fprintf(w, "queue %s  namespace %s  task %s\n", clean(q.Name), clean(dash(q.Namespace)), clean(dash(q.Task)))
			fmt.Fprintf(w, "lease time %s  retry limit %d  dead-letter queue %s\n", q.Config.LeaseTime, q.Config.RetryLimit, onOff(q.Config.DeadLetterQueue))
			fmt.Fprintf(w, "messages %d  pending %d  processing %d  dead letters %s\n\n", q.Messages, q.Pending, q.Processing, count(q.DeadLetters))
			t := newTable(w, "PARTITION", "MESSAGES", "PENDING", "PROCESSING", "DEAD LETTERS", "LAST OFFSET", "NEWEST")
			for _, p := range parts {
				t.row(p.Partition, p.Messages, p.Pending, p.Processing, p.DeadLetters, count(p.LastOffset), dash(p.Newest))
			}
			if err := t.flush(); err != nil {
				return err
			}
			if q.Approximate {
				fmt.Fprintln(w, "(counts are the broker's background statistics: approximate, and minutes old)")
			}
			return nil
		})
	})
}

func (a *app) groupListCommand(parent *cobra.Command) {
	c := a.command(parent, "list", "List the consumer groups with their lag on each queue they read.")
	c.noArgs(func() error {
		r, err := a.connect()
		if err != nil {
			return err
		}
		groups, err := ask(r, r.adm.ConsumerGroups)
		if err != nil {
			return r.notQueen(fmt.Errorf("group list: %w", err))
		}
		if len(groups) == 0 {
			if err := r.confirmBroker("consumer-group list"); err != nil {
				return err
			}
		}
		rows := groupRows(groups)
		return a.show(rows, func(w io.Writer) error { return printGroups(w, rows) })
	})
}

type partitionLagRow struct {
	Queue          string  `json:"queue"`
	Partition      string  `json:"partition"`
	Cursor         int64   `json:"cursor"`
	Lag            int64   `json:"lag"`
	TimeLagSeconds float64 `json:"timeLagSeconds"`
	Leased         bool    `json:"leased"`
	LeaseID        string  `json:"leaseId,omitempty"`
}

func (a *app) groupShowCommand(parent *cobra.Command) {
	c := a.command(parent, "show G", "Show consumer group G on every queue it reads: per partition its cursor (the last\n"+
		"offset done), lag (messages it will still be handed), time lag (age of the oldest) and lease.")
	c.cmd.ValidArgsFunction = a.groupArg
	c.oneArg("consumer group", func(group string) error {
		r, err := a.connect()
		if err != nil {
			return err
		}
		g, err := ask(r, func(ctx context.Context) (admin.GroupInfo, error) { return r.adm.ConsumerGroup(ctx, group) })
		if err != nil {
			return r.notQueen(fmt.Errorf("group show %q: %w", group, err))
		}
		rows := []partitionLagRow{}
		approx := false
		for _, q := range g.Queues {
			approx = approx || q.Approximate
			for _, p := range q.Partitions {
				rows = append(rows, partitionLagRow{q.Queue, p.Partition, p.Cursor, p.Lag, p.TimeLag.Seconds(), p.Leased, p.LeaseID})
			}
		}
		out := struct {
			Group      string            `json:"group"`
			Partitions []partitionLagRow `json:"partitions"`
		}{g.Name, rows}
		return a.show(out, func(w io.Writer) error {
			t := newTable(w, "QUEUE", "PARTITION", "CURSOR", "LAG", "TIME LAG", "LEASED")
			for _, r := range rows {
				cursor := fmt.Sprint(r.Cursor)
				if approx && r.Cursor < 0 {
					cursor = "?"
				}
				t.row(r.Queue, r.Partition, cursor, r.Lag, durationText(time.Duration(r.TimeLagSeconds*float64(time.Second)), false), yesNo(r.Leased))
			}
			if err := t.flush(); err != nil {
				return err
			}
			if approx {
				fmt.Fprintln(w, "(this broker lists only the partitions the group has a cursor in, and no cursor offsets)")
			}
			return nil
		})
	})
}

func (a *app) lagCommand(parent *cobra.Command) {
	c := a.command(parent, "lag [--min N] [--min-time D]",
		"Show each consumer group's lag per queue. With --min or --min-time, exit 1 when any group is\n"+
			"more than N messages or D behind: usable in a cron job or a health check. A broker that\n"+
			"reports no total lag (0.15) has it summed here over the partitions the group has read, as\n"+
			"group show lists them; where even that cannot be read, the lag is unknown and counts as over.")
	minLag := c.flags().Int64("min", -1, "a group more than this many messages behind is over")
	minTime := c.flags().Duration("min-time", -1, "a group whose oldest owed message is older than this is over, e.g. 5m")
	group := c.flags().String("group", "", "only this consumer group")
	queue := c.flags().String("queue", "", "only this queue")
	_ = c.cmd.RegisterFlagCompletionFunc("group", a.completeGroups)
	_ = c.cmd.RegisterFlagCompletionFunc("queue", a.completeQueues)
	c.noArgs(func() error {
		switch {
		case c.flagSet("min") && *minLag < 0:
			return c.usagef("lag: --min %d: must not be negative", *minLag)
		case c.flagSet("min-time") && *minTime < 0:
			return c.usagef("lag: --min-time %s: must not be negative", *minTime)
		}
		r, err := a.connect()
		if err != nil {
			return err
		}
		groups, err := ask(r, r.adm.ConsumerGroups)
		if err != nil {
			return r.notQueen(fmt.Errorf("lag: %w", err))
		}
		if len(groups) == 0 {
			if err := r.confirmBroker("consumer-group list"); err != nil {
				return fmt.Errorf("lag: %w", err)
			}
		}
		rows := []groupRow{}
		for _, row := range groupRows(groups) {
			if (*group == "" || row.Group == *group) && (*queue == "" || row.Queue == *queue) {
				rows = append(rows, row)
			}
		}
		if c.flagSet("min") {
			sumLags(r, rows)
		}
		over := 0
		for i := range rows {
			row := &rows[i]
			row.Over = (c.flagSet("min") && (row.LagUnknown || row.Lag > *minLag)) ||
				(c.flagSet("min-time") && time.Duration(row.TimeLagSeconds*float64(time.Second)) > *minTime)
			if row.Over {
				over++
			}
			if row.LagUnknown {
				fmt.Fprintf(a.stderr, "queenctl: lag: consumer group %s on queue %s: lag unknown (the broker reports no total, and the group's partitions could not be read)\n",
					clean(row.Group), clean(row.Queue))
			}
		}
		if err := a.show(rows, func(w io.Writer) error { return printGroups(w, rows) }); err != nil {
			return err
		}
		if over > 0 {
			fmt.Fprintf(a.stderr, "queenctl: lag: %d of %d group/queue pairs over the bound\n", over, len(rows))
			return reported{exitFailure}
		}
		return nil
	})
}

// sumLags fills in the lag of the rows whose broker reports none (0.15): the sum of the
// partition lags the group's description lists, or unknown when it cannot be read.
func sumLags(r *remote, rows []groupRow) {
	described := map[string]*admin.GroupInfo{}
	for i := range rows {
		row := &rows[i]
		if row.Lag >= 0 {
			continue
		}
		g, ok := described[row.Group]
		if !ok {
			info, err := ask(r, func(ctx context.Context) (admin.GroupInfo, error) { return r.adm.ConsumerGroup(ctx, row.Group) })
			if err == nil {
				g = &info
			}
			described[row.Group] = g
		}
		row.LagUnknown = true
		if g == nil {
			continue
		}
		for _, q := range g.Queues {
			if q.Queue == row.Queue && q.Lag >= 0 && len(q.Partitions) > 0 {
				row.Lag, row.LagSummed, row.LagUnknown = q.Lag, true, false
			}
		}
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
