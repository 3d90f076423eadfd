package refserver

import (
	"net/http"
	"strings"
	"testing"

	"github.com/queenmq/queen-go/internal/testutil"
)

// Bearer auth on /api/v1, scheme case-insensitive, 401 with no effect, /health open.
func TestTheTokenIsAskedOnTheAPIButNotOnHealth(t *testing.T) {
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

// A 401 says which scheme to use.
func TestARefusalNamesTheSchemeToRetryWith(t *testing.T) {
	t.Parallel()
	_, c := start(t, withToken("s3cret"))
	r := c.Get("/api/v1/dlq")
	r.WantError(t, http.StatusUnauthorized, "Authentication required")
	if got := r.Header.Get("WWW-Authenticate"); got != "Bearer" {
		t.Fatalf("WWW-Authenticate = %q, want Bearer", got)
	}
}
