package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/testmode"
)

// hostileError is a handler's error text that would retitle the terminal, clear it, colour
// it, break the table's line, and reverse what follows, if printed raw.
const hostileError = "\x1b]0;owned\x07\x1b[2J\x1b[31mred\nsecond line\r\u202eevil\u009b"

// A handler's error text is stored as given; dlq list and dlq show print it escaped, so that
// nothing in it reaches the terminal as a control sequence.
func TestDeadLetterErrorTextIsEscaped(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		b := newBrokerIn(t, m, "")
		b.push(t, "orders", 1)
		msgs, err := b.client.Queue("orders").Group("billing").SubscriptionMode(queen.SubscribeAll).Pop(context.Background())
		require.NoError(t, err)
		require.Len(t, msgs, 1)
		require.NoError(t, msgs[0].DeadLetter(context.Background(), errors.New(hostileError)))
		id := b.newestDeadLetter(t, "orders")

		r := queenctl(t, b.env, "dlq", "list", "--queue", "orders")
		require.Equal(t, exitOK, r.code, r.stderr)
		assertPrintable(t, r.stdout, "dlq list")
		assert.Contains(t, r.stdout, `\x1b]0;owned\x07\x1b[2J\x1b[31mred second line \u202eevil\u009b`)

		r = queenctl(t, b.env, "dlq", "show", id)
		require.Equal(t, exitOK, r.code, r.stderr)
		assertPrintable(t, r.stdout, "dlq show")
		assert.Contains(t, r.stdout, `\x1b]0;owned\x07\x1b[2J\x1b[31mred\nsecond line\r\u202eevil\u009b`)

		r = queenctl(t, b.env, "dlq", "show", id, "-o", "yaml")
		require.Equal(t, exitOK, r.code, r.stderr)
		assertPrintable(t, r.stdout, "dlq show -o yaml")
	})
}

// hostileName is what the broker is made to answer instead of the queue's name "orders".
const hostileName = `\u001b]0;owned\u0007orders\u202e`

// renaming answers as b does, with every "orders" in its answers replaced by hostileName.
func renaming(t *testing.T, b broker) map[string]string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		b.srv.Handler().ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			if k != "Content-Length" {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write([]byte(strings.ReplaceAll(rec.Body.String(), `"orders"`, `"`+hostileName+`"`)))
	}))
	t.Cleanup(srv.Close)
	return map[string]string{"QUEEN_URL": srv.URL}
}

// Names from the broker are escaped in every table and message line: a queue name that holds
// escape sequences shows as text in status, the lists, the descriptions, peek and tail.
func TestNamesAreEscapedInEveryTable(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		b := newBrokerIn(t, m, "")
		b.fileDeadLetters(t, "orders", "billing", 1)
		b.push(t, "orders", 2)
		env := renaming(t, b)
		id := b.newestDeadLetter(t, "orders")
		for _, args := range [][]string{
			{"status"}, {"queue", "list"}, {"queue", "show", "orders"}, {"group", "list"}, {"group", "show", "billing"},
			{"lag"}, {"messages", "peek", "orders"}, {"tail", "orders"}, {"dlq", "list", "--queue", "orders"},
			{"dlq", "show", id}, {"queue", "list", "-o", "yaml"},
		} {
			r := queenctl(t, env, args...)
			require.Equal(t, exitOK, r.code, "%v: %s", args, r.stderr)
			assertPrintable(t, r.stdout, strings.Join(args, " "))
			assertPrintable(t, r.stderr, strings.Join(args, " "))
			if !strings.Contains(strings.Join(args, " "), "yaml") && args[0] != "messages" && args[0] != "tail" {
				assert.Contains(t, r.stdout, `\x1b]0;owned\x07orders\u202e`, args)
			}
		}
	})
}

// A broker's refusal text is escaped on stderr too.
func TestBrokerRefusalsAreEscaped(t *testing.T) {
	t.Parallel()
	_, env := fake(t, func(rt route.Route, _ *http.Request) (int, string) {
		return http.StatusBadRequest, `{"error":"\u001b[2Jbad \u001b]0;owned\u0007request"}`
	})
	for _, args := range [][]string{{"queue", "configure", "orders"}, {"queue", "list"}, {"ping"}} {
		r := queenctl(t, env, args...)
		assert.Equal(t, exitFailure, r.code, args)
		assertPrintable(t, r.stderr, strings.Join(args, " "))
		assert.Contains(t, r.stderr, `\x1b[2Jbad`, args)
	}
}
