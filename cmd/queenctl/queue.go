package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
)

// defaultPartition is the partition a push without one goes to, and the one configure adds.
const defaultPartition = "Default"

// queueFlags are the options queue configure changes: only those given on the command line.
type queueFlags struct {
	c               *command
	leaseTime       time.Duration
	retryLimit      int
	noDLQ, dlq      bool
	namespace, task string
}

// apply changes o as the flags given say, leaving the rest as it is.
func (f *queueFlags) apply(o *admin.QueueOptions) {
	if f.c.flagSet("lease-time") {
		o.LeaseTime = f.leaseTime
	}
	if f.c.flagSet("retry-limit") {
		o.RetryLimit = new(f.retryLimit)
	}
	if f.noDLQ {
		o.DeadLetterQueue = new(false)
	}
	if f.dlq {
		o.DeadLetterQueue = new(true)
	}
	if f.c.flagSet("namespace") {
		o.Namespace = f.namespace
	}
	if f.c.flagSet("task") {
		o.Task = f.task
	}
}

func (a *app) queueConfigureCommand(parent *cobra.Command) {
	c := a.command(parent, "configure Q [--lease-time D] [--retry-limit N] [--no-dlq | --dlq] [--namespace N] [--task T] [--dry-run]",
		"Create queue Q if missing and change the options given; the others, labels included, keep\n"+
			"their stored values. Prints what changed, and changes nothing when nothing would. A new\n"+
			"queue starts from the broker's defaults (lease time 60s, retry limit 3, dead-letter queue on).\n"+
			"The broker adds an empty partition Default to a queue it configures that has none.")
	c.cmd.ValidArgsFunction = a.queueArg
	f := &queueFlags{c: c}
	c.flags().DurationVar(&f.leaseTime, "lease-time", 0, "lease duration in whole seconds, e.g. 30s")
	c.flags().IntVar(&f.retryLimit, "retry-limit", 0, "failed deliveries before a message is dead-lettered")
	c.flags().BoolVar(&f.noDLQ, "no-dlq", false, "drop messages that run out of retries instead of filing them")
	c.flags().BoolVar(&f.dlq, "dlq", false, "file messages that run out of retries as dead letters")
	c.flags().StringVar(&f.namespace, "namespace", "", "namespace label, for discovery pops")
	c.flags().StringVar(&f.task, "task", "", "task label, for discovery pops")
	dryRun, _ := c.safetyFlags(false)
	c.oneArg("queue name", func(queue string) error {
		switch {
		case f.noDLQ && f.dlq:
			return c.usagef("queue configure: give --dlq or --no-dlq, not both")
		case f.leaseTime < 0 || f.leaseTime%time.Second != 0:
			return fmt.Errorf("%w: queue configure: LeaseTime=%s: must be a whole, non-negative number of seconds", queen.ErrInvalidOption, f.leaseTime)
		case f.retryLimit < 0:
			return fmt.Errorf("%w: queue configure: RetryLimit=%d: must not be negative", queen.ErrInvalidOption, f.retryLimit)
		}
		r, err := a.connect()
		if err != nil {
			return err
		}
		return a.configure(r, queue, f, *dryRun)
	})
}

