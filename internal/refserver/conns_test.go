package refserver

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/testutil"
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

// health is a raw GET /health request.
const health = "GET /health HTTP/1.1\r\nHost: broker\r\n\r\n"

// served reports whether conn is answered 200 within the time given.
func served(t *testing.T, conn net.Conn, r *bufio.Reader, within time.Duration) bool {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(within))
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// request sends a raw request on conn, failing the test if it cannot.
func request(t *testing.T, conn net.Conn, raw string) {
	t.Helper()
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
}

// At most MaxConns connections are served at once. With none of them idle (each in the
// middle of its request's headers) the next waits to be accepted, and is served as soon as one
// closes.
func TestConnectionsBeyondMaxConnsWaitToBeAccepted(t *testing.T) {
	t.Parallel()
	srv, _ := start(t, withMaxConns(2))
	first, second := dial(t, srv), dial(t, srv)
	for _, conn := range []net.Conn{first, second} {
		request(t, conn, "GET /health HTTP/1.1\r\nHost: bro") // headers still coming: not idle
	}
	third := dial(t, srv) // the broker holds it unserved, or the kernel's backlog does
	request(t, third, health)
	answers := bufio.NewReader(third)
	if served(t, third, answers, 200*time.Millisecond) {
		t.Fatal("a connection beyond the limit was served while the others were busy")
	}
	_ = first.Close()
	if !served(t, third, answers, 5*time.Second) {
		t.Fatal("the waiting connection was not served once a slot freed")
	}
}

// At the cap, a new connection closes the one idle between requests the longest and is served
// at once; the connections idle for a shorter time stay open.
func TestTheLongestIdleConnectionMakesRoomAtTheCap(t *testing.T) {
	t.Parallel()
	srv := unstartedServer(withMaxConns(2))
	idled := make(chan struct{}, 8)
	srv.onIdle = func() { idled <- struct{}{} }
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	older, newer := dial(t, srv), dial(t, srv)
	newerAnswers := bufio.NewReader(newer)
	request(t, older, health)
	if !served(t, older, bufio.NewReader(older), 5*time.Second) {
		t.Fatal("the first connection was not served")
	}
	testutil.Recv(t, idled, "the first connection counted idle")
	request(t, newer, health)
	if !served(t, newer, newerAnswers, 5*time.Second) {
		t.Fatal("the second connection was not served")
	}
	testutil.Recv(t, idled, "the second connection counted idle")
	third := dial(t, srv)
	request(t, third, health)
	if !served(t, third, bufio.NewReader(third), time.Second) {
		t.Fatal("a new connection waited while the cap was held by idle ones")
	}
	waitClosed(t, older, 5*time.Second)
	request(t, newer, health)
	if !served(t, newer, newerAnswers, 5*time.Second) {
		t.Fatal("the connection idle for the shorter time was closed")
	}
}

// 4,096 connections that each sent one request and went quiet hold every place under the
// default cap; a new client is still served within a second.
func TestIdleConnectionsAtTheDefaultCapLockNobodyOut(t *testing.T) {
	t.Parallel()
	n := DefaultMaxConns
	if limit := openFileLimit(); limit > 0 && limit < uint64(2*n+1024) {
		// Both ends of every connection are in this process.
		n = (int(limit) - 1024) / 2
		t.Logf("the open-file limit (%d) holds %d idle connections, not %d", limit, n, DefaultMaxConns)
	}
	srv, _ := start(t)
	idle := make(chan error, 8)
	per := (n + 7) / 8
	for w := range 8 {
		go func() {
			for i := w * per; i < min(n, (w+1)*per); i++ {
				conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL(), "http://"))
				if err != nil {
					idle <- err
					return
				}
				t.Cleanup(func() { _ = conn.Close() })
				if _, err := io.WriteString(conn, health); err != nil {
					idle <- err
					return
				}
				if !served(t, conn, bufio.NewReader(conn), 30*time.Second) {
					idle <- errors.New("an idle-to-be connection was not served")
					return
				}
			}
			idle <- nil
		}()
	}
	for range 8 {
		if err := <-idle; err != nil {
			t.Fatal(err)
		}
	}
	conn := dial(t, srv)
	request(t, conn, health)
	if !served(t, conn, bufio.NewReader(conn), time.Second) {
		t.Fatalf("a new client was not served within 1s beside %d idle connections", n)
	}
}

// A 401 closes its connection: a client without the token cannot hold one open.
func TestARefusalForWantOfTheTokenClosesTheConnection(t *testing.T) {
	t.Parallel()
	srv, _ := start(t, withToken("s3cret"))
	conn := dial(t, srv)
	request(t, conn, "GET /api/v1/dlq HTTP/1.1\r\nHost: broker\r\n\r\n")
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
		t.Fatalf("status %d, close %v: want 401 closing the connection", resp.StatusCode, resp.Close)
	}
	waitClosed(t, conn, 5*time.Second)
}

// The connection cap leaves 64 of the open-file limit to the rest of the process.
func TestTheConnectionCapStaysBelowTheOpenFileLimit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		asked, want int
		limit       uint64
		fits        bool
	}{
		{4096, 4096, 0, true},
		{4096, 4096, 1 << 20, true},
		{4096, 4096, 4096 + 64, true},
		{4096, 4032, 4096, false},
		{4096, 236, 300, false},
		{4096, 1, 10, false},
	} {
		if got, fits := maxConnsWithin(c.asked, c.limit); got != c.want || fits != c.fits {
			t.Errorf("maxConnsWithin(%d, %d) = %d, %v; want %d, %v", c.asked, c.limit, got, fits, c.want, c.fits)
		}
	}
	limit := openFileLimit()
	if limit == 0 || limit > 1<<30 {
		t.Fatalf("open-file limit %d: this test needs a finite one", limit)
	}
	var logs testutil.LogBuffer
	srv := unstartedServer(withMaxConns(int(limit)), withLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	for _, want := range []string{"max-conns lowered below the open-file limit", "maxConns=" + itoa(int(limit)-64)} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the start logs lack %q:\n%s", want, logs.String())
		}
	}
}
