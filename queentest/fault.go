package queentest

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/queenmq/queen-go/internal/refserver"
	"github.com/queenmq/queen-go/internal/route"
)

// Fault breaks requests on their way through the broker, the way a flaky network or an
// overloaded broker would, so a test can prove what its code does with 5xx answers, dropped
// connections, lost answers and slow replies. Arm it with (*Server).Fail.
type Fault struct {
	// Route picks the requests: "push", "pop" (every pop route), "ack" (single and batch),
	// "extend", "transaction", or "" for any request.
	Route string
	// Status answers this status (400 to 599) with a JSON error body instead of the real answer.
	Status int
	// Drop closes the connection without an answer.
	Drop bool
	// After lets the broker apply the request first, then answers Status, or closes the
	// connection when Status is 0: the answer is lost but the change is made.
	After bool
	// Delay holds the request this long (on real time) before it reaches the broker, or with
	// After, before its answer leaves.
	Delay time.Duration
	// Times is how many matching requests the fault acts on; 0 means once.
	Times int
}

// faultRoutes are the values Fault.Route accepts.
var faultRoutes = []string{"", string(route.FamilyPush), string(route.FamilyPop), string(route.FamilyAck),
	string(route.FamilyExtend), string(route.FamilyTransaction)}

// check panics on a Fault that cannot mean anything: tests should fail loudly, not pass with
// a fault that never fires.
func (f Fault) check() {
	bad := func(field string, v any, why string) {
		panic(fmt.Sprintf("queentest: Fault.%s %v: %s", field, v, why))
	}
	switch {
	case !slices.Contains(faultRoutes, f.Route):
		bad("Route", fmt.Sprintf("%q", f.Route), `must be "push", "pop", "ack", "extend", "transaction" or ""`)
	case f.Status != 0 && (f.Status < 400 || f.Status > 599):
		bad("Status", f.Status, "must be 0 or from 400 to 599")
	case f.Drop && f.Status != 0:
		bad("Drop", f.Drop, "cannot be combined with a Status: the connection closes without one")
	case f.Delay < 0:
		bad("Delay", f.Delay, "must not be negative")
	case f.Times < 0:
		bad("Times", f.Times, "must not be negative (0 means once)")
	}
}

// acts reports whether the fault changes anything: a Fault with nothing set lets its requests
// through, which lets a test break, say, only the third push.
func (f Fault) acts() bool { return f.Status != 0 || f.Drop || f.After || f.Delay > 0 }

// armedFault is a Fault and how many more requests it acts on.
type armedFault struct {
	Fault
	left int
}

// faults holds the armed faults in arming order; a request meets the first one its route
// matches. Taking a fault is one step under the lock, so concurrent requests never share a use.
type faults struct {
	mu    sync.Mutex
	armed []*armedFault
	met   int
	done  <-chan struct{} // closed when the server closes: delays end
	held  func()          // called once a delayed request is held; lets tests know without sleeping
}

func (fs *faults) add(f Fault) {
	f.check()
	n := f.Times
	if n == 0 {
		n = 1
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.armed = append(fs.armed, &armedFault{Fault: f, left: n})
}

// take returns the fault the request meets, if any, and uses it up once.
func (fs *faults) take(family string) (Fault, bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for i, a := range fs.armed {
		if a.Route != "" && a.Route != family {
			continue
		}
		if a.left--; a.left == 0 {
			fs.armed = append(fs.armed[:i], fs.armed[i+1:]...)
		}
		if a.acts() {
			fs.met++
		}
		return a.Fault, true
	}
	return Fault{}, false
}

func (fs *faults) clear() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.armed = nil
}

func (fs *faults) left() int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n := 0
	for _, a := range fs.armed {
		n += a.left
	}
	return n
}

func (fs *faults) metCount() int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.met
}

// wrap puts the faults in front of next.
func (fs *faults) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, ok := fs.take(faultRoute(r))
		if !ok || !f.acts() {
			next.ServeHTTP(w, r)
			return
		}
		if f.After {
			// The broker applies the request in full; only its answer is lost on the way back.
			next.ServeHTTP(&discardWriter{header: http.Header{}}, r)
			if !fs.wait(r, f.Delay) {
				return
			}
			if f.Status == 0 {
				dropConnection()
			}
			writeInjected(w, f.Status)
			return
		}
		if !fs.wait(r, f.Delay) {
			return
		}
		switch {
		case f.Drop:
			dropConnection()
		case f.Status != 0:
			writeInjected(w, f.Status)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// wait holds a request for d on real time; it reports false when the client left or the
// server closed first.
func (fs *faults) wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	if fs.held != nil {
		fs.held()
	}
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
	case <-fs.done:
	}
	return false
}

// faultRoute names the route family a request belongs to, as Fault.Route does: "" for a
// request of no family.
func faultRoute(r *http.Request) string {
	rt, _ := route.Match(r.Method, r.URL.EscapedPath())
	return string(rt.Family)
}

// dropConnection ends the request without an answer: net/http closes the connection (or resets
// the HTTP/2 stream), as a crashed broker or proxy would.
func dropConnection() { panic(http.ErrAbortHandler) }

func writeInjected(w http.ResponseWriter, status int) {
	refserver.WriteError(w, status, fmt.Sprintf("queentest: injected fault (%d %s)", status, http.StatusText(status)))
}

// discardWriter takes the broker's answer to a request whose answer a fault loses.
type discardWriter struct{ header http.Header }

func (d *discardWriter) Header() http.Header         { return d.header }
func (d *discardWriter) WriteHeader(int)             {}
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }

// Fail arms a fault: the next Times requests of f.Route (once when Times is 0) meet it. Faults
// armed earlier come first: a request meets the oldest armed fault its route matches, and each
// use is taken atomically, so concurrent requests never share one and exactly Times requests
// meet it, however they interleave. A Fault with nothing to do lets its requests through, so
// Fail(Fault{Route: "push", Times: 2}) then Fail(Fault{Route: "push", Status: 503}) breaks the
// third push only. The faults act on every request the server receives, through URL and
// Handler alike; tests running in parallel on one server should use routes only they send, or
// a server each. A dropped connection is http.ErrAbortHandler, which http.Server and
// httptest.Server turn into a closed connection. Fail panics on a Fault that cannot apply (an
// unknown Route, a Status outside 400–599, Drop with a Status, a negative Delay or Times).
func (s *Server) Fail(f Fault) { s.faults.add(f) }

// ClearFaults disarms every fault not used up yet.
func (s *Server) ClearFaults() { s.faults.clear() }

// FaultsLeft is how many more requests the armed faults will meet; 0 once every fault is used
// up, which proves a test's requests met them.
func (s *Server) FaultsLeft() int { return s.faults.left() }

// FaultsMet is how many requests have met a fault that acted on them so far (a Fault with
// nothing to do is not counted).
func (s *Server) FaultsMet() int { return s.faults.metCount() }
