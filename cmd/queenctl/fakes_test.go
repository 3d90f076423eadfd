package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/testutil"
)

// Servers that answer as no well-behaved broker would, for queenctl to survive.

// answerFunc says how a fake answers a request for route rt: a status and a body (sent as
// JSON when it looks like JSON).
type answerFunc func(rt route.Route, r *http.Request) (status int, body string)

// fake starts a server answering every request with answer; the spy keeps every request. The
// environment points QUEEN_URL at it.
func fake(t *testing.T, answer answerFunc) (*testutil.Spy, map[string]string) {
	t.Helper()
	spy, url := testutil.NewSpy(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status, body := answer(testutil.RouteOf(r), r)
		if body != "" && strings.ContainsAny(body[:1], "{[n") {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	return spy, map[string]string{"QUEEN_URL": url}
}

// answers is an answerFunc from a table of routes, with fallback for the others.
func answers(byRoute map[route.Route]string, fallback string) answerFunc {
	return func(rt route.Route, _ *http.Request) (int, string) {
		if body, ok := byRoute[rt]; ok {
			return http.StatusOK, body
		}
		return http.StatusOK, fallback
	}
}

// streams runs queenctl in the background with stdout and stderr told line by line, until
// cancel; done yields its exit status.
func streams(t *testing.T, env map[string]string, args ...string) (out, errs *lines, cancel func(), done <-chan int) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	out, errs = newLines(), newLines()
	codes := make(chan int, 1)
	go func() {
		codes <- runWith(ctx, args, func(k string) string { return env[k] }, strings.NewReader(""), out, errs)
	}()
	t.Cleanup(stop)
	return out, errs, stop, codes
}

// recvUntil receives lines until one contains marker, and returns them all, marker's included.
func recvUntil(t *testing.T, l *lines, marker, what string) []string {
	t.Helper()
	var got []string
	for {
		line := testutil.Recv(t, l.seen, what)
		got = append(got, line)
		if strings.Contains(line, marker) {
			return got
		}
	}
}

// assertPrintable fails when out holds a byte or character a terminal would act on: a
// control character other than a line break, invalid UTF-8, or a bidirectional override.
func assertPrintable(t *testing.T, out, what string) {
	t.Helper()
	assert.True(t, utf8.ValidString(out), "%s: invalid UTF-8 reached the terminal: %q", what, out)
	for _, r := range out {
		control := r < 0x20 && r != '\n' || r >= 0x7f && r <= 0x9f
		reorders := r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x2028 || r == 0x2029
		if control || reorders {
			assert.Failf(t, "a control character reached the terminal", "%s: %U in %q", what, r, out)
			return
		}
	}
}
