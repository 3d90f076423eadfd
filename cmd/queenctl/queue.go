package main

import (
	"fmt"

	"github.com/queenmq/queen-go/admin"
)

func (a *app) queueConfigure(args []string) error {
	c := a.command("queue configure", "Q [--lease-time D] [--retry-limit N] [--no-dlq] [--namespace N] [--task T]",
		"Create queue Q if missing and set its options. Configuring replaces: an option not given\n"+
			"takes the broker's default again (lease time 60s, retry limit 3, dead-letter queue on).")
	leaseTime := c.fs.Duration("lease-time", 0, "lease duration in whole seconds, e.g. 30s (default: the broker's, 60s)")
	retryLimit := c.fs.Int("retry-limit", 0, "failed deliveries before a message is dead-lettered (default: the broker's, 3)")
	noDLQ := c.fs.Bool("no-dlq", false, "drop messages that run out of retries instead of filing them")
	namespace := c.fs.String("namespace", "", "namespace label, for discovery pops")
	task := c.fs.String("task", "", "task label, for discovery pops")
	pos, err := c.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return c.usagef("queue configure: give exactly one queue name, got %d (%q)", len(pos), pos)
	}
	opts := admin.QueueOptions{LeaseTime: *leaseTime, Namespace: *namespace, Task: *task}
	if c.flagSet("retry-limit") {
		opts.RetryLimit = retryLimit
	}
	if *noDLQ {
		opts.DeadLetterQueue = new(false)
	}
	adm, done, err := c.connect()
	if err != nil {
		return err
	}
	defer done()
	cfg, err := adm.Configure(a.ctx, pos[0], opts)
	if err != nil {
		return fmt.Errorf("queue configure %q: %w", pos[0], err)
	}
	if c.jsonOut() {
		return writeJSON(a.stdout, struct {
			Queue            string `json:"queue"`
			QueueID          string `json:"queueId"`
			PartitionID      string `json:"partitionId"`
			Namespace        string `json:"namespace"`
			Task             string `json:"task"`
			LeaseTimeSeconds int64  `json:"leaseTimeSeconds"`
			RetryLimit       int    `json:"retryLimit"`
			DeadLetterQueue  bool   `json:"deadLetterQueue"`
		}{cfg.Queue, cfg.QueueID, cfg.PartitionID, cfg.Namespace, cfg.Task, int64(cfg.LeaseTime.Seconds()), cfg.RetryLimit, cfg.DeadLetterQueue})
	}
	tw := newTable(a.stdout)
	fmt.Fprintln(tw, "QUEUE\tLEASE TIME\tRETRY LIMIT\tDEAD-LETTER QUEUE\tNAMESPACE\tTASK")
	fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", cfg.Queue, cfg.LeaseTime, cfg.RetryLimit, onOff(cfg.DeadLetterQueue), dash(cfg.Namespace), dash(cfg.Task))
	return tw.Flush()
}

func (a *app) queueDelete(args []string) error {
	c := a.command("queue delete", "Q", "Delete queue Q with all its partitions, messages, cursors, leases and dead letters.")
	pos, err := c.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return c.usagef("queue delete: give exactly one queue name, got %d (%q)", len(pos), pos)
	}
	adm, done, err := c.connect()
	if err != nil {
		return err
	}
	defer done()
	if err := adm.DeleteQueue(a.ctx, pos[0]); err != nil {
		return fmt.Errorf("queue delete %q: %w", pos[0], err)
	}
	if c.jsonOut() {
		return writeJSON(a.stdout, struct {
			Queue   string `json:"queue"`
			Deleted bool   `json:"deleted"`
		}{pos[0], true})
	}
	fmt.Fprintf(a.stdout, "deleted queue %s\n", pos[0])
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
