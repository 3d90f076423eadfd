package queentest

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/queenmq/queen-go/internal/testutil"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// start is NewServer plus a raw client for it.
func start(t testing.TB, opts ...Option) (*Server, *testutil.Client) {
	t.Helper()
	srv := NewServer(t, opts...)
	return srv, testutil.NewClient(t, srv.URL())
}
