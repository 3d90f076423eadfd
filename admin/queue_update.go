package admin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/wire"
)

// namedOptions are the broker's option keys that QueueOptions has fields for; every other
// stored option is sent back as it was read.
var namedOptions = []string{"leaseTime", "retryLimit", "deadLetterQueue", "retryDelay", "delayedProcessing", "ttl"}

// UpdateQueue changes some of a queue's options and keeps the others: it reads the queue's
// options and labels, lets change edit them, and configures the queue with the result. change
// receives every option as the broker stored it (RetryLimit and DeadLetterQueue set, Namespace
// and Task as they are), so what it leaves alone keeps its value, on a 0.15 broker too, whose
// configure would otherwise reset every option it is not sent:
//
//	err := a.UpdateQueue(ctx, "orders", func(o *admin.QueueOptions) {
//		o.RetryLimit = new(5) // the lease time, the dead-letter switch and the labels stay
//	})
//
// A queue that does not exist is created, change starting from the zero QueueOptions (the
// broker's defaults). The read and the configure are two requests: an UpdateQueue running at
// the same time on the same queue may have its change overwritten. Options the broker does not
// report are not kept: a 0.15 broker reports neither DelayedProcessing nor a few options this
// package has no field for, so they return to its defaults unless change sets them.
func (a *Admin) UpdateQueue(ctx context.Context, queue string, change func(*QueueOptions)) error {
	if err := validName("queue", queue); err != nil {
		return err
	}
	if change == nil {
		return invalid("change", "nil", "must be a function")
	}
	o, kept, err := a.storedOptions(ctx, queue)
	if err != nil {
		return fmt.Errorf("admin: updating queue %q: reading its options: %w", queue, err)
	}
	change(&o)
	_, err = a.configure(ctx, queue, o, kept)
	return err
}

// storedOptions reads queue's options and labels as QueueOptions, with the stored options
// QueueOptions has no field for; a queue that does not exist has the zero QueueOptions.
func (a *Admin) storedOptions(ctx context.Context, queue string) (QueueOptions, map[string]wire.Value, error) {
	var d wire.QueueDetail
	err := a.read(ctx, at(route.QueueDetail, queue), nil, "queue "+quote(queue), &d)
	if errors.Is(err, errEmpty) || errors.Is(err, ErrNotFound) {
		return QueueOptions{}, nil, nil
	}
	if err != nil {
		return QueueOptions{}, nil, err
	}
	c := d.Queue.Config
	o := QueueOptions{
		LeaseTime:       time.Duration(c.LeaseTime) * time.Second,
		RetryLimit:      new(int(c.RetryLimit)),
		DeadLetterQueue: new(c.DeadLetterQueue),
		Namespace:       d.Queue.Namespace,
		Task:            d.Queue.Task,
		RetryDelay:      time.Duration(deref(c.RetryDelay)) * time.Millisecond,
		TTL:             time.Duration(deref(c.TTL)) * time.Second,
	}
	kept := map[string]wire.Value{}
	if len(d.Queue.Options) > 0 { // a 2.0 broker's stored options, as configure echoed them
		for k, v := range d.Queue.Options {
			kept[k] = v
		}
		var delay int64
		if v, ok := kept["delayedProcessing"]; ok && wire.Unmarshal(v, &delay) == nil {
			o.DelayedProcessing = time.Duration(delay) * time.Second
		}
		for _, k := range namedOptions {
			delete(kept, k)
		}
	} else { // a 0.15 broker reports these two outside its options
		if n := deref(c.MaxQueueSize); n != 0 {
			kept["maxSize"] = wire.Value(fmt.Sprint(n))
		}
		if d.Queue.Priority != 0 {
			kept["priority"] = wire.Value(fmt.Sprint(d.Queue.Priority))
		}
	}
	return o, kept, nil
}
