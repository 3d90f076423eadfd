package refserver

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/queenmq/queen-go/internal/route"
)

// requireToken answers 401, with no effect, to API requests without "Authorization: Bearer
// <token>"; the scheme name is case-insensitive, and /health stays open.
func requireToken(token string, next http.Handler) http.Handler {
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if route.IsAPI(r.URL.Path) && !bearerMatches(r.Header.Get("Authorization"), want) {
			w.Header().Set("WWW-Authenticate", "Bearer") // says which scheme to retry with
			WriteError(w, http.StatusUnauthorized, "Authentication required")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func bearerMatches(header string, want []byte) bool {
	scheme, tok, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), want) == 1
}

// closeRefused closes the connection of every 401 answer, so that a client without the token
// cannot keep a connection, and with it a place under the connection cap, by sending request
// after request.
func closeRefused(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&refusalCloser{ResponseWriter: w}, r)
	})
}

// refusalCloser asks the server to close the connection once a 401 is written.
type refusalCloser struct{ http.ResponseWriter }

func (w *refusalCloser) WriteHeader(code int) {
	if code == http.StatusUnauthorized {
		w.Header().Set("Connection", "close")
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *refusalCloser) Unwrap() http.ResponseWriter { return w.ResponseWriter }
