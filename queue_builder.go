package queen

import (
	"context"
	"time"
)

// SubscriptionMode says where a consumer group starts on its first pop of a queue.
type SubscriptionMode string

const (
	// SubscribeNew starts with the messages stored after the group's first pop (the broker default).
	SubscribeNew SubscriptionMode = "new"
	// SubscribeAll starts at the oldest retained message.
	SubscribeAll SubscriptionMode = "all"
)

// Handler handles one message. Its return decides the ack: nil completes the message, an error
// fails it (spending a retry), Retry(err) redelivers without spending one, DeadLetter(err) files it.
type Handler func(ctx context.Context, m *Message) error

// BatchHandler handles the messages of one leased partition, in offset order.
type BatchHandler func(ctx context.Context, msgs []*Message) error

// Builder limits, checked by the terminal call.
const (
	maxBatch       = 10000
	maxPartitions  = 64
	maxPollTimeout = 60 * time.Second
)

// QueueBuilder is an immutable description of where and how to consume or push. Every method
// returns a changed copy, so a builder is safe to share and to extend in several directions.
// Settings are validated by the terminal call (Pop, Push, Consume), before any request is sent.
type QueueBuilder struct {
	client *Client

	queue, partition, group string
	namespace, task         string

	mode    SubscriptionMode
	modeSet bool
	from    time.Time
	fromSet bool

	batch, partitions  int
	batchSet, partsSet bool
	wait               *bool
	timeout            time.Duration
	timeoutSet         bool
	leaseTime          time.Duration
	leaseSet           bool
	autopilot          *bool
	conflation         bool
	autoAck            *bool
	renew, renewSet    bool
	renewEvery         time.Duration
	handlerTimeout     time.Duration
	maxInFlightBytes   int64
	concurrency        int
	concurrencySet     bool
	limit              int
	limitSet           bool
	idleTimeout        time.Duration
	idleSet            bool
	shutdownTimeout    time.Duration
	shutdownSet        bool
	onError            func(m *Message, err error)
	middleware         []Middleware // Use: this loop's, inside the client's
	retryMin, retryMax time.Duration
	backoffSet         bool
	ackEveryN          int
	ackEveryD          time.Duration
	ackEverySet        bool
}

// EachBuilder is a QueueBuilder whose Consume calls the handler once per message.
type EachBuilder struct {
	b QueueBuilder
}

// Queue starts a builder for the named queue. With Namespace or Task, name may be empty:
// the pop then discovers a queue by its labels.
func (c *Client) Queue(name string) QueueBuilder {
	return QueueBuilder{client: c, queue: name}
}

// Partition restricts pops to the partition of that name, and is where Push stores.
// Default: any partition for pops, "Default" for pushes.
func (b QueueBuilder) Partition(name string) QueueBuilder { b.partition = name; return b }

// Group names the consumer group. Default: none, the shared queue-mode group.
func (b QueueBuilder) Group(name string) QueueBuilder { b.group = name; return b }

// SubscriptionMode sets where a new group starts. Default: SubscribeNew.
func (b QueueBuilder) SubscriptionMode(m SubscriptionMode) QueueBuilder {
	b.mode, b.modeSet = m, true
	return b
}

// SubscriptionFrom starts a new group at the messages pushed at or after t. Default: unset.
func (b QueueBuilder) SubscriptionFrom(t time.Time) QueueBuilder {
	b.from, b.fromSet = t, true
	return b
}

// Batch caps the messages of one pop, 1..10000. Default: 1 for Pop; for Consume, chosen by the
// broker's autopilot, or by the client (from its handler's pace and the lease, up to 1000)
// against a broker that does not size pops itself.
func (b QueueBuilder) Batch(n int) QueueBuilder { b.batch, b.batchSet = n, true; return b }

// Wait makes pops long-poll until a message arrives or Timeout passes.
// Default: true for Consume, false for Pop.
func (b QueueBuilder) Wait(on bool) QueueBuilder { b.wait = &on; return b }

// Timeout is the long-poll length of one request, 0..60s. Default: 30s.
func (b QueueBuilder) Timeout(d time.Duration) QueueBuilder {
	b.timeout, b.timeoutSet = d, true
	return b
}

// Partitions claims up to n partitions in one pop, 1..64. Default: 1, or chosen by autopilot.
func (b QueueBuilder) Partitions(n int) QueueBuilder { b.partitions, b.partsSet = n, true; return b }

// LeaseTime sets the lease of each pop (whole seconds, at least 1s). Default: the queue's leaseTime.
func (b QueueBuilder) LeaseTime(d time.Duration) QueueBuilder {
	b.leaseTime, b.leaseSet = d, true
	return b
}

// Autopilot lets the broker size batch and partitions. Default: true for Consume, false for Pop.
func (b QueueBuilder) Autopilot(on bool) QueueBuilder { b.autopilot = &on; return b }

