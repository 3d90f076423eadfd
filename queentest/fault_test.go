package queentest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/testutil"
)

// rawClient sends one request per connection, so a dropped connection is never retried by
// net/http on another one and each request meets exactly one fault.
type rawClient struct {
	T    *testing.T
	Base string
	HC   *http.Client
}

func newRawClient(t *testing.T, srv *Server) *rawClient {
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	t.Cleanup(hc.CloseIdleConnections)
	return &rawClient{T: t, Base: srv.URL(), HC: hc}
}

// try sends a request and returns its answer, or the transport error of a dropped connection.
func (c *rawClient) try(ctx context.Context, method, path, body string) (testutil.Response, error) {
	c.T.Helper()
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, strings.NewReader(body))
	if err != nil {
		c.T.Fatal(err)
	}
	resp, err := c.HC.Do(req)
	if err != nil {
		return testutil.Response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return testutil.Response{Status: resp.StatusCode, Header: resp.Header, Body: b}, err
}

func pushOneBody(queue, tx string) string {
	return `{"items":[{"queue":"` + queue + `","transactionId":"` + tx + `","payload":{}}]}`
}

// stored is the transactionIds a fresh group finds in queue, in order.
func stored(t *testing.T, c *testutil.Client, queue string) []string {
	t.Helper()
	res := c.Pop("/api/v1/pop/queue/"+queue, testutil.Query("consumerGroup", "check-"+time.Now().Format("150405.000000000"),
		"subscriptionMode", "all", "batch", "1000"))
	if res == nil {
		return nil
	}
	var out []string
	for _, m := range res.Messages {
		out = append(out, m.TransactionID)
	}
	return out
}

// A status fault answers that status, with a JSON error, for exactly Times requests, before the
// broker sees them; the next request goes through.
func TestFaultStatusBeforeTheBroker(t *testing.T) {
	t.Parallel()
	srv, c := start(t)
	raw := newRawClient(t, srv)
	srv.Fail(Fault{Route: "push", Status: http.StatusServiceUnavailable, Times: 2})
	if got := srv.FaultsLeft(); got != 2 {
		t.Fatalf("FaultsLeft = %d, want 2", got)
	}
	for i, tx := range []string{"a", "b"} {
		r, err := raw.try(t.Context(), "POST", "/api/v1/push", pushOneBody("q", tx))
		if err != nil {
			t.Fatalf("push %d: %v", i, err)
		}
		r.WantError(t, http.StatusServiceUnavailable, "injected")
	}
	c.Push(testutil.Item{Queue: "q", TransactionID: "c"})
	if got := stored(t, c, "q"); strings.Join(got, ",") != "c" {
		t.Fatalf("stored %v, want only c: a faulted push must not reach the broker", got)
	}
	if left, met := srv.FaultsLeft(), srv.FaultsMet(); left != 0 || met != 2 {
		t.Fatalf("FaultsLeft %d, FaultsMet %d; want 0 and 2", left, met)
	}
}

// A Drop fault closes the connection without an answer and without applying the request.
func TestFaultDropBeforeTheBroker(t *testing.T) {
	t.Parallel()
	srv, c := start(t)
	raw := newRawClient(t, srv)
	srv.Fail(Fault{Route: "push", Drop: true})
	if _, err := raw.try(t.Context(), "POST", "/api/v1/push", pushOneBody("q", "a")); err == nil {
		t.Fatal("a dropped push got an answer")
	}
	c.Push(testutil.Item{Queue: "q", TransactionID: "b"})
	if got := stored(t, c, "q"); strings.Join(got, ",") != "b" {
		t.Fatalf("stored %v, want only b", got)
	}
}

// After applies the request and then loses its answer: a status instead of the result, or a
// dropped connection when Status is 0. The push is stored once; its retry is a duplicate.
func TestFaultAfterAppliesOnce(t *testing.T) {
	t.Parallel()
	for name, f := range map[string]Fault{
		"status": {Route: "push", After: true, Status: http.StatusInternalServerError},
		"drop":   {Route: "push", After: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv, c := start(t)
			raw := newRawClient(t, srv)
			srv.Fail(f)
			r, err := raw.try(t.Context(), "POST", "/api/v1/push", pushOneBody("q", "t1"))
			if f.Status != 0 {
				if err != nil {
					t.Fatal(err)
				}
				r.WantError(t, f.Status, "injected")
			} else if err == nil {
				t.Fatalf("a dropped answer arrived: %d %s", r.Status, r.Body)
			}
			res := c.Push(testutil.Item{Queue: "q", TransactionID: "t1"})
			if res[0].Status != "duplicate" || res[0].Offset != 0 {
				t.Fatalf("retry of the applied push: %+v, want the duplicate of offset 0", res[0])
			}
			if got := stored(t, c, "q"); strings.Join(got, ",") != "t1" {
				t.Fatalf("stored %v, want t1 once", got)
			}
		})
	}
}

