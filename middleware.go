package queen

import "context"

// Middleware wraps the handler calls of consume loops, for tracing, metrics, logging or
// changing outcomes. msgs is the one message of an Each handler, or the batch of a
// BatchHandler; next calls the rest of the chain and then the handler with the ctx it is
// given. The error a middleware returns is the outcome the loop acks (see OutcomeOf), so it
// may rewrite it: return nil to complete, Retry(err) to redeliver, and so on. A handler's
// panic reaches middleware as a *PanicError returned by next; a middleware that panics is
// recovered like a handler.
//
// A middleware that does not call next has the loop ack its return as if the handler had
// returned it. It must not keep msgs after it returns.
type Middleware func(ctx context.Context, msgs []*Message, next func(context.Context) error) error

// WithMiddleware wraps every handler call of every consume loop of the client, outside the
// loop's own middleware (QueueBuilder.Use). The first middleware given is the outermost.
func WithMiddleware(mw ...Middleware) Option {
	return func(c *clientConfig) {
		if hasNilMiddleware(mw) {
			c.fail(invalidOption("middleware", "nil", "must not be nil"))
			return
		}
		c.middleware = append(c.middleware, mw...)
	}
}

// Use adds middleware for this builder's consume loops, inside the client's (WithMiddleware).
// The first middleware given is the outermost; a later Use wraps inside an earlier one.
func (b QueueBuilder) Use(mw ...Middleware) QueueBuilder {
	// A fresh slice each time: builders share nothing, whatever they were copied from.
	b.middleware = append(append([]Middleware(nil), b.middleware...), mw...)
	return b
}

// chainMiddleware returns the client's and the loop's middleware as one list, outermost first.
func chainMiddleware(client, loop []Middleware) []Middleware {
	if len(loop) == 0 {
		return client
	}
	return append(append(make([]Middleware, 0, len(client)+len(loop)), client...), loop...)
}

func hasNilMiddleware(mws []Middleware) bool {
	for _, m := range mws {
		if m == nil {
			return true
		}
	}
	return false
}
