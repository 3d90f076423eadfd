package main

import (
	"errors"
	"fmt"
	"time"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
)

func (a *app) queueConfigure(args []string) error {
	c := a.command("queue configure", "Q [--lease-time D] [--retry-limit N] [--no-dlq | --dlq] [--namespace N] [--task T] [--dry-run]",
		"Create queue Q if missing and change the options given; the others keep their current values\n"+
			"(read, merge, write). Prints what changed. A new queue starts from the broker's defaults\n"+
			"(lease time 60s, retry limit 3, dead-letter queue on).")
	leaseTime := c.fs.Duration("lease-time", 0, "lease duration in whole seconds, e.g. 30s")
	retryLimit := c.fs.Int("retry-limit", 0, "failed deliveries before a message is dead-lettered")
	noDLQ := c.fs.Bool("no-dlq", false, "drop messages that run out of retries instead of filing them")
	dlq := c.fs.Bool("dlq", false, "file messages that run out of retries as dead letters")
	namespace := c.fs.String("namespace", "", "namespace label, for discovery pops")
	task := c.fs.String("task", "", "task label, for discovery pops")
	dryRun, _ := c.safetyFlags(false)
	queue, err := c.oneArg(args, "queue name")
	if err != nil {
		return err
	}
	switch {
	case *noDLQ && *dlq:
		return c.usagef("queue configure: give --dlq or --no-dlq, not both")
	case *leaseTime < 0 || *leaseTime%time.Second != 0:
		return fmt.Errorf("%w: queue configure: LeaseTime=%s: must be a whole, non-negative number of seconds", queen.ErrInvalidOption, *leaseTime)
	case *retryLimit < 0:
		return fmt.Errorf("%w: queue configure: RetryLimit=%d: must not be negative", queen.ErrInvalidOption, *retryLimit)
	}
	adm, done, err := c.connect()
	if err != nil {
		return err
	}
	defer done()
	cur := queueSettings{LeaseTime: 60 * time.Second, RetryLimit: 3, DeadLetterQueue: true}
	info, err := adm.QueueInfo(a.ctx, queue)
	exists := err == nil
	switch {
	case exists:
		cur = queueSettings{info.Config.LeaseTime, info.Config.RetryLimit, info.Config.DeadLetterQueue, info.Namespace, info.Task}
	case !errors.Is(err, admin.ErrNotFound):
		return c.notQueen(fmt.Errorf("queue configure %q: reading its options: %w", queue, err))
	}
	next := cur
	if c.flagSet("lease-time") {
		next.LeaseTime = *leaseTime
	}
	if c.flagSet("retry-limit") {
		next.RetryLimit = *retryLimit
	}
	if *noDLQ {
		next.DeadLetterQueue = false
	}
	if *dlq {
		next.DeadLetterQueue = true
	}
	if c.flagSet("namespace") {
		next.Namespace = *namespace
	}
	if c.flagSet("task") {
		next.Task = *task
	}
	changes := cur.diff(next)
	if !exists {
		changes = append([]change{{Field: "queue", From: "", To: "created"}}, changes...)
	}
	if *dryRun {
		return a.printChanges(c, queue, changes, true, admin.QueueConfig{})
	}
	opts := admin.QueueOptions{LeaseTime: next.LeaseTime, RetryLimit: &next.RetryLimit,
		DeadLetterQueue: &next.DeadLetterQueue, Namespace: next.Namespace, Task: next.Task}
	cfg, err := adm.Configure(a.ctx, queue, opts)
	if err != nil {
		return fmt.Errorf("queue configure %q: %w", queue, err)
	}
	return a.printChanges(c, queue, changes, false, cfg)
}

// queueSettings are the options queue configure reads, merges and writes.
type queueSettings struct {
	LeaseTime       time.Duration
	RetryLimit      int
	DeadLetterQueue bool
	Namespace, Task string
}

type change struct {
	Field string `json:"field"`
	From  string `json:"from"`
	To    string `json:"to"`
}

func (s queueSettings) diff(next queueSettings) []change {
	var out []change
	add := func(field, from, to string) {
		if from != to {
			out = append(out, change{field, from, to})
		}
	}
	add("lease time", s.LeaseTime.String(), next.LeaseTime.String())
	add("retry limit", fmt.Sprint(s.RetryLimit), fmt.Sprint(next.RetryLimit))
	add("dead-letter queue", onOff(s.DeadLetterQueue), onOff(next.DeadLetterQueue))
	add("namespace", s.Namespace, next.Namespace)
	add("task", s.Task, next.Task)
	return out
}

