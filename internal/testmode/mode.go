// Package testmode runs integration tests against the reference broker as 2.0 and as 0.15.
package testmode

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/queenmq/queen-go/queentest"
)

// Mode is a broker generation the integration tests run against: the reference broker as
// the 2.0 design, or as a 0.15 broker (queentest.WithCompat("0.15")). Its methods give the
// expectations that differ between the two.
type Mode struct {
	Name string // "2.0" or "0.15", also the subtest's name
	V015 bool
}

// Modes are both generations, 2.0 first.
var Modes = []Mode{{Name: "2.0"}, {Name: "0.15", V015: true}}

// ForEachMode runs body as a parallel subtest per mode.
func ForEachMode(t *testing.T, body func(t *testing.T, m Mode)) {
	t.Helper()
	for _, m := range Modes {
		t.Run(m.Name, func(t *testing.T) {
			t.Parallel()
			body(t, m)
		})
	}
}

// Options are opts with the mode's WithCompat first.
func (m Mode) Options(opts ...queentest.Option) []queentest.Option {
	return append([]queentest.Option{queentest.WithCompat(m.Name)}, opts...)
}

// Server starts a reference broker in this mode, closed when the test ends.
func (m Mode) Server(t testing.TB, opts ...queentest.Option) *queentest.Server {
	t.Helper()
	return queentest.NewServer(t, m.Options(opts...)...)
}

// Offset is what a message or push result reports for offset off: -1 on 0.15, which sends
// none.
func (m Mode) Offset(off int64) int64 {
	if m.V015 {
		return -1
	}
	return off
}

// Attempt is what a message reports as its delivery attempt n: 0 on 0.15, which sends none.
func (m Mode) Attempt(n int) int {
	if m.V015 {
		return 0
	}
	return n
}

// Main runs a package's tests for a TestMain, failing it if a test leaves a goroutine behind.
// It first clears QUEEN_COMPAT: the package's tests pick each broker mode themselves, so a run
// under QUEEN_COMPAT=0.15 (meant for a suite that does not) must not turn their 2.0 servers
// into 0.15 ones.
func Main(m *testing.M) {
	os.Unsetenv("QUEEN_COMPAT")
	goleak.VerifyTestMain(m)
}
