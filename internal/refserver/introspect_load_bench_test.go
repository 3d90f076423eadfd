package refserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/route"
)

// BenchmarkIntrospectionUnderLoad reads each introspection route in a loop, one client, on a
// broker holding one large queue (10,000 partitions × 100 messages, 100 groups attached at
// different positions, every message two hours old), while another client pushes to and pops
// and acks from a side queue. It reports, per route: the route's median and longest answer
// time and answer size; how long the steps of the route's reads held the engine's lock (p99 and
// longest, wall time, so a step the machine preempted counts its wait); the
// longest the lock kept a probe waiting (a call that takes the lock and nothing else, once a
// millisecond); and the side queue's pop+ack and push p99. The "idle" row is the side queue
// with no reader.
//
//	go test -run '^$' -bench IntrospectionUnderLoad -benchtime 1x -timeout 30m ./internal/refserver/
//
// QUEEN_BENCH_PARTITIONS, QUEEN_BENCH_MESSAGES (per partition), QUEEN_BENCH_GROUPS and
// QUEEN_BENCH_SECONDS (per route) change the size and the time spent on each route.
func BenchmarkIntrospectionUnderLoad(b *testing.B) {
	parts, perPart := envInt("QUEEN_BENCH_PARTITIONS", 10_000), envInt("QUEEN_BENCH_MESSAGES", 100)
	groups, window := envInt("QUEEN_BENCH_GROUPS", 100), time.Duration(envInt("QUEEN_BENCH_SECONDS", 4))*time.Second
	var stepsMu sync.Mutex
	var steps []time.Duration // how long each read step held the lock
	observe := func(d time.Duration) {
		stepsMu.Lock()
		steps = append(steps, d)
		stepsMu.Unlock()
	}
	srv := newTestServer(b, withManualClock(), withEngine(broker.WithReadStepObserver(observe)))
	e := srv.engine
	t0 := srv.Now()
	var sample broker.PushResult
	items := make([]broker.PushItem, 0, parts)
	payload := json.RawMessage(`{"n":1,"kind":"order"}`)
	for round := range perPart { // message r of every partition is created at t0 + r seconds
		for i := range parts {
			items = append(items, broker.PushItem{Queue: "big", Partition: "p" + strconv.Itoa(i), Payload: payload})
			if len(items) == 10_000 || i == parts-1 {
				res := e.Push(items)
				sample = res[0]
				items = items[:0]
			}
		}
		srv.Advance(time.Second)
		if round == 0 {
			t0 = srv.Now().Add(-time.Second)
		}
	}
	for g := range groups { // group g has read the first g%perPart messages of every partition
		ts := t0.Add(time.Duration(g%perPart) * time.Second)
		if _, err := e.Seek(fmt.Sprintf("g%03d", g), "big", false, ts); err != nil {
			b.Fatal(err)
		}
	}
	srv.Advance(2 * time.Hour)
	e.Push([]broker.PushItem{{Queue: "side", Payload: payload}})
	side := sideClient{&benchClient{b: b, base: srv.URL(), hc: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}}}
	b.Cleanup(side.hc.CloseIdleConnections)
	side.popAck() // the side queue's first pop places its cursor

	reads := []struct{ name, path string }{
		{"idle", ""},
		{"health", route.Health.Path()},
		{"queue-list", route.QueueList.Path()},
		{"queue-detail", route.QueueDetail.Path("big")},
		{"group-list", route.GroupList.Path()},
		{"group-detail", route.GroupDetail.Path("g050")},
		{"lagging", route.Lagging.Path() + "?minLagSeconds=0"},
		{"browse", route.Messages.Path() + "?" + url.Values{"queue": {"big"}}.Encode()},
		{"message", route.Message.Path(sample.PartitionID, sample.TransactionID)},
		{"overview", route.Overview.Path()},
	}
	for _, rd := range reads {
		b.Run(rd.name, func(b *testing.B) {
			side.b = b
			stepsMu.Lock()
			steps = steps[:0]
			stepsMu.Unlock()
			reader := startReader(srv.URL(), rd.path)
			probe := startProbe(e)
			var push, popAck []time.Duration
			// At least the window, and at least three answers of the route.
			for end := time.Now().Add(window); time.Now().Before(end) || len(push) < 20 || reader.calls() < 3; {
				push = append(push, side.push())
				popAck = append(popAck, side.popAck())
			}
			holdMax := probe.stop()
			answers := reader.stop()
			report := func(d time.Duration, unit string) { b.ReportMetric(float64(d.Microseconds())/1000, unit) }
			report(percentile(popAck, 0.99), "pop+ack-p99-ms")
			report(percentile(push, 0.99), "push-p99-ms")
			report(slices.Max(popAck), "pop+ack-max-ms")
			report(holdMax, "lock-wait-max-ms")
			if stepsMu.Lock(); len(steps) > 0 { // health takes no lock
				report(slices.Max(steps), "lock-held-max-ms")
				report(percentile(steps, 0.99), "lock-held-p99-ms")
			}
			stepsMu.Unlock()
			b.ReportMetric(float64(len(push)), "side-rounds")
			if rd.path != "" {
				report(percentile(answers.took, 0.5), "route-p50-ms")
				report(slices.Max(answers.took), "route-max-ms")
				b.ReportMetric(float64(answers.bytes)/1024, "answer-KiB")
				b.ReportMetric(float64(len(answers.took)), "route-calls")
			}
		})
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(p*float64(len(s)-1))]
}

