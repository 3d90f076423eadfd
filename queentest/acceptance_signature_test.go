package queentest_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/queenmq/queen-go/queentest"
)

// Every exported name of queentest, as a user's test compiles against it.
func TestAcceptanceQueentestSignatures(t *testing.T) {
	t.Parallel()
	var (
		_ func(testing.TB, ...queentest.Option) *queentest.Server    = queentest.NewServer
		_ func(...queentest.Option) (*queentest.Server, error)       = queentest.Start
		_ func(string) queentest.Option                              = queentest.WithToken
		_ func() queentest.Option                                    = queentest.WithManualClock
		_ func(string) queentest.Option                              = queentest.WithCompat
		_ func(testing.TB, func(context.Context) error) func() error = queentest.Run
	)
	srv, err := queentest.Start(queentest.WithManualClock(), queentest.WithCompat("0.15"))
	if err != nil {
		t.Fatal(err)
	}
	var (
		_ func() string                               = srv.URL
		_ func() error                                = srv.Close
		_ func(time.Duration)                         = srv.Advance
		_ func() http.Handler                         = srv.Handler
		_ func(string) int                            = srv.DeadLetters
		_ func(string, string) int64                  = srv.Lag
		_ func(context.Context, string, string) error = srv.WaitIdle
		_ func(queentest.Fault)                       = srv.Fail
		_                                             = queentest.Fault{Route: "push", Status: 503, Drop: false, After: true, Delay: time.Millisecond, Times: 2}
	)
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"", "2.0", "0.15"} {
		s := queentest.NewServer(t, queentest.WithCompat(v), queentest.WithToken("tok"))
		if s.URL() == "" {
			t.Fatalf("compat %q: no URL", v)
		}
	}
}
