// Package queen is the Go client for Queen MQ, a partitioned message queue whose broker speaks
// JSON over HTTP.
//
// A worker runs a consume loop ([EachBuilder.Consume], [QueueBuilder.Consume]). It long-polls, hands each leased partition's messages to the
// handler in offset order while other partitions run on other goroutines, acks completed when
// the handler returns nil, nacks failed when it returns an error or panics, renews leases on
// request, and stops gracefully when ctx is done:
//
//	client, err := queen.New("http://localhost:6632")
//	if err != nil {
//		return err
//	}
//	defer client.Close()
//
//	err = client.Queue("orders").Group("billing").Concurrency(8).Each().
//		Consume(ctx, func(ctx context.Context, m *queen.Message) error {
//			var o Order
//			if err := m.Decode(&o); err != nil {
//				return queen.DeadLetter(err) // will never succeed: file it now
//			}
//			return charge(ctx, o) // nil: completed; error: failed, delivered again
//		})
//
// # Outcomes
//
// The handler's return is the whole outcome: nil acks completed; an error acks failed, which
// spends one of the queue's retries and delivers the message again (then files it as a dead
// letter once the budget is spent); [Retry](err) delivers it again without spending a retry;
// [RetryAfter](d, err) does so no sooner than d; [DeadLetter](err) files it at once. A panic is
// recovered, logged, reported to OnError and acked failed as "panic: <value>". A failed or
// retried message waits out its backoff ([QueueBuilder.RetryBackoff]) before it is handled
// again, and a handler's error after the stop cancelled its ctx is a retry, not a failure.
// [OutcomeOf] tells which ack a return value means, to test a handler without a broker.
//
// Outside a loop, [QueueBuilder.Pop] leases messages and [Client.AckBatch] (or the [Message]
// methods) settles them; a [Producer] ([Client.NewProducer]) batches pushes in the background;
// [Hooks] ([WithHooks]) see every request and ack, and [Middleware] ([WithMiddleware]) wraps
// every handler call, which is what the otelqueen module builds on.
//
// # Delivery
//
// Delivery is at-least-once. A message comes back after a failed ack, a retry, an expired lease
// (a crash, a handler slower than its lease without RenewLease), a lost connection before the
// ack reached the broker, or a shutdown that stopped before the handler started. Handlers must
// be safe to repeat: derive push transaction ids from the input (the broker drops a repeated
// one) and ack inside a [Client.Transaction] where the effect is another message.
// [QueueBuilder.AutoAck] on a Pop is at-most-once: the broker counts the messages done as it hands them out.
//
// # Closing
//
// [Client.Close] stops every consume loop and waits until each has returned, with its last acks
// sent; then every call answers [ErrClosed]. Call it from outside the handlers: a handler that calls
// Close would wait for itself. To stop one loop from its handler, cancel that Consume's ctx.
// [Client.Shutdown](ctx) is Close bounded by ctx, for a handler that ignores its cancelled ctx (the loop
// logs such a handler's message at error level every 10s). Without [WithLogger], warnings and
// errors go to slog.Default(); [Client.Ping] asks a broker whether it is up.
//
// # Testing
//
// Package [github.com/queenmq/queen-go/queentest] runs the reference broker in-process over
// real HTTP:
//
//	srv := queentest.NewServer(t, queentest.WithManualClock())
//	client, _ := queen.New(srv.URL())
//	srv.Advance(time.Minute) // expire leases without sleeping
//
// The client works against Queen 2.0 brokers and tolerates 0.15 brokers' answers (empty pops
// answered 200, errors answered 200, no offsets or delivery attempts: Offset is then -1 and
// DeliveryAttempt 0).
package queen
