// Package refserver is the HTTP side of Queen's reference broker: the routes of both broker
// generations over an in-memory engine, with the request reading, the answers, the token
// check, the connection bounds and the canonical-path rule a production broker has. The
// engine's generation decides which routes are served and how: a 2.0 engine gets the 2.0
// design, a 0.15 engine answers as a real 0.15 broker does, its quirks included.
//
// Package queentest builds the test API on it; cmd/queen-ref serves it on its own.
package refserver
