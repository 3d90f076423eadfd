package refserver

import (
	"io"
	"net/http"
	"path"
	"strings"
	"testing"

	"github.com/queenmq/queen-go/internal/testutil"
)

// A path not in canonical form answers 404 {"error":"not found"}, never a redirect.
func TestNonCanonicalPathsAnswer404AndNeverRedirect(t *testing.T) {
	t.Parallel()
	srv, c := start(t)
	c.Push(testutil.Item{Queue: "orders"}, testutil.Item{Queue: "invoices"})
	for _, queue := range []string{"orders", "invoices"} {
		c.Pop("/api/v1/pop/queue/"+queue, testutil.Query("consumerGroup", "billing", "subscriptionMode", "all"))
	}

	noRedirect := &http.Client{
		Transport:     &http.Transport{},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	t.Cleanup(noRedirect.CloseIdleConnections)
	for _, tc := range []struct{ method, path string }{
		{"GET", "//api/v1/dlq"},
		{"GET", "/api/v1//dlq"},
		{"GET", "/./api/v1/dlq"},
		{"GET", "/api/v1/./dlq"},
		{"GET", "/x/../api/v1/dlq"},
		{"GET", "/api/v1/dlq/"},
		{"GET", "/api/v1/dlq/."},
		{"GET", "/api/v1/pop/queue/orders/"},
		{"POST", "/api/v1/push/"},
		{"DELETE", "/api/v1/consumer-groups/billing/queues/.."},
		{"DELETE", "/api/v1/consumer-groups/billing/queues/../../billing"},
		{"DELETE", "/api/v1/resources/queues/orders/.."},
	} {
		req, err := http.NewRequest(tc.method, srv.URL()+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || string(body) != `{"error":"not found"}` || resp.Header.Get("Location") != "" {
			t.Errorf("%s %s = %d %s (Location %q), want 404 {\"error\":\"not found\"}",
				tc.method, tc.path, resp.StatusCode, body, resp.Header.Get("Location"))
		}
	}

	// Nothing was deleted: billing still has its cursor on both queues.
	for _, queue := range []string{"orders", "invoices"} {
		if got := srv.Lag(queue, "billing"); got != 1 {
			t.Errorf("billing's lag on %s = %d, want 1", queue, got)
		}
	}
}

func TestIsCanonicalPath(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{
		"/": true, "/health": true, "/api/v1/pop/queue/%2E%2E": true, "/api/v1/pop/queue/a%2Fb": true,
		"/api/v1/pop/queue/...": true, "": false, "//": false, "/a//b": false, "/a/": false,
		"/a/.": false, "/a/..": false, "/./a": false, "*": false,
	} {
		if got := isCanonicalPath(p); got != want {
			t.Errorf("isCanonicalPath(%q) = %v, want %v", p, got, want)
		}
	}
}

// A path is canonical exactly when cleaning it changes nothing.
func FuzzIsCanonicalPath(f *testing.F) {
	for _, seed := range []string{"/", "/health", "//a", "/a/", "/a/./b", "/a/../b", "/a/%2E%2E", "", "a", "/..."} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, p string) {
		want := strings.HasPrefix(p, "/") && path.Clean(p) == p
		if got := isCanonicalPath(p); got != want {
			t.Fatalf("isCanonicalPath(%q) = %v, want %v (path.Clean gives %q)", p, got, want, path.Clean(p))
		}
	})
}
