package refserver

import (
	"net/http"
	"strings"
	"testing"

	"github.com/queenmq/queen-go/internal/testutil"
)

// R132: Bearer auth on /api/v1, scheme case-insensitive, 401 with no effect, /health open.
func TestAuth_BearerToken_R132(t *testing.T) {
	t.Parallel()
	srv, c := start(t, withToken("s3cret"))
	push := `{"items":[{"queue":"auth"}]}`
	for _, header := range []string{"", "Bearer wrong", "Basic czNjcmV0", "s3cret", "Bearer", "Bearer  s3cretx", "Token s3cret"} {
		req, _ := http.NewRequest("POST", srv.URL()+"/api/v1/push", strings.NewReader(push))
		if header != "" {
			req.Header.Set("Authorization", header)
		}
		resp, err := c.HC.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r := testutil.Response{Status: resp.StatusCode, Header: resp.Header}
		r.Body = readAll(t, resp)
		if r.Status != http.StatusUnauthorized || string(r.Body) != `{"error":"Authentication required"}` {
			t.Errorf("Authorization %q: %d %s, want 401 Authentication required", header, r.Status, r.Body)
		}
	}
	// Unknown /api/v1 paths need the token too; /health and other paths do not.
	c.Get("/api/v1/nope").WantError(t, http.StatusUnauthorized, "Authentication required")
	c.Get("/health").Want(t, http.StatusOK, nil)
	c.Get("/nope").WantError(t, http.StatusNotFound, "not found")

	for _, scheme := range []string{"Bearer", "bearer", "BEARER"} {
		req, _ := http.NewRequest("GET", srv.URL()+"/api/v1/pop/queue/auth", nil)
		req.Header.Set("Authorization", scheme+" s3cret")
		resp, err := c.HC.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		readAll(t, resp)
		if resp.StatusCode != http.StatusNoContent {
			t.Errorf("%s s3cret: status %d, want 204: nothing was stored by the refused pushes", scheme, resp.StatusCode)
		}
	}
	c.Token = "s3cret"
	c.Get("/api/v1/nope").WantError(t, http.StatusNotFound, "not found")
	c.Push(testutil.Item{Queue: "auth"})
	c.MustPop("/api/v1/pop/queue/auth", nil)
}

// R133: unknown paths answer 404 {"error":"not found"}, other methods 405 {"error":"method not allowed"}.
func TestRoutes_UnknownPathsAndMethods_R133(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	notFound := [][2]string{
		{"GET", "/"},
		{"GET", "/api/v1"},
		{"GET", "/api/v1/status"},
		{"GET", "/api/v1/messages/p0-0"},
		{"GET", "/api/v1/status/queues/q/messages"},
		{"GET", "/api/v1/resources/queues"},
		{"GET", "/api/v1/analytics/queues"},
		{"POST", "/api/v1/consumer-groups/g/queues/q/partitions/p/seek"}, // R116
		{"GET", "/api/v1/pop/queue"},
		{"GET", "/api/v1/pop/queue/q/partition"},
		{"GET", "/api/v1/pop/queue/q/partition/p/extra"},
		{"POST", "/api/v1/push/"},
		{"GET", "/healthz"},
	}
	for _, rt := range notFound {
		r := c.Do(rt[0], rt[1], "")
		if r.Status != http.StatusNotFound || string(r.Body) != `{"error":"not found"}` {
			t.Errorf("%s %s: %d %s, want 404 not found", rt[0], rt[1], r.Status, r.Body)
		}
	}
	notAllowed := [][2]string{
		{"POST", "/health"},
		{"GET", "/api/v1/push"},
		{"PUT", "/api/v1/configure"},
		{"POST", "/api/v1/pop/queue/q"},
		{"DELETE", "/api/v1/pop"},
		{"GET", "/api/v1/ack"},
		{"GET", "/api/v1/ack/batch"},
		{"GET", "/api/v1/lease/L/extend"},
		{"GET", "/api/v1/transaction"},
		{"POST", "/api/v1/dlq"},
		{"GET", "/api/v1/dlq/id/replay"},
		{"POST", "/api/v1/dlq/id"},
		{"GET", "/api/v1/consumer-groups/g/queues/q/seek"},
		{"POST", "/api/v1/consumer-groups/g"},
		{"GET", "/api/v1/resources/queues/q"},
	}
	for _, rt := range notAllowed {
		r := c.Do(rt[0], rt[1], "")
		if r.Status != http.StatusMethodNotAllowed || string(r.Body) != `{"error":"method not allowed"}` {
			t.Errorf("%s %s: %d %s, want 405 method not allowed", rt[0], rt[1], r.Status, r.Body)
		}
		if r.Header.Get("Allow") == "" {
			t.Errorf("%s %s: 405 without an Allow header", rt[0], rt[1])
		}
	}
}

// §2.1: path segments are percent-decoded.
func TestRoutes_PathSegmentsAreDecoded(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.Push(testutil.Item{Queue: "a/b c", Partition: "p/1", TransactionID: "enc"})
	res := c.MustPop("/api/v1/pop/queue/a%2Fb%20c/partition/p%2F1", nil)
	if res.Queue != "a/b c" || res.Partition != "p/1" {
		t.Fatalf("popped from %q/%q", res.Queue, res.Partition)
	}
}

func readAll(t testing.TB, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return []byte(b.String())
}

// R133, R142: §2.2 serves no HEAD route. The mux would serve HEAD as GET, so a HEAD pop would
// lease messages whose answer nobody reads; it is refused and leases nothing.
func TestRoutes_HeadIsNotServed_R133(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.PushN("heads", "p", "h", 1)
	for _, path := range []string{"/api/v1/pop/queue/heads", "/api/v1/pop/queue/heads/partition/p", "/api/v1/dlq"} {
		r := c.Do("HEAD", path, "")
		if r.Status != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "GET" {
			t.Errorf("HEAD %s: %d, Allow %q; want 405, Allow GET", path, r.Status, r.Header.Get("Allow"))
		}
	}
	res := c.MustPop("/api/v1/pop/queue/heads", nil)
	if got := res.Messages[0].DeliveryAttempt; got != 1 {
		t.Errorf("deliveryAttempt after HEAD pops = %d, want 1: a HEAD leased the message", got)
	}
}
