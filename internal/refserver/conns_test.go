package refserver

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/route"
)

// dial opens a raw connection to srv, closed when the test ends.
func dial(t *testing.T, srv *testServer) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// waitClosed reads from conn until the broker closes it, failing the test if that takes
// more than limit (far above the deadline under test, far below the 30s default).
func waitClosed(t *testing.T, conn net.Conn, limit time.Duration) {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(limit))
	_, err := io.Copy(io.Discard, conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the broker kept the connection open for %v", limit)
	}
}

// A body that trickles in is cut off at its deadline after the headers, however
// steadily its bytes arrive, and nothing is stored.
func TestASlowBodyIsCutOffAtItsDeadline(t *testing.T) {
	t.Parallel()
	srv, c := start(t, withTimeouts(Timeouts{Header: time.Minute, Body: 200 * time.Millisecond, Idle: time.Minute}))
	conn := dial(t, srv)
	body := `{"items":[{"queue":"slow"}]}`
	if _, err := io.WriteString(conn, "POST /api/v1/push HTTP/1.1\r\nHost: broker\r\nContent-Type: application/json\r\n"+
		"Content-Length: "+itoa(len(body))+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	trickled := make(chan struct{})
	go func() { // one byte every 20ms, until the broker hangs up (or the body is out)
		defer close(trickled)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for i := 0; i < len(body)-1; i++ {
			if _, err := conn.Write([]byte{body[i]}); err != nil {
				return
			}
			<-tick.C
		}
	}()
	waitClosed(t, conn, 5*time.Second)
	_ = conn.Close()
	<-trickled
	if c.Pop("/api/v1/pop/queue/slow", nil) != nil {
		t.Fatal("a cut-off push stored a message")
	}
}

// Headers that trickle in are cut off at their deadline.
func TestSlowHeadersAreCutOffAtTheirDeadline(t *testing.T) {
	t.Parallel()
	srv, _ := start(t, withTimeouts(Timeouts{Header: 200 * time.Millisecond, Body: time.Minute, Idle: time.Minute}))
	conn := dial(t, srv)
	if _, err := io.WriteString(conn, "GET /health HTTP/1.1\r\nHost: bro"); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, conn, 5*time.Second)
}

// A keep-alive connection left idle is closed.
func TestAnIdleConnectionIsClosed(t *testing.T) {
	t.Parallel()
	srv, _ := start(t, withTimeouts(Timeouts{Header: time.Minute, Body: time.Minute, Idle: 200 * time.Millisecond}))
	conn := dial(t, srv)
	if _, err := io.WriteString(conn, "GET /health HTTP/1.1\r\nHost: broker\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	waitClosed(t, conn, 5*time.Second)
}

// The body deadline ends with the body: a request whose handler runs on longer (here a
// held answer) and a long poll on the same connection are not cut off.
func TestTheBodyDeadlineEndsWithTheBody(t *testing.T) {
	t.Parallel()
	hold := func(next http.Handler) http.Handler { // a push is applied, and its answer held 400ms
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != route.Push.Pattern {
				next.ServeHTTP(w, r)
				return
			}
			next.ServeHTTP(httptest.NewRecorder(), r)
			<-time.After(400 * time.Millisecond)
			WriteError(w, http.StatusServiceUnavailable, "held")
		})
	}
	_, c := start(t, withTimeouts(Timeouts{Header: time.Minute, Body: 100 * time.Millisecond, Idle: time.Minute}), withMiddleware(hold))
	c.Do("POST", "/api/v1/push", `{"items":[{"queue":"held"}]}`).WantError(t, http.StatusServiceUnavailable)
	r := c.Get("/api/v1/pop/queue/empty?wait=true&timeout=300")
	if r.Status != http.StatusNoContent {
		t.Fatalf("long poll = %d %s, want 204", r.Status, r.Body)
	}
}

// At most WithMaxConns connections are served at once; the next waits to be accepted,
// and is served as soon as one closes.
func TestConnectionsBeyondMaxConnsWaitToBeAccepted(t *testing.T) {
	t.Parallel()
	srv, _ := start(t, withMaxConns(2))
	health := "GET /health HTTP/1.1\r\nHost: broker\r\n\r\n"
	served := func(conn net.Conn, within time.Duration) bool {
		t.Helper()
		_ = conn.SetReadDeadline(time.Now().Add(within))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	first, second := dial(t, srv), dial(t, srv)
	for _, conn := range []net.Conn{first, second} {
		if _, err := io.WriteString(conn, health); err != nil {
			t.Fatal(err)
		}
		if !served(conn, 5*time.Second) {
			t.Fatal("a connection within the limit was not served")
		}
	}
	third := dial(t, srv) // the kernel's backlog takes it; the broker does not accept it yet
	if _, err := io.WriteString(third, health); err != nil {
		t.Fatal(err)
	}
	if served(third, 200*time.Millisecond) {
		t.Fatal("a connection beyond the limit was served while the others were open")
	}
	_ = first.Close()
	if !served(third, 5*time.Second) {
		t.Fatal("the waiting connection was not served once a slot freed")
	}
}
