package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
)

// tableTime is how tables show a time: UTC, to the millisecond, always the same width.
const tableTime = "2006-01-02T15:04:05.000Z"

// messageLine is one printed message: a table line, or an object with -o json, ndjson or yaml.
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

// printer writes message lines as they come: one JSON object per line with json or ndjson
// (the stream is NDJSON either way), one YAML document each with yaml, else a text line.
type printer struct {
	mu  sync.Mutex
	app *app
}

func (p *printer) print(l messageLine) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.app.stdout
	switch p.app.format {
	case formatJSON, formatNDJSON:
		b, err := json.Marshal(l)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case formatYAML:
		doc, err := toYAML(l)
		if err != nil {
			return err
		}
		_, err = io.WriteString(w, "---\n"+doc)
		return err
	}
	data := string(l.Data)
	if data == "" {
		data = "-"
	}
	_, err := fmt.Fprintf(w, "%s  %s#%s  %s  %s\n", l.CreatedAt.UTC().Format(tableTime),
		clean(l.Partition), count(l.Offset), clean(l.TransactionID), clean(oneLine(data, 200)))
	return err
}

func (a *app) messagesPeekCommand(parent *cobra.Command) {
	c := a.command(parent, "peek Q [--partition P] [--limit N]",
		"Show queue Q's stored messages, newest first, with their payloads and statuses. A peek: it\n"+
			"leases nothing, and no consumer group's cursor or delivery count moves.")
	c.cmd.ValidArgsFunction = a.queueArg
	partition := c.flags().String("partition", "", "only this partition (name)")
	limit := c.flags().Int("limit", 20, "messages to show, 1 to 1000")
	offset := c.flags().Int("offset", 0, "messages to skip")
	c.oneArg("queue name", func(queue string) error {
		switch {
		case *limit < 1 || *limit > 1000:
			return c.usagef("messages peek: --limit %d: must be from 1 to 1000", *limit)
		case *offset < 0:
			return c.usagef("messages peek: --offset %d: must not be negative", *offset)
		}
		r, err := a.connect()
		if err != nil {
			return err
		}
		msgs, err := ask(r, func(ctx context.Context) ([]admin.StoredMessage, error) {
			return r.adm.Messages(ctx, admin.MessageQuery{Queue: queue, Partition: *partition, Limit: *limit, Offset: *offset})
		})
		if err != nil {
			return r.notQueen(fmt.Errorf("messages peek %q: %w", queue, err))
		}
		if len(msgs) == 0 {
			if err := r.confirmBroker("message list"); err != nil {
				return fmt.Errorf("messages peek %q: %w", queue, err)
			}
		}
		lines := make([]messageLine, 0, len(msgs))
		for _, m := range msgs {
			lines = append(lines, storedLine(queue, m))
		}
		return a.show(lines, func(w io.Writer) error {
			if len(lines) == 0 {
				_, err := fmt.Fprintln(w, "no messages")
				return err
			}
			t := newTable(w, "CREATED", "PARTITION", "OFFSET", "TRANSACTION ID", "STATUS", "DATA")
			for _, l := range lines {
				t.row(l.CreatedAt.UTC().Format(tableTime), l.Partition, count(l.Offset), l.TransactionID, dash(l.Status), oneLine(string(l.Data), 80))
			}
			return t.flush()
		})
	})
}