// Conflation delivers only the newest message of each partition to the group. Default: false.
func (b QueueBuilder) Conflation(on bool) QueueBuilder { b.conflation = on; return b }

// AutoAck in Consume acks each message when its handler returns (default true); in Pop it asks
// the broker to treat messages as done as it hands them out (at-most-once; default false).
func (b QueueBuilder) AutoAck(on bool) QueueBuilder { b.autoAck = &on; return b }

// RenewLease turns lease renewal on or off for Consume; it is on by default, and
// RenewLease(false, 0) turns it off. While a batch is handled its lease is extended every
// `every`, or, with every 0 (the default), each time half of what is left of the lease has
// passed: half of LeaseTime when it is set, else half of the lease the loop learns from the
// broker (the queue's lease; until the loop has learned it, the first renewal goes after 10s at
// the latest). Each renewal extends the lease by LeaseTime when set, else by 60s; a renewal
// never shortens a lease. A refused renewal cancels the handler's ctx with cause ErrLeaseLost,
// and nothing of that batch is acked. One goroutine per Client renews every lease of its loops,
// however many they hold; a renewal that goes out after the lease ran out is logged at warn.
func (b QueueBuilder) RenewLease(on bool, every time.Duration) QueueBuilder {
	b.renew, b.renewSet, b.renewEvery = on, true, every
	return b
}

// HandlerTimeout ends each handler call's ctx after d, with cause ErrHandlerTimeout
// (context.Cause). What the handler then returns is acked as usual: an error spends a retry,
// as the timeout is the message's fault, unlike a stop. Default: 0, no timeout.
func (b QueueBuilder) HandlerTimeout(d time.Duration) QueueBuilder {
	b.handlerTimeout = d
	return b
}

// MaxInFlightBytes bounds the data Consume holds: no pop is sent while the messages the loop
// holds (being handled, waiting for a handler or for a backoff to pass) carry n bytes of data
// or more. Default: 0, no byte bound (the loop still holds at most 2 × Batch × Concurrency
// messages).
func (b QueueBuilder) MaxInFlightBytes(n int64) QueueBuilder {
	b.maxInFlightBytes = n
	return b
}

// Concurrency is the number of partitions handled at once by Consume. Default: 1.
func (b QueueBuilder) Concurrency(n int) QueueBuilder {
	b.concurrency, b.concurrencySet = n, true
	return b
}

// Limit makes Consume return once n messages were handled, whatever their outcome. Default: none.
func (b QueueBuilder) Limit(n int) QueueBuilder { b.limit, b.limitSet = n, true; return b }

// IdleTimeout makes Consume return after d with nothing to handle. Default: none.
func (b QueueBuilder) IdleTimeout(d time.Duration) QueueBuilder {
	b.idleTimeout, b.idleSet = d, true
	return b
}

// ShutdownTimeout is how long in-flight handlers may run on after ctx is done, before their own
// ctx is cancelled. Default: 30s.
func (b QueueBuilder) ShutdownTimeout(d time.Duration) QueueBuilder {
	b.shutdownTimeout, b.shutdownSet = d, true
	return b
}

// OnError receives every handler failure, panic and transport error of Consume (m may be nil).
// It is called from the consume goroutines and must be safe for concurrent use. Default: none.
func (b QueueBuilder) OnError(fn func(m *Message, err error)) QueueBuilder {
	b.onError = fn
	return b
}

// RetryBackoff sets how long Consume holds back a message whose handler failed (an error or a
// panic) or asked to retry, before it is handed to a handler again: at least
// min·2^(failures−1), at most 25 % more, and never above max, where failures counts the
// unsuccessful handler calls of that message by this loop. The loop keeps the message's lease
// meanwhile (renewing it when the wait outlasts it) and sends its ack when the wait ends, so
// a failure still spends one retry and a retry none. A waiting message holds no Concurrency
// slot: other partitions keep flowing. A stop ends every wait at once, acking what it held back
// with its own outcome. (0, 0) turns it off. Default: 100ms to 30s.
func (b QueueBuilder) RetryBackoff(min, max time.Duration) QueueBuilder {
	b.retryMin, b.retryMax, b.backoffSet = min, max, true
	return b
}

// AckEvery makes Consume ack the handled messages of a leased batch as it goes, every n
// messages or every d, whichever comes first (0 turns that trigger off), instead of only at the
// end of the batch: a crash then delivers again at most that much, and the lease stays on the
// rest of the batch. It applies to the per-message form (Each); the batch form refuses it with
// ErrInvalidOption, since a batch handler's messages are acked when it returns. Default: (0, 1s).
func (b QueueBuilder) AckEvery(n int, d time.Duration) QueueBuilder {
	b.ackEveryN, b.ackEveryD, b.ackEverySet = n, d, true
	return b
}

// Namespace selects queues by their namespace label for a discovery pop.
func (b QueueBuilder) Namespace(ns string) QueueBuilder { b.namespace = ns; return b }

