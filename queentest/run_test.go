package queentest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/queenmq/queen-go/internal/testutil"
)

// Without WithCompat, NewServer behaves as the version QUEEN_COMPAT names; WithCompat wins.
func TestNewServer_FollowsQueenCompat(t *testing.T) {
	pushStatus := func(t *testing.T, srv *Server) int {
		t.Helper()
		return testutil.NewClient(t, srv.URL()).Post("/api/v1/push", `{"items":[{"queue":"q"}]}`).Status
	}
	for _, tc := range []struct {
		env  string
		opts []Option
		want int // a 2.0 push answers 201, a 0.15 one 200
	}{
		{"0.15", nil, http.StatusOK},
		{"2.0", nil, http.StatusCreated},
		{"", nil, http.StatusCreated},
		{"0.15", []Option{WithCompat("2.0")}, http.StatusCreated},
		{"0.15", []Option{WithCompat("")}, http.StatusCreated},
		{"2.0", []Option{WithCompat("0.15")}, http.StatusOK},
	} {
		t.Run(fmt.Sprintf("%s=%q with %d options", compatEnv, tc.env, len(tc.opts)), func(t *testing.T) {
			t.Setenv(compatEnv, tc.env)
			if got := pushStatus(t, NewServer(t, tc.opts...)); got != tc.want {
				t.Errorf("push answered %d, want %d", got, tc.want)
			}
		})
	}
	t.Run("unset", func(t *testing.T) {
		t.Setenv(compatEnv, "")
		if got := pushStatus(t, NewServer(t)); got != http.StatusCreated {
			t.Errorf("push answered %d, want 2.0's 201", got)
		}
	})
}

// fatalRecorder is a testing.TB whose Fatal records its message and ends the goroutine, as a
// test's would.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Helper() {}
func (r *fatalRecorder) Fatal(args ...any) {
	r.msg = fmt.Sprint(args...)
	runtime.Goexit()
}

// An unknown QUEEN_COMPAT fails the test, naming the variable and its value.
func TestNewServer_RefusesAnUnknownQueenCompat(t *testing.T) {
	t.Setenv(compatEnv, "1.0")
	rec := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		NewServer(rec)
	}()
	testutil.Recv(t, done, "NewServer to give up")
	if !strings.Contains(rec.msg, `QUEEN_COMPAT="1.0"`) {
		t.Fatalf("NewServer failed with %q, want the variable and its value named", rec.msg)
	}
	if _, err := Start(WithCompat("1.0")); err == nil || !strings.Contains(err.Error(), `WithCompat("1.0")`) {
		t.Fatalf("Start(WithCompat(1.0)) = %v, want an error naming the option", err)
	}
}

// cleanupRecorder is a testing.TB whose context, cleanups and errors the test drives.
type cleanupRecorder struct {
	testing.TB
	ctx      context.Context
	cancel   context.CancelFunc
	mu       sync.Mutex
	cleanups []func()
	errs     []string
}

func newCleanupRecorder(t *testing.T) *cleanupRecorder {
	ctx, cancel := context.WithCancel(context.Background())
	return &cleanupRecorder{TB: t, ctx: ctx, cancel: cancel}
}

func (r *cleanupRecorder) Helper()                  {}
func (r *cleanupRecorder) Context() context.Context { return r.ctx }
func (r *cleanupRecorder) Cleanup(f func())         { r.cleanups = append(r.cleanups, f) }
func (r *cleanupRecorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// end ends the test as the testing package does: the context first, then the cleanups, last
// registered first.
func (r *cleanupRecorder) end() []string {
	r.cancel()
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
	return r.errs
}

// stop ends fn's ctx, waits for it, and reports a graceful stop as nil.
func TestRun_StopEndsTheContextAndWaits(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	returned := false
	stop := Run(t, func(ctx context.Context) error {
		close(started)
		<-ctx.Done()
		returned = true
		return ctx.Err()
	})
	testutil.Recv(t, started, "fn to start")
	if err := stop(); err != nil || !returned {
		t.Fatalf("stop() = %v (fn returned: %t), want nil once fn returned", err, returned)
	}
	if err := stop(); err != nil {
		t.Fatalf("a second stop() = %v, want the same nil", err)
	}
}

// stop returns any other error of fn, and the test's cleanup then reports nothing more.
func TestRun_StopReturnsTheFunctionsError(t *testing.T) {
	t.Parallel()
	rec := newCleanupRecorder(t)
	boom := errors.New("boom")
	stop := Run(rec, func(ctx context.Context) error {
		<-ctx.Done()
		return fmt.Errorf("worker: %w", boom)
	})
	if err := stop(); !errors.Is(err, boom) {
		t.Fatalf("stop() = %v, want fn's error", err)
	}
	if errs := rec.end(); len(errs) != 0 {
		t.Fatalf("the cleanup reported %v after stop had returned the error", errs)
	}
}

// Without stop, the test's end ends fn's ctx; the cleanup waits for fn and fails the test
// for an error that was not a graceful stop.
func TestRun_CleanupStopsAndFailsOnAnError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		what   string
		result func(ctx context.Context) error
		fails  bool
	}{
		{"graceful", func(ctx context.Context) error { return ctx.Err() }, false},
		{"nil", func(context.Context) error { return nil }, false},
		{"an error", func(context.Context) error { return errors.New("refused token") }, true},
	} {
		rec := newCleanupRecorder(t)
		ended := make(chan struct{})
		Run(rec, func(ctx context.Context) error {
			<-ctx.Done()
			close(ended)
			return tc.result(ctx)
		})
		errs := rec.end()
		select {
		case <-ended:
		default:
			t.Fatalf("%s: the cleanup returned before fn did", tc.what)
		}
		if got := len(errs) > 0; got != tc.fails || (tc.fails && !strings.Contains(errs[0], "refused token")) {
			t.Errorf("%s: cleanup reported %v, want a failure: %t", tc.what, errs, tc.fails)
		}
	}
}

// A function that gives up before the test ends fails the test at its end.
func TestRun_AnEarlyErrorFailsTheTest(t *testing.T) {
	t.Parallel()
	rec := newCleanupRecorder(t)
	returned := make(chan struct{})
	Run(rec, func(context.Context) error {
		defer close(returned)
		return errors.New("bad options")
	})
	testutil.Recv(t, returned, "fn to return")
	if errs := rec.end(); len(errs) != 1 || !strings.Contains(errs[0], "bad options") {
		t.Fatalf("cleanup reported %v, want the early error", errs)
	}
}