func (a *app) tailCommand(parent *cobra.Command) {
	c := a.command(parent, "tail Q [--group G] [-f] [--limit N]",
		"Print queue Q's latest messages, oldest of them first; with -f, keep printing new ones, each\n"+
			"once and in order, until interrupted (a queue that does not exist yet is waited for).\n"+
			"Without --group it only peeks: nothing is leased or acked. With --group G it consumes as G:\n"+
			"each message printed is acked for G, so G's cursor moves. A group new to the queue is\n"+
			"created by it, starts with the messages pushed from then on, and stays after tail ends\n"+
			"(queenctl group delete G --queue Q removes it).")
	c.cmd.ValidArgsFunction = a.queueArg
	group := c.flags().String("group", "", "consume as this consumer group (acks what it prints)")
	follow := c.flags().BoolP("follow", "f", false, "follow: keep printing messages as they arrive")
	partition := c.flags().String("partition", "", "only this partition (name)")
	limit := c.flags().Int("limit", 10, "messages to print first (with --group: per pop)")
	interval := c.flags().Duration("interval", time.Second, "without --group: how often -f looks for new messages")
	_ = c.cmd.RegisterFlagCompletionFunc("group", a.completeGroups)
	c.oneArg("queue name", func(queue string) error {
		switch {
		case *limit < 1 || *limit > 1000:
			return c.usagef("tail: --limit %d: must be from 1 to 1000", *limit)
		case *interval <= 0:
			return c.usagef("tail: --interval %s: must be positive", *interval)
		}
		r, err := a.connect()
		if err != nil {
			return err
		}
		p := &printer{app: a}
		if *group != "" {
			return a.tailAsGroup(r, p, queue, *partition, *group, *limit, *follow)
		}
		t := &tailer{r: r, p: p, queue: queue, partition: *partition, limit: *limit, interval: *interval}
		if !*follow {
			return t.once()
		}
		fmt.Fprintf(a.stderr, "queenctl: peeking at queue %s: nothing is leased or acked (interrupt to stop)\n", clean(queue))
		return t.follow()
	})
}

// tailer prints a queue's messages by peeking at them, without a consumer group.
type tailer struct {
	r                *remote
	p                *printer
	queue, partition string
	limit            int
	interval         time.Duration
	seen             seenMessages
}

func (t *tailer) list(n int) ([]admin.StoredMessage, error) {
	return ask(t.r, func(ctx context.Context) ([]admin.StoredMessage, error) {
		return t.r.adm.Messages(ctx, admin.MessageQuery{Queue: t.queue, Partition: t.partition, Limit: n})
	})
}

func (t *tailer) failed(err error) error {
	return t.r.notQueen(fmt.Errorf("tail %q: %w", t.queue, err))
}

// once prints the latest messages, oldest of them first.
func (t *tailer) once() error {
	msgs, err := t.list(t.limit)
	if err != nil {
		return t.failed(err)
	}
	if len(msgs) == 0 {
		if err := t.r.confirmBroker("message list"); err != nil {
			return fmt.Errorf("tail %q: %w", t.queue, err)
		}
	}
	return t.print(chronological(msgs))
}

// follow prints the latest messages, then each message stored after them, once and in order.
func (t *tailer) follow() error {
	a := t.r.app
	waited, err := t.awaitQueue()
	if err != nil || a.ctx.Err() != nil {
		return err
	}
	// The first look prints the newest limit messages, but records a deeper look as seen: where
	// the broker does not number messages, those sharing the newest time with the ones printed
	// are told from new ones only so.
	depth := max(t.limit, look)
	if waited { // everything in a queue that did not exist when tail started is new
		depth = maxLook
	}
	msgs, err := t.list(depth)
	if err != nil {
		return t.failed(err)
	}
	if len(msgs) == 0 {
		if err := t.r.confirmBroker("message list"); err != nil {
			return fmt.Errorf("tail %q: %w", t.queue, err)
		}
	}
	for _, m := range msgs {
		t.seen.add(m)
	}
	if !waited {
		msgs = msgs[:min(len(msgs), t.limit)]
	}
	if err := t.print(chronological(msgs)); err != nil {
		return err
	}
	for a.wait(t.interval) {
		fresh, err := t.fresh()
		if err != nil {
			if a.ctx.Err() != nil {
				return nil
			}
			return t.failed(err)
		}
		if err := t.print(fresh); err != nil {
			return err
		}
	}
	return nil
}

// Each look after the first lists the newest look messages; when every one of them is new,
// more may be behind them, and it looks again maxLook deep.
const (
	look    = 100
	maxLook = 1000
)

// fresh lists the messages stored since the last look, oldest first, and records them.
func (t *tailer) fresh() ([]admin.StoredMessage, error) {
	var msgs []admin.StoredMessage
	var err error
	for n := look; ; n = maxLook {
		if msgs, err = t.list(n); err != nil {
			return nil, err
		}
		if len(msgs) < n || n == maxLook || !t.seen.allNew(msgs) {
			break
		}
	}
	var out []admin.StoredMessage
	for _, m := range msgs {
		if !t.seen.has(m) {
			out = append(out, m)
		}
	}
	if len(out) == maxLook {
		fmt.Fprintf(t.r.app.stderr, "queenctl: tail: more than %d messages arrived since the last look; older ones were not shown\n", maxLook)
	}
	for _, m := range out {
		t.seen.add(m)
	}
	return chronological(out), nil
}

