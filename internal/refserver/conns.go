package refserver

import (
	"container/list"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

// limitListener serves at most cap(slots) connections at once. A connection that finds them
// all taken first closes the one idle between requests the longest: a client that keeps
// connections open without using them cannot lock others out. With none idle it waits,
// accepted but not served, until one closes or turns idle; further ones wait in the kernel's
// backlog.
type limitListener struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once

	mu     sync.Mutex
	idle   list.List     // the *limitedConn idle between requests, longest idle first
	idled  chan struct{} // a connection turned idle: a waiting Accept looks again
	onIdle func()        // called once a connection is counted idle; tests only
}

func newLimitListener(ln net.Listener, n int) *limitListener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{}),
		idled: make(chan struct{}, 1)}
}

func (l *limitListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	for {
		select {
		case l.slots <- struct{}{}:
			return l.limited(c), nil
		default:
		}
		if l.closeIdlest() { // its slot is free now
			continue
		}
		select {
		case l.slots <- struct{}{}:
			return l.limited(c), nil
		case <-l.idled:
		case <-l.done:
			_ = c.Close()
			return nil, net.ErrClosed
		}
	}
}

func (l *limitListener) limited(c net.Conn) *limitedConn {
	lc := &limitedConn{Conn: c}
	lc.release = sync.OnceFunc(func() {
		l.setIdle(lc, false)
		<-l.slots
	})
	return lc
}

// connState follows the server's connections (http.Server.ConnState): which are idle, since when.
func (l *limitListener) connState(c net.Conn, state http.ConnState) {
	if lc, ok := c.(*limitedConn); ok {
		l.setIdle(lc, state == http.StateIdle)
	}
}

// setIdle moves lc to the end of the idle ones, or takes it out.
func (l *limitListener) setIdle(lc *limitedConn, idle bool) {
	l.mu.Lock()
	if lc.idleAt != nil {
		l.idle.Remove(lc.idleAt)
		lc.idleAt = nil
	}
	if idle {
		lc.idleAt = l.idle.PushBack(lc)
	}
	l.mu.Unlock()
	if !idle {
		return
	}
	select {
	case l.idled <- struct{}{}:
	default:
	}
	if l.onIdle != nil {
		l.onIdle()
	}
}

// closeIdlest closes the connection idle the longest; false when none is.
func (l *limitListener) closeIdlest() bool {
	l.mu.Lock()
	front := l.idle.Front()
	if front == nil {
		l.mu.Unlock()
		return false
	}
	lc := l.idle.Remove(front).(*limitedConn)
	lc.idleAt = nil
	l.mu.Unlock()
	_ = lc.Close()
	return true
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitedConn gives its slot back when closed, once.
type limitedConn struct {
	net.Conn
	release func()
	idleAt  *list.Element // its place among the idle connections, nil when not idle
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}

// maxConnsWithin is the connection cap that leaves reserveFiles of the open-file limit for
// everything else (the listener, logs, clients the broker holds); asked when it fits, else the
// limit less the reserve, and at least 1. ok is false when it had to lower asked.
func maxConnsWithin(asked int, openFiles uint64) (n int, ok bool) {
	if openFiles == 0 || openFiles >= uint64(asked)+reserveFiles {
		return asked, true
	}
	return max(int(openFiles)-reserveFiles, 1), false
}

// reserveFiles is what the connection cap leaves of the open-file limit.
const reserveFiles = 64

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