// An ack whose answer is lost was applied: the message is not delivered again.
func TestFaultAfterAck(t *testing.T) {
	t.Parallel()
	srv, c := start(t)
	raw := newRawClient(t, srv)
	c.PushN("q", "", "m", 2)
	res := c.MustPop("/api/v1/pop/queue/q", testutil.Query("batch", "2"))
	srv.Fail(Fault{Route: "ack", After: true})
	body := testutil.JSONText(t, map[string]any{"acknowledgments": []map[string]any{
		{"transactionId": res.Messages[0].TransactionID, "partitionId": res.PartitionID, "leaseId": res.LeaseID, "status": "completed"},
		{"transactionId": res.Messages[1].TransactionID, "partitionId": res.PartitionID, "leaseId": res.LeaseID, "status": "completed"},
	}})
	if _, err := raw.try(t.Context(), "POST", "/api/v1/ack/batch", body); err == nil {
		t.Fatal("the ack's answer arrived")
	}
	if again := c.Pop("/api/v1/pop/queue/q", nil); again != nil {
		t.Fatalf("acked messages delivered again: %+v", again.Messages)
	}
}

// Each route name matches its requests only; "" matches every request.
func TestFaultRoutes(t *testing.T) {
	t.Parallel()
	requests := []struct {
		route, method, path, body string
	}{
		{"push", "POST", "/api/v1/push", pushOneBody("q", "x")},
		{"pop", "GET", "/api/v1/pop/queue/q?wait=false", ""},
		{"pop", "GET", "/api/v1/pop/queue/q/partition/Default?wait=false", ""},
		{"pop", "GET", "/api/v1/pop?namespace=ns&wait=false", ""},
		{"ack", "POST", "/api/v1/ack", `{"transactionId":"x","partitionId":"p"}`},
		{"ack", "POST", "/api/v1/ack/batch", `{"acknowledgments":[]}`},
		{"extend", "POST", "/api/v1/lease/l1/extend", `{"seconds":5}`},
		{"transaction", "POST", "/api/v1/transaction", `{"operations":[]}`},
		{"other", "POST", "/api/v1/configure", `{"queue":"q"}`},
		{"other", "GET", "/health", ""},
	}
	for _, route := range faultRoutes {
		t.Run("route="+route, func(t *testing.T) {
			t.Parallel()
			srv := NewServer(t)
			raw := newRawClient(t, srv)
			for _, r := range requests {
				srv.Fail(Fault{Route: route, Status: 418 + 100}) // 518: no broker answers it
				got, err := raw.try(t.Context(), r.method, r.path, r.body)
				if err != nil {
					t.Fatalf("%s %s: %v", r.method, r.path, err)
				}
				want := route == "" || route == r.route
				if (got.Status == 518) != want {
					t.Errorf("%s %s answered %d; fault of route %q should apply: %v", r.method, r.path, got.Status, route, want)
				}
				srv.ClearFaults()
			}
		})
	}
}

