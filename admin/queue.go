package admin

import (
	"context"
	"time"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/wire"
)

// QueueOptions configures a queue. [Admin.ConfigureQueue] replaces, it does not merge: every
// option left unset takes the broker's default again, whatever it was before.
// [Admin.UpdateQueue] changes some options and keeps the others.
type QueueOptions struct {
	LeaseTime       time.Duration // whole seconds; 0: broker default (60s; 300s on 0.15)
	RetryLimit      *int          // nil: broker default (3); new(0) for no retries
	DeadLetterQueue *bool         // nil: broker default (on); new(false) drops instead of filing (ignored by 0.15)
	Namespace, Task string        // labels for discovery pops; "" clears them

	// Options a 0.15 broker applies; a 2.0 broker stores and echoes them without effect.
	RetryDelay        time.Duration // wait before a failed message comes back; whole milliseconds; 0: broker default
	DelayedProcessing time.Duration // hold new messages this long before delivery; whole seconds; 0: none
	TTL               time.Duration // message time to live; whole seconds; 0: broker default
}

// QueueConfig is a queue's configuration as the broker applied it.
type QueueConfig struct {
	Queue           string        `json:"queue"`
	QueueID         string        `json:"queueId"`
	PartitionID     string        `json:"partitionId"` // the Default partition's
	Namespace       string        `json:"namespace"`
	Task            string        `json:"task"`
	LeaseTime       time.Duration `json:"leaseTime"`
	RetryLimit      int           `json:"retryLimit"`
	DeadLetterQueue bool          `json:"deadLetterQueue"`
	// DeadLetterQueueIgnored: the broker files dead letters whatever DeadLetterQueue says (0.15).
	DeadLetterQueueIgnored bool `json:"deadLetterQueueIgnored"`
}

// ConfigureQueue creates the queue (and its Default partition) if missing and sets its options
// and labels. It never touches messages, cursors, leases or dead letters; a new LeaseTime
// applies to later leases.
func (a *Admin) ConfigureQueue(ctx context.Context, queue string, o QueueOptions) error {
	_, err := a.Configure(ctx, queue, o)
	return err
}

// Configure is ConfigureQueue, with the configuration the broker applied.
func (a *Admin) Configure(ctx context.Context, queue string, o QueueOptions) (QueueConfig, error) {
	if err := validName("queue", queue); err != nil {
		return QueueConfig{}, err
	}
	return a.configure(ctx, queue, o, nil)
}

// configure sends o, and the options in kept that QueueOptions does not name.
func (a *Admin) configure(ctx context.Context, queue string, o QueueOptions, kept map[string]wire.Value) (QueueConfig, error) {
	opts, err := o.wire()
	if err != nil {
		return QueueConfig{}, err
	}
	if len(kept) > 0 {
		opts.Other = kept
	}
	body := wire.ConfigureRequest{Queue: queue, Namespace: o.Namespace, Task: o.Task, Options: &opts}
	var answer wire.ConfigureAnswer
	if err := a.call(ctx, at(route.Configure), nil, body, &answer); err != nil {
		return QueueConfig{}, notFound(err, "the configure route")
	}
	return QueueConfig{
		Queue:           answer.Queue,
		QueueID:         answer.QueueID,
		PartitionID:     answer.PartitionID,
		Namespace:       answer.Namespace,
		Task:            answer.Task,
		LeaseTime:       time.Duration(deref(answer.Options.LeaseTime)) * time.Second,
		RetryLimit:      int(deref(answer.Options.RetryLimit)),
		DeadLetterQueue: deref(answer.Options.DeadLetterQueue),
		// Only a 0.15 broker echoes its whole option set, dlqAfterMaxRetries included; it
		// ignores deadLetterQueue.
		DeadLetterQueueIgnored: answer.Options.Other["dlqAfterMaxRetries"] != nil,
	}, nil
}

// DeleteQueue removes the queue with all its partitions, messages, cursors, leases and dead
// letters. An unknown queue gives ErrNotFound, unless the request had to be sent again after
// its answer was lost: the first request may have deleted the queue, so that is
// queen.ErrOutcomeUnknown.
func (a *Admin) DeleteQueue(ctx context.Context, queue string) error {
	if err := validName("queue", queue); err != nil {
		return err
	}
	var answer wire.DeleteQueueAnswer
	ctx, sends := countSends(ctx)
	if err := a.call(ctx, at(route.DeleteQueue, queue), nil, nil, &answer); err != nil {
		return notFound(err, "queue "+quote(queue))
	}
	if answer.Existed != nil && !*answer.Existed { // a 0.15 broker's answer for an unknown queue
		return sends.deletedNothing("queue "+quote(queue), "existed false")
	}
	return nil
}

func (o QueueOptions) wire() (wire.QueueOptions, error) {
	var w wire.QueueOptions
	secs, err := wholeUnits("LeaseTime", o.LeaseTime, time.Second)
	if err != nil {
		return w, err
	}
	if secs > 0 {
		w.LeaseTime = &secs
	}
	if o.RetryLimit != nil {
		if *o.RetryLimit < 0 {
			return w, invalid("RetryLimit", *o.RetryLimit, "must not be negative")
		}
		limit := int64(*o.RetryLimit)
		w.RetryLimit = &limit
	}
	w.DeadLetterQueue = o.DeadLetterQueue
	for _, d := range []struct {
		name string
		v    time.Duration
		unit time.Duration
		dst  **int64
	}{
		{"RetryDelay", o.RetryDelay, time.Millisecond, &w.RetryDelay},
		{"DelayedProcessing", o.DelayedProcessing, time.Second, &w.DelayedProcessing},
		{"TTL", o.TTL, time.Second, &w.TTL},
	} {
		n, err := wholeUnits(d.name, d.v, d.unit)
		if err != nil {
			return w, err
		}
		if n > 0 {
			*d.dst = &n
		}
	}
	return w, nil
}

// wholeUnits converts d to a count of unit, refusing negative and fractional values (the broker
// takes integers).
func wholeUnits(field string, d, unit time.Duration) (int64, error) {
	switch {
	case d < 0:
		return 0, invalid(field, d, "must not be negative")
	case d > 0 && d < unit:
		return 0, invalid(field, d, "must be at least "+unit.String())
	case d%unit != 0:
		return 0, invalid(field, d, "must be a whole number of "+unitName(unit))
	}
	return int64(d / unit), nil
}

func unitName(unit time.Duration) string {
	if unit == time.Millisecond {
		return "milliseconds"
	}
	return "seconds"
}