func (a *app) configure(r *remote, queue string, f *queueFlags, dryRun bool) error {
	info, err := ask(r, func(ctx context.Context) (admin.QueueInfo, error) { return r.adm.QueueInfo(ctx, queue) })
	exists := err == nil
	if err != nil && !errors.Is(err, admin.ErrNotFound) {
		return r.notQueen(fmt.Errorf("queue configure %q: reading its options: %w", queue, err))
	}
	cur := admin.QueueOptions{LeaseTime: 60 * time.Second, RetryLimit: new(3), DeadLetterQueue: new(true)}
	if exists {
		cur = storedOptions(info)
	}
	next := cur
	f.apply(&next)
	changes := diffOptions(cur, next)
	addsDefault := exists && len(changes) > 0 && !hasPartition(info, defaultPartition)
	if !exists {
		changes = append([]change{{Field: "queue", From: "", To: "created"}}, changes...)
	}
	what := fmt.Sprintf("queue configure %q", queue)
	switch {
	case dryRun:
		return a.printChanges(queue, changes, true, addsDefault, admin.QueueConfig{})
	case exists && len(changes) == 0: // nothing to write, and no partition for the broker to add
		return a.printChanges(queue, changes, false, false, configOf(info))
	case !exists:
		cfg, err := modify(r, what, func(ctx context.Context) (admin.QueueConfig, error) { return r.adm.Configure(ctx, queue, next) })
		if err != nil {
			return err
		}
		return a.printChanges(queue, changes, false, false, cfg)
	}
	if err := r.modifyDo(what, func(ctx context.Context) error { return r.adm.UpdateQueue(ctx, queue, f.apply) }); err != nil {
		return err
	}
	after, err := ask(r, func(ctx context.Context) (admin.QueueInfo, error) { return r.adm.QueueInfo(ctx, queue) })
	if err != nil {
		return fmt.Errorf("%s: changed, but reading the options back: %w", what, err)
	}
	return a.printChanges(queue, changes, false, addsDefault && hasPartition(after, defaultPartition), configOf(after))
}

// storedOptions are a queue's options and labels as the broker reports them.
func storedOptions(info admin.QueueInfo) admin.QueueOptions {
	return admin.QueueOptions{LeaseTime: info.Config.LeaseTime, RetryLimit: new(info.Config.RetryLimit),
		DeadLetterQueue: new(info.Config.DeadLetterQueue), Namespace: info.Namespace, Task: info.Task}
}

// configOf is a queue's configuration as QueueInfo reads it back. A broker whose counts are
// background statistics (0.15) files dead letters whatever the setting says.
func configOf(info admin.QueueInfo) admin.QueueConfig {
	cfg := info.Config
	cfg.Queue, cfg.Namespace, cfg.Task = info.Name, info.Namespace, info.Task
	cfg.DeadLetterQueueIgnored = info.Approximate
	return cfg
}

func hasPartition(info admin.QueueInfo, name string) bool {
	return slices.ContainsFunc(info.Partitions, func(p admin.PartitionInfo) bool { return p.Name == name })
}

type change struct {
	Field string `json:"field"`
	From  string `json:"from"`
	To    string `json:"to"`
}

func diffOptions(cur, next admin.QueueOptions) []change {
	var out []change
	add := func(field, from, to string) {
		if from != to {
			out = append(out, change{field, from, to})
		}
	}
	add("lease time", cur.LeaseTime.String(), next.LeaseTime.String())
	add("retry limit", fmt.Sprint(*cur.RetryLimit), fmt.Sprint(*next.RetryLimit))
	add("dead-letter queue", onOff(*cur.DeadLetterQueue), onOff(*next.DeadLetterQueue))
	add("namespace", cur.Namespace, next.Namespace)
	add("task", cur.Task, next.Task)
	return out
}

