package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	queen "github.com/queenmq/queen-go"
)

type pushRow struct {
	TransactionID string `json:"transactionId"`
	Status        string `json:"status"`    // queued, duplicate, or failed
	Partition     string `json:"partition"` // the partition's name
	PartitionID   string `json:"partitionId,omitempty"`
	Offset        int64  `json:"offset"` // -1: not reported
	Error         string `json:"error,omitempty"`
}

func (a *app) pushCommand(parent *cobra.Command) {
	c := a.command(parent, "push Q [--partition P] [--transaction-id T] [--data JSON]",
		"Push messages to queue Q. The payloads are --data, else stdin: one JSON value, or many (NDJSON,\n"+
			"one per line). Many are sent in batches. A repeated transaction id is stored once (duplicate).")
	c.cmd.ValidArgsFunction = a.queueArg
	partition := c.flags().String("partition", "", "partition (name) for every message (default: Default)")
	txID := c.flags().String("transaction-id", "", "transaction id of the one message (makes a retry safe)")
	data := c.flags().String("data", "", "the one payload, as JSON (default: read stdin)")
	c.oneArg("queue name", func(queue string) error {
		var payloads []json.RawMessage
		var err error
		if c.flagSet("data") {
			payloads, err = readPayloads(strings.NewReader(*data))
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
		r, err := a.connect()
		if err != nil {
			return err
		}
		items := make([]queen.PushItem, len(payloads))
		for i, p := range payloads {
			items[i] = queen.PushItem{Data: p, Partition: *partition, TransactionID: *txID}
		}
		r.lost.Store(false)
		rows, err := a.send(r, queue, items)
		if err != nil {
			return r.changeFailed(fmt.Sprintf("push %q", queue), r.notQueen(err))
		}
		name := cmp.Or(*partition, defaultPartition) // where the broker stores every item
		failed := 0
		for i := range rows {
			rows[i].Partition = name
			if rows[i].Status == "failed" {
				failed++
				fmt.Fprintf(a.stderr, "queenctl: push %s: %s\n", clean(rows[i].TransactionID), clean(rows[i].Error))
			}
		}
		err = a.show(rows, func(w io.Writer) error {
			t := newTable(w, "TRANSACTION ID", "STATUS", "PARTITION", "OFFSET")
			for _, r := range rows {
				t.row(r.TransactionID, r.Status, r.Partition, count(r.Offset))
			}
			return t.flush()
		})
		if err != nil {
			return err
		}
		if failed > 0 {
			return reported{exitFailure}
		}
		return nil
	})
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

// pushTimeout bounds a push of many messages (or --timeout, when longer): what is unanswered
// by then is reported failed.
const pushTimeout = 30 * time.Second

// send pushes one item with Push, and many through a Producer, in batches; rows follow items.
func (a *app) send(r *remote, queue string, items []queen.PushItem) ([]pushRow, error) {
	client := r.client
	if len(items) == 1 {
		res, err := ask(r, func(ctx context.Context) ([]queen.PushResult, error) { return client.Queue(queue).Push(ctx, items...) })
		if err != nil {
			return nil, err
		}
		one := res[0]
		return []pushRow{{TransactionID: one.TransactionID, Status: one.Status, PartitionID: one.PartitionID, Offset: one.Offset}}, nil
	}
	// The Producer retries until told to stop: make sure a broker answers before handing it work,
	// and give it a bounded time to finish.
	if _, err := ask(r, r.adm.Health); err != nil {
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
	ctx, cancel := context.WithTimeout(a.ctx, max(pushTimeout, a.global.timeout))
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
	for _, row := range rows {
		if row.Status == "" {
			return nil, closeErr
		}
	}
	return rows, nil
}
