package main

import (
	"fmt"
	"io"
	"time"

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
}

func groupRows(groups []admin.GroupInfo) []groupRow {
	rows := []groupRow{}
	for _, g := range groups {
		for _, q := range g.Queues {
			rows = append(rows, groupRow{g.Name, q.Queue, q.Lag, q.TimeLag.Seconds(), q.PartitionsWithLag, q.State, q.Approximate, false})
		}
	}
	return rows
}

func printQueues(w io.Writer, rows []queueRow) error {
	if len(rows) == 0 {
		fmt.Fprintln(w, "no queues")
		return nil
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "QUEUE\tNAMESPACE\tTASK\tPARTITIONS\tMESSAGES\tPENDING\tPROCESSING\tDEAD LETTERS")
	approx := false
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\n", r.Queue, dash(r.Namespace), dash(r.Task), r.Partitions,
			r.Messages, r.Pending, r.Processing, count(r.DeadLetters))
		approx = approx || r.Approximate
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if approx {
		fmt.Fprintln(w, "(counts are the broker's background statistics: approximate, and minutes old)")
	}
	return nil
}

func printGroups(w io.Writer, rows []groupRow) error {
	if len(rows) == 0 {
		fmt.Fprintln(w, "no consumer groups")
		return nil
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "GROUP\tQUEUE\tLAG\tTIME LAG\tPARTITIONS BEHIND\tSTATE")
	approx := false
	for _, r := range rows {
		mark := ""
		if r.Over {
			mark = "  <- over"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s%s\n", r.Group, r.Queue, count(r.Lag),
			durationText(time.Duration(r.TimeLagSeconds*float64(time.Second)), r.Approximate), r.PartitionsWithLag, r.State, mark)
		approx = approx || r.Approximate
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if approx {
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

func (a *app) status(args []string) error {
	c := a.command("status", "", "Every queue (partitions, messages, pending, dead letters) and every consumer group's lag.")
	adm, done, err := c.connectNoArgs(args)
	if err != nil {
		return err
	}
	defer done()
	qs, err := adm.Queues(a.ctx)
	if err != nil {
		return c.notQueen(fmt.Errorf("status: listing queues: %w", err))
	}
	groups, err := adm.ConsumerGroups(a.ctx)
	if err != nil {
		return c.notQueen(fmt.Errorf("status: listing consumer groups: %w", err))
	}
	qrows := make([]queueRow, 0, len(qs))
	for _, q := range qs {
		qrows = append(qrows, queueRowOf(q))
	}
	if c.jsonOut() {
		return writeJSON(a.stdout, struct {
			Queues []queueRow `json:"queues"`
			Groups []groupRow `json:"groups"`
		}{qrows, groupRows(groups)})
	}
	if err := printQueues(a.stdout, qrows); err != nil {
		return err
	}
	fmt.Fprintln(a.stdout)
	return printGroups(a.stdout, groupRows(groups))
}

func (a *app) queueList(args []string) error {
	c := a.command("queue list", "[--namespace N] [--task T]", "List the queues, newest first, with their message counts.")
	namespace := c.fs.String("namespace", "", "only queues with this namespace")
	task := c.fs.String("task", "", "only queues with this task")
	adm, done, err := c.connectNoArgs(args)
	if err != nil {
		return err
	}
	defer done()
	qs, err := adm.QueuesIn(a.ctx, *namespace, *task)
	if err != nil {
		return c.notQueen(fmt.Errorf("queue list: %w", err))
	}
	rows := make([]queueRow, 0, len(qs))
	for _, q := range qs {
		rows = append(rows, queueRowOf(q))
	}
	if c.jsonOut() {
		return writeJSON(a.stdout, rows)
	}
	return printQueues(a.stdout, rows)
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

func (a *app) queueShow(args []string) error {
	c := a.command("queue show", "Q", "Show queue Q: its options, and each partition's depth.")
	queue, adm, done, err := c.connectOneArg(args, "queue name")
	if err != nil {
		return err
	}
	defer done()
	q, err := adm.QueueInfo(a.ctx, queue)
	if err != nil {
		return c.notQueen(fmt.Errorf("queue show %q: %w", queue, err))
	}
	parts := make([]partitionRow, 0, len(q.Partitions))
	for _, p := range q.Partitions {
		row := partitionRow{p.Name, p.ID, p.Messages, p.Pending, p.Processing, p.DeadLetters, p.LastOffset, ""}
		if !p.Newest.IsZero() {
			row.Newest = p.Newest.UTC().Format(time.RFC3339Nano)
		}
		parts = append(parts, row)
	}
	if c.jsonOut() {
		return writeJSON(a.stdout, struct {
			queueRow
			LeaseTimeSeconds int64          `json:"leaseTimeSeconds"`
			RetryLimit       int            `json:"retryLimit"`
			DeadLetterQueue  bool           `json:"deadLetterQueue"`
			PartitionList    []partitionRow `json:"partitionList"`
		}{queueRowOf(q), int64(q.Config.LeaseTime.Seconds()), q.Config.RetryLimit, q.Config.DeadLetterQueue, parts})
	}
	fmt.Fprintf(a.stdout, "queue %s  namespace %s  task %s\n", q.Name, dash(q.Namespace), dash(q.Task))
	fmt.Fprintf(a.stdout, "lease time %s  retry limit %d  dead-letter queue %s\n", q.Config.LeaseTime, q.Config.RetryLimit, onOff(q.Config.DeadLetterQueue))
	fmt.Fprintf(a.stdout, "messages %d  pending %d  processing %d  dead letters %s\n\n", q.Messages, q.Pending, q.Processing, count(q.DeadLetters))
	tw := newTable(a.stdout)
	fmt.Fprintln(tw, "PARTITION\tMESSAGES\tPENDING\tPROCESSING\tDEAD LETTERS\tLAST OFFSET\tNEWEST")
	for _, p := range parts {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\n", p.Partition, p.Messages, p.Pending, p.Processing, p.DeadLetters, count(p.LastOffset), dash(p.Newest))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if q.Approximate {
		fmt.Fprintln(a.stdout, "(counts are the broker's background statistics: approximate, and minutes old)")
	}
	return nil
}

func (a *app) groupList(args []string) error {
	c := a.command("group list", "", "List the consumer groups with their lag on each queue they read.")
	adm, done, err := c.connectNoArgs(args)
	if err != nil {
		return err
	}
	defer done()
	groups, err := adm.ConsumerGroups(a.ctx)
	if err != nil {
		return c.notQueen(fmt.Errorf("group list: %w", err))
	}
	if c.jsonOut() {
		return writeJSON(a.stdout, groupRows(groups))
	}
	return printGroups(a.stdout, groupRows(groups))
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

func (a *app) groupShow(args []string) error {
	c := a.command("group show", "G", "Show consumer group G on every queue it reads: per partition its cursor (the last\n"+
		"offset done), lag (messages it will still be handed), time lag (age of the oldest) and lease.")
	group, adm, done, err := c.connectOneArg(args, "consumer group")
	if err != nil {
		return err
	}
	defer done()
	g, err := adm.ConsumerGroup(a.ctx, group)
	if err != nil {
		return c.notQueen(fmt.Errorf("group show %q: %w", group, err))
	}
	rows := []partitionLagRow{}
	approx := false
	for _, q := range g.Queues {
		approx = approx || q.Approximate
		for _, p := range q.Partitions {
			rows = append(rows, partitionLagRow{q.Queue, p.Partition, p.Cursor, p.Lag, p.TimeLag.Seconds(), p.Leased, p.LeaseID})
		}
	}
	if c.jsonOut() {
		return writeJSON(a.stdout, struct {
			Group      string            `json:"group"`
			Partitions []partitionLagRow `json:"partitions"`
		}{g.Name, rows})
	}
	tw := newTable(a.stdout)
	fmt.Fprintln(tw, "QUEUE\tPARTITION\tCURSOR\tLAG\tTIME LAG\tLEASED")
	for _, r := range rows {
		cursor := fmt.Sprint(r.Cursor)
		if approx && r.Cursor < 0 {
			cursor = "?"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", r.Queue, r.Partition, cursor, r.Lag,
			durationText(time.Duration(r.TimeLagSeconds*float64(time.Second)), false), yesNo(r.Leased))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if approx {
		fmt.Fprintln(a.stdout, "(this broker lists only the partitions the group has a cursor in, and no cursor offsets)")
	}
	return nil
}

func (a *app) lag(args []string) error {
	c := a.command("lag", "[--min N] [--min-time D]",
		"Show each consumer group's lag per queue. With --min or --min-time, exit 1 when any group is\n"+
			"more than N messages or D behind: usable in a cron job or a health check.")
	minLag := c.fs.Int64("min", -1, "a group more than this many messages behind is over")
	minTime := c.fs.Duration("min-time", -1, "a group whose oldest owed message is older than this is over, e.g. 5m")
	group := c.fs.String("group", "", "only this consumer group")
	queue := c.fs.String("queue", "", "only this queue")
	if err := c.noArgs(args); err != nil {
		return err
	}
	switch {
	case c.flagSet("min") && *minLag < 0:
		return c.usagef("lag: --min %d: must not be negative", *minLag)
	case c.flagSet("min-time") && *minTime < 0:
		return c.usagef("lag: --min-time %s: must not be negative", *minTime)
	}
	adm, done, err := c.connect()
	if err != nil {
		return err
	}
	defer done()
	groups, err := adm.ConsumerGroups(a.ctx)
	if err != nil {
		return c.notQueen(fmt.Errorf("lag: %w", err))
	}
	rows := []groupRow{}
	over := 0
	for _, r := range groupRows(groups) {
		if (*group != "" && r.Group != *group) || (*queue != "" && r.Queue != *queue) {
			continue
		}
		r.Over = (c.flagSet("min") && r.Lag > *minLag) ||
			(c.flagSet("min-time") && time.Duration(r.TimeLagSeconds*float64(time.Second)) > *minTime)
		if r.Over {
			over++
		}
		rows = append(rows, r)
	}
	if c.jsonOut() {
		if err := writeJSON(a.stdout, rows); err != nil {
			return err
		}
	} else if err := printGroups(a.stdout, rows); err != nil {
		return err
	}
	if over > 0 {
		fmt.Fprintf(a.stderr, "queenctl: lag: %d of %d group/queue pairs over the bound\n", over, len(rows))
		return errReported
	}
	return nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
