package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/testutil"
)

// silent is a server that accepts every request and never answers it (until the test ends).
func silent(t *testing.T) map[string]string {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: the handlers return, then the server closes
	return map[string]string{"QUEEN_URL": srv.URL}
}

// mute is a TCP server that accepts connections and never reads or writes.
func mute(t *testing.T) map[string]string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		for c := range accepted {
			_ = c.Close()
		}
	})
	return map[string]string{"QUEEN_URL": "http://" + ln.Addr().String()}
}

// A server that accepts and never answers costs one --timeout, retries included, and exits
// 3 with what it waited for; a read and a change alike get no further.
func TestNoAnswerWithinTheTimeoutExitsThree(t *testing.T) {
	t.Parallel()
	for name, env := range map[string]map[string]string{"http": silent(t), "tcp": mute(t)} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, args := range [][]string{{"ping"}, {"status"}, {"queue", "list"}, {"lag", "--min", "1"},
				{"messages", "peek", "q"}, {"tail", "q"}, {"dlq", "list", "--queue", "q"}, {"version"}} {
				start := time.Now()
				r := queenctl(t, env, append([]string{"--timeout", "150ms"}, args...)...)
				took := time.Since(start)
				assert.Equal(t, exitOffline, r.code, "%v: %s", args, r.stderr)
				assert.Contains(t, r.stderr, "gave no answer within 150ms (--timeout)", args)
				assert.Less(t, took, testutil.Timeout/2, "%v: one bounded wait, not the client's own 30 s per try", args)
			}
		})
	}
}

// A change sent to a server that never answers may have been applied: it says so, and exits
// 4 rather than 3.
func TestChangeWithoutAnswerMayHaveBeenApplied(t *testing.T) {
	t.Parallel()
	env := silent(t)
	for _, args := range [][]string{{"queue", "delete", "q"}, {"group", "delete", "g"},
		{"seek", "--group", "g", "--queue", "q", "--to-end", "--create"}} {
		r := queenctl(t, env, append([]string{"--timeout", "150ms"}, args...)...)
		if args[0] == "seek" { // a seek reads first: that read is what got no answer
			assert.Equal(t, exitOffline, r.code, "%v: %s", args, r.stderr)
			continue
		}
		assert.Equal(t, exitUnknown, r.code, "%v: %s", args, r.stderr)
		assert.Contains(t, r.stderr, "may have been applied", args)
		assert.NotContains(t, r.stderr, "not found", args)
	}
}

// --timeout defaults to 10 s, takes 0 for no limit, and refuses a negative bound.
func TestTimeoutFlag(t *testing.T) {
	t.Parallel()
	r := queenctl(t, nil, "ping", "--help")
	assert.Contains(t, r.stdout, "--timeout duration")
	assert.Contains(t, r.stdout, "(default 10s)")
	r = queenctl(t, nil, "--timeout", "-1s", "ping")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "--timeout -1s")

	b := newBroker(t, "")
	r = queenctl(t, b.env, "--timeout", "0", "ping")
	assert.Equal(t, exitOK, r.code, r.stderr)
}
