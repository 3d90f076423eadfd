package refserver

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/testutil"
)

// Shutdown answers waiting pops, then cuts off what still runs when its ctx ends.
func TestShutdownAnswersWaitingPopsThenCutsOffSlowClients(t *testing.T) {
	t.Parallel()
	srv := unstartedServer() // not newTestServer: its cleanup would report the cut-off as a failure
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	c := testutil.NewClient(t, srv.URL())
	slow := dial(t, srv)
	if _, err := io.WriteString(slow, "POST /api/v1/push HTTP/1.1\r\nHost: broker\r\nContent-Length: 100\r\n\r\n{"); err != nil {
		t.Fatal(err)
	}
	popped := make(chan testutil.Response, 1)
	go func() { popped <- c.Get("/api/v1/pop/queue/none?wait=true&timeout=60000") }()
	testutil.Eventually(t, "the pop waits", func() bool { return srv.WaitingPops() == 1 })

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := srv.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v, want the ctx's deadline", err)
	}
	if r := <-popped; r.Status != http.StatusNoContent {
		t.Fatalf("the waiting pop got %d, want 204", r.Status)
	}
	waitClosed(t, slow, 5*time.Second)
}