func (a *app) printChanges(c *command, queue string, changes []change, dryRun bool, cfg admin.QueueConfig) error {
	if c.jsonOut() {
		out := struct {
			Queue            string   `json:"queue"`
			DryRun           bool     `json:"dryRun,omitempty"`
			Changes          []change `json:"changes"`
			QueueID          string   `json:"queueId,omitempty"`
			PartitionID      string   `json:"partitionId,omitempty"`
			Namespace        string   `json:"namespace"`
			Task             string   `json:"task"`
			LeaseTimeSeconds int64    `json:"leaseTimeSeconds"`
			RetryLimit       int      `json:"retryLimit"`
			DeadLetterQueue  bool     `json:"deadLetterQueue"`
			DLQIgnored       bool     `json:"deadLetterQueueIgnored,omitempty"`
		}{queue, dryRun, changes, cfg.QueueID, cfg.PartitionID, cfg.Namespace, cfg.Task,
			int64(cfg.LeaseTime.Seconds()), cfg.RetryLimit, cfg.DeadLetterQueue || cfg.DeadLetterQueueIgnored,
			cfg.DeadLetterQueueIgnored}
		if out.Changes == nil {
			out.Changes = []change{}
		}
		return writeJSON(a.stdout, out)
	}
	verb := "changed"
	if dryRun {
		verb = "would change"
	}
	if len(changes) == 0 {
		fmt.Fprintf(a.stdout, "queue %s: nothing to change\n", queue)
	}
	for _, ch := range changes {
		if ch.Field == "queue" {
			if dryRun {
				fmt.Fprintf(a.stdout, "queue %s: would be created\n", queue)
			} else {
				fmt.Fprintf(a.stdout, "queue %s: created\n", queue)
			}
			continue
		}
		if ch.Field == "dead-letter queue" && cfg.DeadLetterQueueIgnored {
			fmt.Fprintf(a.stdout, "queue %s: dead-letter queue not changed: the broker ignores the setting and files dead letters\n", queue)
			continue
		}
		fmt.Fprintf(a.stdout, "queue %s: %s %s: %s -> %s\n", queue, verb, ch.Field, dash(ch.From), dash(ch.To))
	}
	if dryRun {
		fmt.Fprintln(a.stdout, "dry run: nothing changed")
		return nil
	}
	tw := newTable(a.stdout)
	fmt.Fprintln(tw, "QUEUE\tLEASE TIME\tRETRY LIMIT\tDEAD-LETTER QUEUE\tNAMESPACE\tTASK")
	dlq := onOff(cfg.DeadLetterQueue)
	if cfg.DeadLetterQueueIgnored {
		dlq = "on (the broker ignores the setting)"
	}
	fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", cfg.Queue, cfg.LeaseTime, cfg.RetryLimit, dlq, dash(cfg.Namespace), dash(cfg.Task))
	return tw.Flush()
}

func (a *app) queueDelete(args []string) error {
	c := a.command("queue delete", "Q [--dry-run] [--yes]", "Delete queue Q with all its partitions, messages, cursors, leases and dead letters.")
	dryRun, yes := c.safetyFlags(true)
	queue, adm, done, err := c.connectOneArg(args, "queue name")
	if err != nil {
		return err
	}
	defer done()
	if *dryRun {
		q, err := adm.QueueInfo(a.ctx, queue)
		if err != nil {
			return c.notQueen(fmt.Errorf("queue delete %q: %w", queue, err))
		}
		if c.jsonOut() {
			return writeJSON(a.stdout, struct {
				DryRun bool `json:"dryRun"`
				queueRow
			}{true, queueRowOf(q)})
		}
		fmt.Fprintf(a.stdout, "dry run: would delete queue %s with %d partitions, %d messages and %s dead letters; nothing changed\n",
			q.Name, q.PartitionCount, q.Messages, count(q.DeadLetters))
		return nil
	}
	if err := c.confirmDelete(*yes, "queue "+queue); err != nil {
		return err
	}
	if err := adm.DeleteQueue(a.ctx, queue); err != nil {
		return fmt.Errorf("queue delete %q: %w", queue, err)
	}
	if c.jsonOut() {
		return writeJSON(a.stdout, struct {
			Queue   string `json:"queue"`
			Deleted bool   `json:"deleted"`
		}{queue, true})
	}
	fmt.Fprintf(a.stdout, "deleted queue %s\n", queue)
	return nil
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
