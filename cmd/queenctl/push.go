package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/google/uuid"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
)

type pushRow struct {
	TransactionID string `json:"transactionId"`
	Status        string `json:"status"` // queued, duplicate, or failed
	PartitionID   string `json:"partitionId,omitempty"`
	Offset        int64  `json:"offset"` // -1: not reported
	Error         string `json:"error,omitempty"`
}

func (a *app) push(args []string) error {
	c := a.command("push", "Q [--partition P] [--transaction-id T] [--data JSON]",
		"Push messages to queue Q. The payloads are --data, else stdin: one JSON value, or many (NDJSON,\n"+
			"one per line). Many are sent in batches. A repeated transaction id is stored once (duplicate).")
	partition := c.fs.String("partition", "", "partition (name) for every message (default: Default)")
	txID := c.fs.String("transaction-id", "", "transaction id of the one message (makes a retry safe)")
	data := c.fs.String("data", "", "the one payload, as JSON (default: read stdin)")
	queue, err := c.oneArg(args, "queue name")
	if err != nil {
		return err
	}
	var payloads []json.RawMessage
	if c.flagSet("data") {
		payloads, err = readPayloads(bytes.NewReader([]byte(*data)))
	} else {
		payloads, err = readPayloads(a.stdin)
	}
	switch {
	case err != nil:
		return c.usagef("push: %v", err)
	case len(payloads) == 0:
		return c.usagef("push: no payload: give --data JSON, or JSON values on stdin")
	case *txID != "" && len(payloads) > 1:
		return c.usagef("push: --transaction-id names one message, but %d payloads were given", len(payloads))
	}
	client, done, err := c.connectClient()
	if err != nil {
		return err
	}
	defer done()
	items := make([]queen.PushItem, len(payloads))
	for i, p := range payloads {
		items[i] = queen.PushItem{Data: p, Partition: *partition, TransactionID: *txID}
	}
	rows, err := a.send(client, queue, items)
	if err != nil {
		return fmt.Errorf("push %q: %w", queue, c.notQueen(err))
	}
	failed := 0
	for _, r := range rows {
		if r.Status == "failed" {
			failed++
			fmt.Fprintf(a.stderr, "queenctl: push %s: %s\n", r.TransactionID, r.Error)
		}
	}
	if c.jsonOut() {
		if err := writeJSON(a.stdout, rows); err != nil {
			return err
		}
	} else {
		tw := newTable(a.stdout)
		fmt.Fprintln(tw, "TRANSACTION ID\tSTATUS\tPARTITION ID\tOFFSET")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.TransactionID, r.Status, dash(r.PartitionID), count(r.Offset))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if failed > 0 {
		return errReported
	}
	return nil
}

// readPayloads reads successive JSON values: one value, or NDJSON.
func readPayloads(r io.Reader) ([]json.RawMessage, error) {
	dec := json.NewDecoder(r)
	var out []json.RawMessage
	for {
		var v json.RawMessage
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("payload %d is not JSON: %v", len(out)+1, err)
		}
		out = append(out, v)
	}
}

// pushTimeout bounds a push of many messages: what is unanswered by then is reported failed.
const pushTimeout = 30 * time.Second

// send pushes one item with Push, and many through a Producer, in batches; rows follow items.
func (a *app) send(client *queen.Client, queue string, items []queen.PushItem) ([]pushRow, error) {
	if len(items) == 1 {
		res, err := client.Queue(queue).Push(a.ctx, items...)
		if err != nil {
			return nil, err
		}
		r := res[0]
		return []pushRow{{TransactionID: r.TransactionID, Status: r.Status, PartitionID: r.PartitionID, Offset: r.Offset}}, nil
	}
	// The Producer retries until told to stop: make sure a broker answers before handing it work,
	// and give it a bounded time to finish.
	if _, err := admin.New(client).Health(a.ctx); err != nil {
		return nil, err
	}
	rows := make([]pushRow, len(items))
	index := make(map[string]int, len(items))
	for i := range items {
		items[i].TransactionID = uuid.NewString() // so each answer finds its row
		index[items[i].TransactionID] = i
	}
	var mu sync.Mutex
	p, err := client.NewProducer(queen.ProducerConfig{OnResult: func(_ string, item queen.PushItem, res queen.PushResult, err error) {
		mu.Lock()
		defer mu.Unlock()
		row := pushRow{TransactionID: item.TransactionID, Status: res.Status, PartitionID: res.PartitionID, Offset: res.Offset}
		if err != nil {
			row = pushRow{TransactionID: item.TransactionID, Status: "failed", Offset: -1, Error: err.Error()}
		}
		rows[index[item.TransactionID]] = row
	}})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(a.ctx, pushTimeout)
	defer cancel()
	for _, it := range items {
		if err := p.Send(ctx, queue, it); err != nil {
			_ = p.Close(ctx)
			return nil, err
		}
	}
	closeErr := p.Close(ctx) // on a timeout every unanswered item gets its error row
	mu.Lock()
	defer mu.Unlock()
	for _, r := range rows {
		if r.Status == "" {
			return nil, closeErr
		}
	}
	return rows, nil
}