// awaitQueue waits for the queue to exist, reporting whether it had to. It also marks every
// message stored now as seen, partition by partition, where the broker numbers them, so
// that none of them is printed later as if it were new.
func (t *tailer) awaitQueue() (waited bool, err error) {
	a := t.r.app
	for {
		q, err := ask(t.r, func(ctx context.Context) (admin.QueueInfo, error) { return t.r.adm.QueueInfo(ctx, t.queue) })
		switch {
		case err == nil && !waited:
			for _, p := range q.Partitions {
				t.seen.upTo(p.ID, p.LastOffset)
			}
			return false, nil
		case err == nil:
			return true, nil
		case !errors.Is(err, admin.ErrNotFound):
			return waited, t.failed(err)
		case !waited:
			fmt.Fprintf(a.stderr, "queenctl: tail: queue %s does not exist yet; waiting for it (interrupt to stop)\n", clean(t.queue))
		}
		waited = true
		if !a.wait(t.interval) {
			return true, nil
		}
	}
}

func (t *tailer) print(msgs []admin.StoredMessage) error {
	for _, m := range msgs {
		if err := t.p.print(storedLine(t.queue, m)); err != nil {
			return err
		}
	}
	return nil
}

// chronological is a newest-first list oldest first: reversed, then ordered by creation
// time (a broker's order among messages of the same time is kept).
func chronological(newestFirst []admin.StoredMessage) []admin.StoredMessage {
	out := slices.Clone(newestFirst)
	slices.Reverse(out)
	slices.SortStableFunc(out, func(a, b admin.StoredMessage) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out
}

// seenMessages is what tail has printed or found stored when it started. Where the broker
// numbers messages, a partition's highest offset says it all. Where it does not (0.15), the
// newest creation time seen says it, with the messages created at exactly that time: a
// message older than it was stored before the last look, and one of the same time is new
// unless it was seen. What it holds stays bounded whatever the queue's size.
type seenMessages struct {
	offsets map[string]int64 // partition id: the highest offset seen
	at      time.Time        // the newest creation time seen of a message without an offset
	atKeys  map[string]bool  // the messages without an offset created at exactly at
}

func messageKey(m admin.StoredMessage) string {
	return cmp.Or(m.ID, m.PartitionID+"\x00"+m.TransactionID)
}

// upTo marks every message of a partition up to offset as seen.
func (s *seenMessages) upTo(partitionID string, offset int64) {
	if offset < 0 {
		return
	}
	if s.offsets == nil {
		s.offsets = map[string]int64{}
	}
	if cur, ok := s.offsets[partitionID]; !ok || offset > cur {
		s.offsets[partitionID] = offset
	}
}

func (s *seenMessages) add(m admin.StoredMessage) {
	if m.Offset >= 0 {
		s.upTo(m.PartitionID, m.Offset)
		return
	}
	switch {
	case m.CreatedAt.After(s.at):
		s.at, s.atKeys = m.CreatedAt, map[string]bool{messageKey(m): true}
	case m.CreatedAt.Equal(s.at):
		s.atKeys[messageKey(m)] = true
	}
}

func (s *seenMessages) has(m admin.StoredMessage) bool {
	if m.Offset >= 0 {
		hi, ok := s.offsets[m.PartitionID]
		return ok && m.Offset <= hi
	}
	return m.CreatedAt.Before(s.at) || m.CreatedAt.Equal(s.at) && s.atKeys[messageKey(m)]
}

func (s *seenMessages) allNew(msgs []admin.StoredMessage) bool {
	return !slices.ContainsFunc(msgs, s.has)
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

func (a *app) tailAsGroup(r *remote, p *printer, queue, partition, group string, limit int, follow bool) error {
	fmt.Fprintf(a.stderr, "queenctl: consuming queue %s as consumer group %s: every message printed is acked\n", clean(queue), clean(group))
	known, err := groupReads(r, group, queue)
	if err != nil {
		return r.notQueen(fmt.Errorf("tail %q --group %q: %w", queue, group, err))
	}
	if !known {
		fmt.Fprintf(a.stderr, "queenctl: this creates consumer group %s on queue %s, which starts with the messages pushed from now on "+
			"and stays after tail ends; delete it with: queenctl group delete %s --queue %s\n",
			clean(group), clean(queue), clean(group), clean(queue))
	}
	b := r.client.Queue(queue).Group(group)
	if partition != "" {
		b = b.Partition(partition)
	}
	if follow {
		err := b.Concurrency(1).Each().Consume(a.ctx, func(_ context.Context, m *queen.Message) error {
			return p.print(poppedLine(m))
		})
		if err != nil {
			return r.notQueen(fmt.Errorf("tail %q --group %q: %w", queue, group, err))
		}
		return nil
	}
	msgs, err := ask(r, b.Batch(limit).Pop)
	if err != nil {
		return r.notQueen(fmt.Errorf("tail %q --group %q: %w", queue, group, err))
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
	results, err := modify(r, fmt.Sprintf("tail %q --group %q: acking what it printed", queue, group),
		func(ctx context.Context) ([]queen.AckResult, error) { return r.client.AckBatch(ctx, items) })
	if err != nil {
		return err
	}
	for _, res := range results {
		if !res.Success {
			return fmt.Errorf("tail %q --group %q: the broker refused an ack of %s: %s", queue, group, res.TransactionID, res.Error)
		}
	}
	return nil
}

// groupReads reports whether the broker knows the group on the queue (a cursor or a start).
func groupReads(r *remote, group, queue string) (bool, error) {
	g, err := ask(r, func(ctx context.Context) (admin.GroupInfo, error) { return r.adm.ConsumerGroup(ctx, group) })
	switch {
	case errors.Is(err, admin.ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	}
	return slices.ContainsFunc(g.Queues, func(q admin.GroupQueue) bool { return q.Queue == queue }), nil
}

func (a *app) dlqShowCommand(parent *cobra.Command) {
	c := a.command(parent, "show ID [--queue Q]", "Show one dead letter, with its error and payload.")
	queue := c.flags().String("queue", "", "look only among this queue's dead letters")
	_ = c.cmd.RegisterFlagCompletionFunc("queue", a.completeQueues)
	c.anyArgs(func(pos []string) error {
		if len(pos) != 1 || pos[0] == "" {
			return c.usagef("dlq show: give exactly one dead-letter id, got %d (%q)", len(pos), pos)
		}
		r, err := a.connect()
		if err != nil {
			return err
		}
		letters, err := ask(r, func(ctx context.Context) ([]admin.DeadLetter, error) {
			return r.adm.AllDeadLetters(ctx, admin.DLQQuery{Queue: *queue})
		})
		if err != nil {
			return r.notQueen(fmt.Errorf("dlq show %q: %w", pos[0], err))
		}
		i := slices.IndexFunc(letters, func(d admin.DeadLetter) bool { return d.ID == pos[0] || d.MessageID == pos[0] })
		if i < 0 {
			if len(letters) == 0 {
				if err := r.confirmBroker("dead-letter list"); err != nil {
					return fmt.Errorf("dlq show %q: %w", pos[0], err)
				}
			}
			return fmt.Errorf("dlq show %q: %w: no dead letter has this id", pos[0], admin.ErrNotFound)
		}
		d := letters[i]
		return a.show(d, func(w io.Writer) error {
			t := newTable(w)
			for _, kv := range [][2]string{
				{"ID", d.ID}, {"MESSAGE ID", d.MessageID}, {"TRANSACTION ID", d.TransactionID}, {"QUEUE", d.Queue},
				{"PARTITION", d.Partition}, {"GROUP", d.ConsumerGroup}, {"RETRIES", fmt.Sprint(d.RetryCount)},
				{"CREATED AT", timeText(d.CreatedAt)}, {"FAILED AT", timeText(d.FailedAt)}, {"ERROR", d.Error},
			} {
				t.row(kv[0], kv[1])
			}
			if err := t.flush(); err != nil {
				return err
			}
			_, err := fmt.Fprintf(w, "DATA\n%s\n", cleanData(d.Data))
			return err
		})
	})
}

// cleanData is a payload as stored, its JSON layout (line breaks, indentation) kept and any
// other control character escaped.
func cleanData(data json.RawMessage) string {
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		lines[i] = clean(l)
	}
	return strings.Join(lines, "\n")
}