func (a *app) printChanges(queue string, changes []change, dryRun, addsDefault bool, cfg admin.QueueConfig) error {
	if a.structured() {
		out := struct {
			Queue            string   `json:"queue"`
			DryRun           bool     `json:"dryRun,omitempty"`
			Changes          []change `json:"changes"`
			AddsDefault      bool     `json:"addsDefaultPartition,omitempty"`
			QueueID          string   `json:"queueId,omitempty"`
			PartitionID      string   `json:"partitionId,omitempty"`
			Namespace        string   `json:"namespace"`
			Task             string   `json:"task"`
			LeaseTimeSeconds int64    `json:"leaseTimeSeconds"`
			RetryLimit       int      `json:"retryLimit"`
			DeadLetterQueue  bool     `json:"deadLetterQueue"`
			DLQIgnored       bool     `json:"deadLetterQueueIgnored,omitempty"`
		}{queue, dryRun, changes, addsDefault, cfg.QueueID, cfg.PartitionID, cfg.Namespace, cfg.Task,
			int64(cfg.LeaseTime.Seconds()), cfg.RetryLimit, cfg.DeadLetterQueue || cfg.DeadLetterQueueIgnored,
			cfg.DeadLetterQueueIgnored}
		if out.Changes == nil {
			out.Changes = []change{}
		}
		return a.encode(out)
	}
	w := a.stdout
	name := clean(queue)
	verb := "changed"
	if dryRun {
		verb = "would change"
	}
	if len(changes) == 0 {
		fmt.Fprintf(w, "queue %s: nothing to change\n", name)
	}
	for _, ch := range changes {
		switch {
		case ch.Field == "queue" && dryRun:
			fmt.Fprintf(w, "queue %s: would be created\n", name)
		case ch.Field == "queue":
			fmt.Fprintf(w, "queue %s: created\n", name)
		case ch.Field == "dead-letter queue" && cfg.DeadLetterQueueIgnored:
			fmt.Fprintf(w, "queue %s: dead-letter queue not changed: the broker ignores the setting and files dead letters\n", name)
		default:
			fmt.Fprintf(w, "queue %s: %s %s: %s -> %s\n", name, verb, ch.Field, clean(dash(ch.From)), clean(dash(ch.To)))
		}
	}
	switch {
	case addsDefault && dryRun:
		fmt.Fprintf(w, "queue %s: the broker would also add an empty partition %s, as it does to every queue it configures that has none\n", name, defaultPartition)
	case addsDefault:
		fmt.Fprintf(w, "queue %s: the broker added an empty partition %s, as it does to every queue it configures that has none\n", name, defaultPartition)
	}
	if dryRun {
		fmt.Fprintln(w, "dry run: nothing changed")
		return nil
	}
	t := newTable(w, "QUEUE", "LEASE TIME", "RETRY LIMIT", "DEAD-LETTER QUEUE", "NAMESPACE", "TASK")
	dlq := onOff(cfg.DeadLetterQueue)
	if cfg.DeadLetterQueueIgnored {
		dlq = "on (the broker ignores the setting)"
	}
	t.row(cfg.Queue, cfg.LeaseTime.String(), cfg.RetryLimit, dlq, dash(cfg.Namespace), dash(cfg.Task))
	return t.flush()
}

func (a *app) queueDeleteCommand(parent *cobra.Command) {
	c := a.command(parent, "delete Q [--dry-run] [--yes]",
		"Delete queue Q with all its partitions, messages, cursors, leases and dead letters. A delete\n"+
			"whose answer was lost may have been applied: it is reported so, with exit status 4.")
	c.cmd.ValidArgsFunction = a.queueArg
	dryRun, yes := c.safetyFlags(true)
	c.oneArg("queue name", func(queue string) error {
		r, err := a.connect()
		if err != nil {
			return err
		}
		if *dryRun {
			q, err := ask(r, func(ctx context.Context) (admin.QueueInfo, error) { return r.adm.QueueInfo(ctx, queue) })
			if err != nil {
				return r.notQueen(fmt.Errorf("queue delete %q: %w", queue, err))
			}
			if a.structured() {
				return a.encode(struct {
					DryRun bool `json:"dryRun"`
					queueRow
				}{true, queueRowOf(q)})
			}
			fmt.Fprintf(a.stdout, "dry run: would delete queue %s with %d partitions, %d messages and %s dead letters; nothing changed\n",
				clean(q.Name), q.PartitionCount, q.Messages, count(q.DeadLetters))
			return nil
		}
		if err := c.confirmDelete(*yes, "queue "+queue); err != nil {
			return err
		}
		if err := r.modifyDo(fmt.Sprintf("queue delete %q", queue), func(ctx context.Context) error { return r.adm.DeleteQueue(ctx, queue) }); err != nil {
			return err
		}
		if a.structured() {
			return a.encode(struct {
				Queue   string `json:"queue"`
				Deleted bool   `json:"deleted"`
			}{queue, true})
		}
		fmt.Fprintf(a.stdout, "deleted queue %s\n", clean(queue))
		return nil
	})
}