// sideClient pushes to, pops from and acks on the side queue, timing each.
type sideClient struct{ *benchClient }

func (c sideClient) push() time.Duration {
	start := time.Now()
	c.send("POST", route.Push.Path(), []byte(`{"items":[{"queue":"side","payload":{"n":1}}]}`), http.StatusCreated)
	return time.Since(start)
}

func (c sideClient) popAck() time.Duration {
	start := time.Now()
	var p popped
	if err := json.Unmarshal(c.send("GET", route.PopQueue.Path("side"), nil, http.StatusOK), &p); err != nil {
		c.b.Fatal(err)
	}
	c.send("POST", route.AckBatch.Path(), ackBody(&p, nil), http.StatusOK)
	return time.Since(start)
}

// reader reads one route in a loop until stopped.
type reader struct {
	stopOnce func()
	done     chan readerResult
	n        atomic.Int64 // answers so far
}

func (r *reader) calls() int64 { return r.n.Load() }

type readerResult struct {
	took  []time.Duration
	bytes int
}

func startReader(base, path string) *reader {
	r := &reader{done: make(chan readerResult, 1)}
	stop := make(chan struct{})
	r.stopOnce = sync.OnceFunc(func() { close(stop) })
	if path == "" {
		r.done <- readerResult{}
		r.n.Store(3)
		return r
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	go func() {
		defer hc.CloseIdleConnections()
		var res readerResult
		for {
			select {
			case <-stop:
				r.done <- res
				return
			default:
			}
			start := time.Now()
			resp, err := hc.Get(base + path)
			if err != nil {
				r.done <- res
				return
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			res.took = append(res.took, time.Since(start))
			res.bytes = int(n)
			r.n.Add(1)
		}
	}()
	return r
}

// stop ends the loop once its call in flight is answered.
func (r *reader) stop() readerResult {
	r.stopOnce()
	return <-r.done
}

// probe takes the engine's lock once a millisecond and keeps the longest wait.
type probe struct {
	stopCh chan struct{}
	done   chan time.Duration
}

func startProbe(e *broker.Engine) *probe {
	p := &probe{stopCh: make(chan struct{}), done: make(chan time.Duration, 1)}
	go func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		var longest time.Duration
		for {
			select {
			case <-p.stopCh:
				p.done <- longest
				return
			case <-tick.C:
			}
			start := time.Now()
			e.WaitingPops()
			longest = max(longest, time.Since(start))
		}
	}()
	return p
}

func (p *probe) stop() time.Duration {
	close(p.stopCh)
	return <-p.done
}
