package queentest

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/wire"
)

// WithCompat makes the broker answer on the wire as the given Queen version does: "0.15"
// behaves as a real 0.15 broker (HTTP 200 where 201 or 204 was meant, errors as 200
// {"success":false}, no offsets or delivery attempts, its lease, ack and subscription
// semantics, its bugs included), so that a client can be tested against it without one.
// "" or "2.0" is the default, the 2.0 design. Start (and NewServer, which fails the test)
// refuses any other value with an error naming it.
func WithCompat(version string) Option { return func(c *config) { c.compat = version } }

// compatMode maps WithCompat's version to the engine's mode.
func compatMode(version string) (broker.Mode, error) {
	switch version {
	case "", "2.0":
		return broker.Mode20, nil
	case "0.15":
		return broker.Mode015, nil
	}
	return broker.Mode20, fmt.Errorf(`queentest: WithCompat(%q): unknown Queen version; want "2.0" (or "") or "0.15"`, version)
}

func compatName(version string) string {
	if version == "" {
		return "2.0"
	}
	return version
}

// newRouter015 serves 0.15's routes: its own handlers where the whole answer differs, 2.0's
// elsewhere (those of push, pop, ack, extend and transaction branch to their 0.15 answers),
// and for everything else (the discovery pop, DLQ replay and delete, an unserved method)
// 0.15's HTML 404 (O4, O10, O25).
func newRouter015(s *Server, mux20 *http.ServeMux) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", handleHealth015)
	mux.HandleFunc("POST /api/v1/configure", s.handleConfigure015)
	mux.HandleFunc("GET /api/v1/dlq", s.handleDLQList015)
	mux.HandleFunc("POST /api/v1/consumer-groups/{group}/queues/{queue}/seek", s.handleSeek015)
	mux.HandleFunc("DELETE /api/v1/consumer-groups/{group}", s.handleDeleteGroup015)
	mux.HandleFunc("DELETE /api/v1/consumer-groups/{group}/queues/{queue}", s.handleDeleteGroup015)
	mux.HandleFunc("DELETE /api/v1/resources/queues/{queue}", s.handleDeleteQueue015)
	routeIntrospection015(s, mux)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead { // the mux would serve a HEAD pop as a GET
			writeNotFound015(w)
			return
		}
		if _, pattern := mux.Handler(r); pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		if _, pattern := mux20.Handler(r); pattern != "" && !absent015[pattern] {
			mux20.ServeHTTP(w, r)
			return
		}
		writeNotFound015(w)
	})
}

// absent015 are the 2.0 routes 0.15 does not serve.
var absent015 = map[string]bool{
	"GET /api/v1/pop":              true, // O10
	"POST /api/v1/dlq/{id}/replay": true, // O25
	"DELETE /api/v1/dlq/{id}":      true, // O25
}

// notFound015 is 0.15's answer to a path it does not serve, byte for byte (capture B10).
const notFound015 = `<html><body><h1>File Not Found</h1><hr><i>uWebSockets/20 Server</i></body></html>`

// writeNotFound015 answers 404 with the HTML body and, as 0.15, no Content-Type.
func writeNotFound015(w http.ResponseWriter) {
	h := w.Header()
	h["Content-Type"] = nil // keep net/http from sniffing one
	h.Set("Content-Length", fmt.Sprint(len(notFound015)))
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte(notFound015))
}

// health015 is 0.15's /health (capture A1): a fixed version whatever the build (O38).
const health015 = `{"database":"connected","queen":{"status":"active","worker_id":0},"server":"C++ Queen Server (libqueen)","shared_state":{"enabled":false,"maintenance_mode":false,"pop_maintenance_mode":false,"queue_config_cache":{"hit_rate":0.0,"hits":0,"misses":0,"size":0},"running":false,"server_health":{"heartbeats_received":0,"restarts_detected":0,"servers_alive":0,"servers_dead":0,"servers_tracked":0},"server_id":"queentest"},"status":"healthy","version":"1.0.0","worker_id":0}`

func handleHealth015(w http.ResponseWriter, _ *http.Request) {
	writeBody(w, http.StatusOK, []byte(health015))
}

// writeFailure015 is 0.15's answer to what its database refused: 200 {"success":false} (O3).
func writeFailure015(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusOK, wire.Failure015{Error: msg})
}

// writeTypeError015 is 0.15's answer to a body field of the wrong JSON type: a 500 carrying
// the JSON library's exception (O4).
func writeTypeError015(w http.ResponseWriter, field, want string) {
	writeError(w, http.StatusInternalServerError,
		fmt.Sprintf("[json.exception.type_error.302] type must be %s, but is not (%s)", want, field))
}

// requireToken015 checks the token as 0.15 does: "Bearer <token>" or the bare token (O26).
func requireToken015(token string, next http.Handler) http.Handler {
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Get("Authorization")
		bare := subtle.ConstantTimeCompare([]byte(strings.TrimSpace(h)), want) == 1
		if isAPIPath(r.URL.Path) && !bare && !bearerMatches(h, want) {
			writeError(w, http.StatusUnauthorized, "Authentication required")
			return
		}
		next.ServeHTTP(w, r)
	})
}
