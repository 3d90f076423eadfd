package queen

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"testing"
)

// chaosSeedEnv names the variable that replays a chaos run: QUEEN_CHAOS_SEED=<seed>.
const chaosSeedEnv = "QUEEN_CHAOS_SEED"

// chaosSeed is the run's seed: QUEEN_CHAOS_SEED when set, else a fresh one. It is logged, so a
// failing run can be replayed.
func chaosSeed(t *testing.T) uint64 {
	t.Helper()
	seed := rand.Uint64()
	if s := os.Getenv(chaosSeedEnv); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: not an unsigned integer: %v", chaosSeedEnv, s, err)
		}
		seed = v
	}
	t.Logf("chaos seed %d (replay: %s=%d go test -race -run '%s' .)", seed, chaosSeedEnv, seed, t.Name())
	return seed
}

// mix derives a stream of the seed for one key, so that each request route and each delivery
// draws its faults from its own sequence: the nth request of a route and the kth delivery of a
// message meet the same fault on every run of a seed, however goroutines interleave.
func mix(seed uint64, key ...any) *rand.Rand {
	h := fnv.New64a()
	for _, k := range key {
		fmt.Fprint(h, k, "\x00")
	}
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// transportFaults are the rates, each from 0 to 1, at which the proxy breaks a request.
type transportFaults struct {
	errorBefore float64 // 500, 502 or 503 before the broker sees the request
	lostAnswer  float64 // the broker applied it; the client gets a 503 instead of the answer
	dropBefore  float64 // the connection is closed before the broker sees the request
	dropAfter   float64 // the broker applied it; the connection is closed instead of the answer
}

func (f transportFaults) String() string {
	return fmt.Sprintf("5xx-before=%.2f lost-answer=%.2f drop-before=%.2f drop-after=%.2f",
		f.errorBefore, f.lostAnswer, f.dropBefore, f.dropAfter)
}

type transportFault int

const (
	passThrough transportFault = iota
	errorBefore
	lostAnswer
	dropBefore
	dropAfter
)

var transportFaultNames = [...]string{"none", "5xx-before", "lost-answer", "drop-before", "drop-after"}

// chaosProxy stands between the SDK and the broker and breaks requests at the configured rates.
type chaosProxy struct {
	next  http.Handler
	seed  uint64
	rates transportFaults

	mu       sync.Mutex
	enabled  bool
	streams  map[string]*rand.Rand // one per route family
	injected map[transportFault]int
	leases   int // pops the broker answered with messages, whether or not the answer arrived
}

// newChaosProxy serves a faulty front of next and returns it with its URL; it is closed at
// cleanup. Faults start enabled.
func newChaosProxy(t testing.TB, next http.Handler, seed uint64, rates transportFaults) (*chaosProxy, string) {
	p := &chaosProxy{next: next, seed: seed, rates: rates, enabled: true,
		streams: map[string]*rand.Rand{}, injected: map[transportFault]int{}}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return p, srv.URL
}

// pick draws the fault for the next request of a route.
func (p *chaosProxy) pick(route string) (transportFault, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.enabled {
		return passThrough, 0
	}
	rng := p.streams[route]
	if rng == nil {
		rng = mix(p.seed, "route", route)
		p.streams[route] = rng
	}
	x, status := rng.Float64(), []int{500, 502, 503}[rng.IntN(3)]
	f := passThrough
	for _, c := range []struct {
		rate  float64
		fault transportFault
	}{
		{p.rates.errorBefore, errorBefore},
		{p.rates.lostAnswer, lostAnswer},
		{p.rates.dropBefore, dropBefore},
		{p.rates.dropAfter, dropAfter},
	} {
		if x < c.rate {
			f = c.fault
			break
		}
		x -= c.rate
	}
	p.injected[f]++
	return f, status
}

// setEnabled turns the faults on or off.
func (p *chaosProxy) setEnabled(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.enabled = on
}

// leaseCount is how many pops the broker has answered with messages so far.
func (p *chaosProxy) leaseCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.leases
}

// report is what the proxy did, for the test log.
func (p *chaosProxy) report() (string, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, faults := "", 0
	for f := passThrough; f <= dropAfter; f++ {
		s += fmt.Sprintf(" %s=%d", transportFaultNames[f], p.injected[f])
		if f != passThrough {
			faults += p.injected[f]
		}
	}
	return s, faults
}

func (p *chaosProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	route := routeOf(r.URL.Path)
	fault, status := p.pick(route)
	switch fault {
	case passThrough:
		sw := &statusWriter{ResponseWriter: w}
		p.next.ServeHTTP(sw, r)
		p.served(route, sw.status)
	case errorBefore:
		writeInjected(w, status)
	case dropBefore:
		hangUp(w)
	case lostAnswer, dropAfter:
		// The broker applies the request in full; only its answer is lost on the way back.
		rec := httptest.NewRecorder()
		p.next.ServeHTTP(rec, r)
		p.served(route, rec.Code)
		if fault == lostAnswer {
			writeInjected(w, http.StatusServiceUnavailable)
		} else {
			hangUp(w)
		}
	}
}

// served counts a pop the broker answered with messages (200; nothing is 204, R41).
func (p *chaosProxy) served(route string, status int) {
	if route != "pop" || status != http.StatusOK {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.leases++
}

// statusWriter remembers the status of the answer it passes on.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func writeInjected(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `{"error":"injected %d"}`, status)
}

// hangUp closes the connection without an answer, as a crashed broker or proxy would.
func hangUp(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		_ = conn.Close()
	}
}
