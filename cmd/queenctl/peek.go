package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
)

// tableTime is how tables show a time: UTC, to the millisecond, always the same width.
const tableTime = "2006-01-02T15:04:05.000Z"

// messageLine is one printed message: a table line, or an NDJSON object with --json.
type messageLine struct {
	Queue         string          `json:"queue"`
	Partition     string          `json:"partition"`
	PartitionID   string          `json:"partitionId"`
	Offset        int64           `json:"offset"` // -1: the broker does not number messages
	TransactionID string          `json:"transactionId"`
	ID            string          `json:"id"`
	CreatedAt     time.Time       `json:"createdAt"`
	Status        string          `json:"status,omitempty"`
	Data          json.RawMessage `json:"data"`
}

func storedLine(queue string, m admin.StoredMessage) messageLine {
	return messageLine{queue, m.Partition, m.PartitionID, m.Offset, m.TransactionID, m.ID, m.CreatedAt, m.Status, m.Data}
}

func poppedLine(m *queen.Message) messageLine {
	return messageLine{m.Queue, m.Partition, m.PartitionID, m.Offset, m.TransactionID, m.ID, m.CreatedAt, "", m.Data}
}

// printer writes message lines, one at a time.
type printer struct {
	mu   sync.Mutex
	app  *app
	json bool
}

func (p *printer) print(l messageLine) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json {
		b, err := json.Marshal(l)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(p.app.stdout, "%s\n", b)
		return err
	}
	data := string(l.Data)
	if data == "" {
		data = "-"
	}
	_, err := fmt.Fprintf(p.app.stdout, "%s  %s#%s  %s  %s\n", l.CreatedAt.UTC().Format(tableTime),
		l.Partition, count(l.Offset), l.TransactionID, oneLine(data, 200))
	return err
}

func (a *app) messagesPeek(args []string) error {
	c := a.command("messages peek", "Q [--partition P] [--limit N]",
		"Show queue Q's stored messages, newest first, with their payloads and statuses. A peek: it\n"+
			"leases nothing, and no consumer group's cursor or delivery count moves.")
	partition := c.fs.String("partition", "", "only this partition (name)")
	limit := c.fs.Int("limit", 20, "messages to show, 1 to 1000")
	offset := c.fs.Int("offset", 0, "messages to skip")
	queue, err := c.oneArg(args, "queue name")
	if err != nil {
		return err
	}
	switch {
	case *limit < 1 || *limit > 1000:
		return c.usagef("messages peek: --limit %d: must be from 1 to 1000", *limit)
	case *offset < 0:
		return c.usagef("messages peek: --offset %d: must not be negative", *offset)
	}
	adm, done, err := c.connect()
	if err != nil {
		return err
	}
	defer done()
	msgs, err := adm.Messages(a.ctx, admin.MessageQuery{Queue: queue, Partition: *partition, Limit: *limit, Offset: *offset})
	if err != nil {
		return c.notQueen(fmt.Errorf("messages peek %q: %w", queue, err))
	}
	lines := make([]messageLine, 0, len(msgs))
	for _, m := range msgs {
		lines = append(lines, storedLine(queue, m))
	}
	if c.jsonOut() {
		return writeJSON(a.stdout, lines)
	}
	if len(lines) == 0 {
		fmt.Fprintln(a.stdout, "no messages")
		return nil
	}
	tw := newTable(a.stdout)
	fmt.Fprintln(tw, "CREATED\tPARTITION\tOFFSET\tTRANSACTION ID\tSTATUS\tDATA")
	for _, l := range lines {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", l.CreatedAt.UTC().Format(tableTime), l.Partition, count(l.Offset),
			l.TransactionID, dash(l.Status), oneLine(string(l.Data), 80))
	}
	return tw.Flush()
}

