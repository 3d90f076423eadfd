package queen

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"testing"

	"github.com/queenmq/queen-go/queentest"
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

// transportFaults are the rates, each from 0 to 1, at which the broker's faults break a request.
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

// chaosRoutes are the routes the consume loop sends; each draws its faults from its own stream.
var chaosRoutes = []string{"pop", "ack", "extend"}

// chaosScheduleLength is how many requests of each route the armed schedule covers; a scenario
// sends far fewer, so its faults last until verify clears them.
const chaosScheduleLength = 1500

// armTransportFaults arms on srv, for each route, the seed's schedule of faults at the given
// rates: the nth request of a route meets the same fault on every run of a seed, however
// goroutines interleave. It returns how many faults of each kind it armed.
func armTransportFaults(srv *queentest.Server, seed uint64, rates transportFaults) map[string]int {
	armed := map[string]int{}
	streams := make([]*rand.Rand, len(chaosRoutes))
	passes := make([]int, len(chaosRoutes)) // requests let through since the last fault
	for i, route := range chaosRoutes {
		streams[i] = mix(seed, "route", route)
	}
	// Routes take turns, so each route's next fault is near the front of the armed list.
	for range chaosScheduleLength {
		for i, route := range chaosRoutes {
			rng := streams[i]
			x, status := rng.Float64(), []int{500, 502, 503}[rng.IntN(3)]
			var f queentest.Fault
			kind := ""
			for _, c := range []struct {
				rate  float64
				kind  string
				fault queentest.Fault
			}{
				{rates.errorBefore, "5xx-before", queentest.Fault{Status: status}},
				{rates.lostAnswer, "lost-answer", queentest.Fault{After: true, Status: http.StatusServiceUnavailable}},
				{rates.dropBefore, "drop-before", queentest.Fault{Drop: true}},
				{rates.dropAfter, "drop-after", queentest.Fault{After: true}},
			} {
				if x < c.rate {
					f, kind = c.fault, c.kind
					break
				}
				x -= c.rate
			}
			if kind == "" {
				passes[i]++
				continue
			}
			if passes[i] > 0 {
				srv.Fail(queentest.Fault{Route: route, Times: passes[i]})
				passes[i] = 0
			}
			f.Route = route
			srv.Fail(f)
			armed[kind]++
		}
	}
	return armed
}