// Faults are met in the order they were armed; one with nothing to do lets requests through.
func TestFaultOrder(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	raw := newRawClient(t, srv)
	srv.Fail(Fault{Route: "push", Times: 2})
	srv.Fail(Fault{Route: "push", Status: 503})
	srv.Fail(Fault{Route: "push", Status: 502, Times: 2})
	var got []int
	for i := range 6 {
		r, err := raw.try(t.Context(), "POST", "/api/v1/push", pushOneBody("q", strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r.Status)
	}
	want := []int{201, 201, 503, 502, 502, 201}
	if stringsOf(got) != stringsOf(want) {
		t.Fatalf("statuses %v, want %v", got, want)
	}
	if met := srv.FaultsMet(); met != 3 {
		t.Fatalf("FaultsMet %d, want 3 (a fault with nothing to do is not counted)", met)
	}
}

func stringsOf(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// Concurrent requests share no fault use: exactly Times of them meet it.
func TestFaultTimesUnderConcurrency(t *testing.T) {
	t.Parallel()
	srv, c := start(t)
	raw := newRawClient(t, srv)
	const requests, times = 40, 10
	srv.Fail(Fault{Route: "push", Status: 503, Times: times})
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		failures int
	)
	for i := range requests {
		wg.Go(func() {
			r, err := raw.try(t.Context(), "POST", "/api/v1/push", pushOneBody("q", "t"+strconv.Itoa(i)))
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if r.Status == 503 {
				failures++
			}
		})
	}
	wg.Wait()
	if failures != times {
		t.Fatalf("%d pushes met the fault, want %d", failures, times)
	}
	if got := len(stored(t, c, "q")); got != requests-times {
		t.Fatalf("%d stored, want %d", got, requests-times)
	}
}

// heldSignal makes the server report each request a Delay holds.
func heldSignal(srv *Server) <-chan struct{} {
	ch := make(chan struct{}, 16)
	srv.faults.held = func() { ch <- struct{}{} }
	return ch
}

// A delayed request reaches the broker only once its delay has passed: while held it is not
// applied, and a client that gives up first leaves nothing behind.
func TestFaultDelayHoldsTheRequest(t *testing.T) {
	t.Parallel()
	srv, c := start(t)
	raw := newRawClient(t, srv)
	held := heldSignal(srv)
	srv.Fail(Fault{Route: "push", Delay: time.Hour})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := raw.try(ctx, "POST", "/api/v1/push", pushOneBody("q", "late"))
		done <- err
	}()
	<-held
	if got := stored(t, c, "q"); len(got) != 0 {
		t.Fatalf("stored %v while the push was held", got)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("held push ended with %v, want context.Canceled", err)
	}
	c.Push(testutil.Item{Queue: "q", TransactionID: "next"})
	srv.Close() // waits for the held handler to return
	if n := srv.engine.WaitingPops(); n != 0 {
		t.Fatalf("%d pops waiting", n)
	}
	if got := srv.Lag("q", "fresh"); got != 1 {
		t.Fatalf("%d messages stored, want 1: the abandoned push must not be applied", got)
	}
}

// A short delay only delays: the request is applied and answered.
func TestFaultDelayThenAnswer(t *testing.T) {
	t.Parallel()
	srv, c := start(t)
	raw := newRawClient(t, srv)
	const d = 20 * time.Millisecond
	srv.Fail(Fault{Route: "push", Delay: d})
	begin := time.Now()
	r, err := raw.try(t.Context(), "POST", "/api/v1/push", pushOneBody("q", "a"))
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(begin); took < d {
		t.Fatalf("answered after %v, before the %v delay", took, d)
	}
	r.Want(t, http.StatusCreated, nil)
	if got := stored(t, c, "q"); strings.Join(got, ",") != "a" {
		t.Fatalf("stored %v", got)
	}
}

// With After, the request is applied before the delay holds its answer.
func TestFaultDelayAfterApplying(t *testing.T) {
	t.Parallel()
	srv, c := start(t)
	raw := newRawClient(t, srv)
	held := heldSignal(srv)
	srv.Fail(Fault{Route: "push", After: true, Status: 503, Delay: time.Hour})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := raw.try(ctx, "POST", "/api/v1/push", pushOneBody("q", "early"))
		done <- err
	}()
	<-held
	if got := stored(t, c, "q"); strings.Join(got, ",") != "early" {
		t.Fatalf("stored %v while the answer was held, want early", got)
	}
	cancel()
	<-done
}

// Close ends delays at once rather than waiting for them.
func TestFaultDelayEndsWithClose(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	raw := newRawClient(t, srv)
	held := heldSignal(srv)
	srv.Fail(Fault{Route: "pop", Delay: time.Hour})
	done := make(chan error, 1)
	go func() {
		_, err := raw.try(t.Context(), "GET", "/api/v1/pop/queue/q", "")
		done <- err
	}()
	<-held
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	<-done
}

func TestFaultRefusesNonsense(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	for name, f := range map[string]Fault{
		"route":       {Route: "poll"},
		"status":      {Status: 200},
		"drop+status": {Drop: true, Status: 503},
		"delay":       {Delay: -time.Second},
		"times":       {Times: -1},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if v := recover(); v == nil || !strings.Contains(v.(string), "queentest: Fault.") {
					t.Fatalf("Fail(%+v) did not panic with a clear message: %v", f, v)
				}
			}()
			srv.Fail(f)
		})
	}
	if srv.FaultsLeft() != 0 {
		t.Fatal("a refused fault was armed")
	}
}
