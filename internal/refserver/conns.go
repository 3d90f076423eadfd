package refserver

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

// limitListener accepts at most cap(slots) connections at once; further ones wait in the
// kernel's backlog until a connection closes.
type limitListener struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func newLimitListener(ln net.Listener, n int) *limitListener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitedConn{Conn: c, release: sync.OnceFunc(func() { <-l.slots })}, nil
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitedConn gives its slot back when closed, once.
type limitedConn struct {
	net.Conn
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}

// bodyDeadline gives a request's body d after its headers to arrive; a body that is
// late fails its read, the handler answers, and the connection is closed. The deadline is
// lifted once the body is read, so a handler's own time (a long poll) is not bounded by it.
func bodyDeadline(d time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		if rc.SetReadDeadline(time.Now().Add(d)) != nil {
			next.ServeHTTP(w, r) // not a connection of ours (a test recorder)
			return
		}
		r.Body = &deadlineBody{ReadCloser: r.Body, d: d, lift: sync.OnceFunc(func() { _ = rc.SetReadDeadline(time.Time{}) })}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody lifts the read deadline at the body's end and names a late body's failure.
type deadlineBody struct {
	io.ReadCloser
	d    time.Duration
	lift func()
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF:
		b.lift()
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = errBodyTooSlow{b.d}
	}
	return n, err
}

// errBodyTooSlow is a body that did not arrive in time.
type errBodyTooSlow struct{ d time.Duration }

func (e errBodyTooSlow) Error() string {
	return "the body did not arrive within " + e.d.String() + " of the headers"
}