func (a *app) tail(args []string) error {
	c := a.command("tail", "Q [--group G] [-f] [--limit N]",
		"Print queue Q's latest messages, oldest of them first; with -f, keep printing new ones until\n"+
			"interrupted. Without --group it only peeks: nothing is leased or acked. With --group G it\n"+
			"consumes as G: each message printed is acked for G, so G's cursor moves (a group new to the\n"+
			"queue starts with the messages pushed from then on).")
	group := c.fs.String("group", "", "consume as this consumer group (acks what it prints)")
	follow := c.fs.Bool("f", false, "follow: keep printing messages as they arrive")
	partition := c.fs.String("partition", "", "only this partition (name)")
	limit := c.fs.Int("limit", 10, "messages to print first (with --group: per pop)")
	interval := c.fs.Duration("interval", time.Second, "without --group: how often -f looks for new messages")
	queue, err := c.oneArg(args, "queue name")
	if err != nil {
		return err
	}
	switch {
	case *limit < 1 || *limit > 1000:
		return c.usagef("tail: --limit %d: must be from 1 to 1000", *limit)
	case *interval <= 0:
		return c.usagef("tail: --interval %s: must be positive", *interval)
	}
	client, done, err := c.connectClient()
	if err != nil {
		return err
	}
	defer done()
	p := &printer{app: a, json: c.jsonOut()}
	if *group != "" {
		fmt.Fprintf(a.stderr, "queenctl: consuming queue %s as consumer group %s: every message printed is acked\n", queue, *group)
		return a.tailAsGroup(c, client, p, queue, *partition, *group, *limit, *follow)
	}
	if *follow {
		fmt.Fprintf(a.stderr, "queenctl: peeking at queue %s: nothing is leased or acked (interrupt to stop)\n", queue)
	}
	adm := admin.New(client)
	seen := map[string]bool{}
	for first := true; ; first = false {
		n := *limit
		if !first {
			n = 1000
		}
		msgs, err := adm.Messages(a.ctx, admin.MessageQuery{Queue: queue, Partition: *partition, Limit: n})
		if err != nil {
			if a.ctx.Err() != nil {
				return nil
			}
			return c.notQueen(fmt.Errorf("tail %q: %w", queue, err))
		}
		now := make(map[string]bool, len(msgs))
		fresh := 0
		for _, m := range slices.Backward(msgs) {
			key := m.PartitionID + "\x00" + m.TransactionID
			now[key] = true
			if !seen[key] {
				fresh++
				if err := p.print(storedLine(queue, m)); err != nil {
					return err
				}
			}
		}
		if !first && fresh == n && len(msgs) == n {
			fmt.Fprintf(a.stderr, "queenctl: tail: more than %d messages arrived since the last look; older ones were not shown\n", n)
		}
		if !first { // what fell out of the window cannot come back; what is in it stays known
			for k := range seen {
				if !now[k] {
					delete(seen, k)
				}
			}
		}
		for k := range now {
			seen[k] = true
		}
		if !*follow || !a.wait(*interval) {
			return nil
		}
	}
}

// wait pauses for d, or until the command is interrupted; it reports whether to go on.
func (a *app) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-a.ctx.Done():
		return false
	}
}

func (a *app) tailAsGroup(c *command, client *queen.Client, p *printer, queue, partition, group string, limit int, follow bool) error {
	b := client.Queue(queue).Group(group)
	if partition != "" {
		b = b.Partition(partition)
	}
	if follow {
		err := b.Concurrency(1).Each().Consume(a.ctx, func(_ context.Context, m *queen.Message) error {
			return p.print(poppedLine(m))
		})
		if err != nil {
			return c.notQueen(fmt.Errorf("tail %q --group %q: %w", queue, group, err))
		}
		return nil
	}
	msgs, err := b.Batch(limit).Pop(a.ctx)
	if err != nil {
		return c.notQueen(fmt.Errorf("tail %q --group %q: %w", queue, group, err))
	}
	items := make([]queen.AckItem, 0, len(msgs))
	for _, m := range msgs {
		if err := p.print(poppedLine(m)); err != nil {
			return err
		}
		items = append(items, queen.AckItem{Message: m, Status: queen.StatusCompleted})
	}
	if len(items) == 0 {
		return nil
	}
	results, err := client.AckBatch(a.ctx, items)
	if err != nil {
		return fmt.Errorf("tail %q --group %q: acking what it printed: %w", queue, group, err)
	}
	for _, r := range results {
		if !r.Success {
			return fmt.Errorf("tail %q --group %q: the broker refused an ack of %s: %s", queue, group, r.TransactionID, r.Error)
		}
	}
	return nil
}

func (a *app) dlqShow(args []string) error {
	c := a.command("dlq show", "ID [--queue Q]", "Show one dead letter, with its error and payload.")
	queue := c.fs.String("queue", "", "look only among this queue's dead letters")
	pos, err := c.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || pos[0] == "" {
		return c.usagef("dlq show: give exactly one dead-letter id, got %d (%q)", len(pos), pos)
	}
	adm, done, err := c.connect()
	if err != nil {
		return err
	}
	defer done()
	letters, err := adm.AllDeadLetters(a.ctx, admin.DLQQuery{Queue: *queue})
	if err != nil {
		return c.notQueen(fmt.Errorf("dlq show %q: %w", pos[0], err))
	}
	i := slices.IndexFunc(letters, func(d admin.DeadLetter) bool { return d.ID == pos[0] || d.MessageID == pos[0] })
	if i < 0 {
		return fmt.Errorf("dlq show %q: %w: no dead letter has this id", pos[0], admin.ErrNotFound)
	}
	d := letters[i]
	if c.jsonOut() {
		return writeJSON(a.stdout, d)
	}
	tw := newTable(a.stdout)
	for _, kv := range [][2]string{
		{"ID", d.ID}, {"MESSAGE ID", d.MessageID}, {"TRANSACTION ID", d.TransactionID}, {"QUEUE", d.Queue},
		{"PARTITION", d.Partition}, {"GROUP", d.ConsumerGroup}, {"RETRIES", fmt.Sprint(d.RetryCount)},
		{"CREATED AT", timeText(d.CreatedAt)}, {"FAILED AT", timeText(d.FailedAt)}, {"ERROR", d.Error},
	} {
		fmt.Fprintf(tw, "%s\t%s\n", kv[0], kv[1])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "DATA\n%s\n", d.Data)
	return nil
}