// Task selects queues by their task label for a discovery pop.
func (b QueueBuilder) Task(task string) QueueBuilder { b.task = task; return b }

// Each returns the per-message form of Consume.
func (b QueueBuilder) Each() EachBuilder { return EachBuilder{b: b} }

// discovery reports whether pops select the queue by namespace and task labels.
func (b QueueBuilder) discovery() bool { return b.namespace != "" || b.task != "" }

// terminal names the call that validates a builder.
type terminal int

const (
	forPop terminal = iota
	forPush
	forConsume
)

// validate refuses every invalid setting for the given terminal call, naming setting and value.
// Every terminal checks every value, so a bad setting on a shared builder is reported by Push as
// well as by Pop and Consume; the combination rules apply to the pops they concern.
func (b QueueBuilder) validate(t terminal) error {
	if b.client == nil {
		return invalidOption("client", "nil", "builder was not made by Client.Queue")
	}
	if err := b.validateValues(); err != nil {
		return err
	}
	if err := b.validateNames(); err != nil {
		return err
	}
	if t == forPush {
		if b.queue == "" {
			return invalidSetting("Queue", `""`, "queue name must not be empty for a push")
		}
		return nil
	}
	if b.queue == "" && !b.discovery() {
		return invalidSetting("Queue", `""`, "queue name must not be empty (or use Namespace/Task for a discovery pop)")
	}
	if b.discovery() && b.partition != "" {
		return invalidSetting("Partition", b.partition, "a discovery pop (Namespace/Task) cannot name a partition")
	}
	if b.conflation && (b.group == "" || b.group == queueModeGroup) {
		return invalidSetting("Conflation", true, "conflation needs a named consumer group (Group)")
	}
	if t == forPop && b.conflation && b.autoAck != nil && *b.autoAck {
		return invalidSetting("Conflation", true, "conflation cannot be combined with AutoAck(true) on a Pop")
	}
	return nil
}

// validateValues refuses every setting whose value is out of range, whatever the terminal.
func (b QueueBuilder) validateValues() error {
	switch {
	case b.modeSet && b.mode != SubscribeNew && b.mode != SubscribeAll:
		return invalidSetting("SubscriptionMode", b.mode, `subscriptionMode must be "new" or "all"`)
	case b.fromSet && b.from.IsZero():
		return invalidSetting("SubscriptionFrom", b.from, "subscriptionFrom must be a real time")
	case b.batchSet && (b.batch < 1 || b.batch > maxBatch):
		return invalidSetting("Batch", b.batch, "batch must be 1..10000")
	case b.partsSet && (b.partitions < 1 || b.partitions > maxPartitions):
		return invalidSetting("Partitions", b.partitions, "partitions must be 1..64")
	case b.timeoutSet && (b.timeout < 0 || b.timeout > maxPollTimeout):
		return invalidSetting("Timeout", b.timeout, "timeout must be 0..60s")
	case b.leaseSet && b.leaseTime < time.Second:
		return invalidSetting("LeaseTime", b.leaseTime, "leaseTime must be at least 1s")
	case b.renewEvery < 0:
		return invalidSetting("RenewLease", b.renewEvery, "renewLease every must not be negative")
	case b.handlerTimeout < 0:
		return invalidSetting("HandlerTimeout", b.handlerTimeout, "handlerTimeout must not be negative")
	case b.maxInFlightBytes < 0:
		return invalidSetting("MaxInFlightBytes", b.maxInFlightBytes, "maxInFlightBytes must not be negative")
	case b.concurrencySet && b.concurrency < 1:
		return invalidSetting("Concurrency", b.concurrency, "concurrency must be at least 1")
	case b.limitSet && b.limit < 1:
		return invalidSetting("Limit", b.limit, "limit must be at least 1")
	case b.idleSet && b.idleTimeout <= 0:
		return invalidSetting("IdleTimeout", b.idleTimeout, "idleTimeout must be positive")
	case b.shutdownSet && b.shutdownTimeout < 0:
		return invalidSetting("ShutdownTimeout", b.shutdownTimeout, "shutdownTimeout must not be negative")
	case hasNilMiddleware(b.middleware):
		return invalidSetting("Use", "nil", "middleware must not be nil")
	case b.backoffSet && b.retryMin < 0:
		return invalidSetting("RetryBackoff", b.retryMin, "retryBackoff min must not be negative")
	case b.backoffSet && b.retryMax < b.retryMin:
		return invalidSetting("RetryBackoff", b.retryMax, "retryBackoff max must be at least min")
	case b.ackEverySet && b.ackEveryN < 0:
		return invalidSetting("AckEvery", b.ackEveryN, "ackEvery n must not be negative")
	case b.ackEverySet && b.ackEveryD < 0:
		return invalidSetting("AckEvery", b.ackEveryD, "ackEvery d must not be negative")
	}
	return nil
}
