// Package queentest runs Queen's reference broker in-process, for tests: the 2.0 consuming
// API over real HTTP on a loopback port, backed by an in-memory engine.
//
//	func TestWorker(t *testing.T) {
//		srv := queentest.NewServer(t, queentest.WithManualClock())
//		client, _ := queen.New(srv.URL())
//		// push, consume, ack through client...
//		srv.Advance(61 * time.Second) // expire the leases nobody acked
//	}
//
// The broker keeps everything in memory: closing it (NewServer does with t.Cleanup) or the
// test process ending discards every message, cursor and dead letter.
// Delivery is at-least-once, as in production: a message whose lease expires, or that is
// nacked, comes back with a higher deliveryAttempt, so handlers under test see duplicates
// exactly where a real broker would give them.
//
// Time: by default the broker reads the wall clock. WithManualClock stops it, and
// (*Server).Advance moves it, firing lease expiries and passing subscription times without
// sleeping. Long-poll timeouts always run on real time, so a waiting pop never hangs a test.
//
// Helpers for tests: (*Server).Now reads the broker's clock, and (*Server).WaitingPops tells
// how many long polls are parked, so a test can push only once its pop waits. WaitIdle returns
// once a group has finished a queue (woken by the broker's changes, never by polling), Lag and
// DeadLetters read what is left and what was given up, with no client.
//
// Faults: (*Server).Fail makes the next requests of a route answer a 5xx, lose their
// connection, be applied and then lose their answer (the case that makes duplicates), or wait.
// A worker's test can so prove its handler is safe to run twice:
//
//	srv.Fail(queentest.Fault{Route: "push", After: true}) // the next push is stored, its answer lost
//
// Compatibility: WithCompat("0.15") makes the broker behave on the wire as a Queen 0.15 broker
// does, its quirks and data-losing bugs included, so a client can be tested against both
// generations; the default is 2.0. Without WithCompat, NewServer follows the QUEEN_COMPAT
// environment variable, so a whole suite runs against 0.15 with no change to its code:
//
//	QUEEN_COMPAT=0.15 go test ./...
//
// Workers: Run runs a worker (a Consume loop) in a goroutine for the rest of the test, ends its
// ctx when the test calls stop or ends, and fails the test if it gave up with an error nobody
// asked for:
//
//	stop := queentest.Run(t, func(ctx context.Context) error { return worker.Consume(ctx, handle) })
//	// push, then srv.WaitIdle(ctx, queue, group)...
//	require.NoError(t, stop())
//
// Limits: the broker refuses what could make it hold memory, its lock or a connection without
// bound, as a production broker would. A queue, partition or group name is 1 to 255 bytes of
// UTF-8 without control characters, and not "." or ".."; a push carries at most 10,000 items
// and a body at most 32 MiB; a body must be valid UTF-8; a path must be in canonical form (no
// "//", "." or ".." segment, no trailing "/"). A connection must send its headers within 10s
// and its body within 30s of them, is closed after 120s idle, and at most WithMaxConns (4,096)
// are served at once: at the cap a new connection closes the one idle the longest, and a 401
// closes its own. Shutdown bounds how long in-flight requests may run on when it stops.
//
// Options: WithToken (Bearer authentication; /health stays open), WithManualClock /
// WithManualClockAt, WithLogger (slog; startup and shutdown at Info, one line per request at
// Debug), WithAddr (the listen address) and WithMaxConns.
//
// The package depends on nothing but the standard library and the reference broker's own
// packages; it does not import the queen SDK, so the SDK's own tests can use it (its examples
// do, as a user's tests would).
package queentest
