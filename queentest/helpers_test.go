package queentest

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/queenmq/queen-go/internal/testutil"
)

// TestMain clears QUEEN_COMPAT, as these tests set the version each needs, and fails the
// package if a test leaves a goroutine behind.
func TestMain(m *testing.M) {
	os.Unsetenv(compatEnv)
	goleak.VerifyTestMain(m)
}

// start is NewServer plus a raw client for it.
func start(t testing.TB, opts ...Option) (*Server, *testutil.Client) {
	t.Helper()
	srv := NewServer(t, opts...)
	return srv, testutil.NewClient(t, srv.URL())
}
