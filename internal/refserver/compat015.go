package refserver

// The routes of a 0.15 broker. What differs from 2.0 on the wire, everywhere:
//
//   - what its database refuses is a 200 {"error":...,"success":false}, and where 2.0 answers
//     201 or 204 it answers 200;
//   - a body field of the wrong JSON type is a 500 carrying its JSON library's exception;
//   - the discovery pop, dead-letter replay and delete, a HEAD request, a path not in
//     canonical form, and any path or method it does not serve answer its HTML 404, with no
//     Content-Type: never a redirect to a cleaned path;
//   - /health names a fixed version whatever the build;
//   - the token may come as "Bearer <token>" or bare, and a refusal carries no
//     WWW-Authenticate.
//
// The handlers of each route family say what else differs there.

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/wire"
)

// router015 serves 0.15's routes.
func (s *Server) router015() http.Handler {
	mux := serveMux(s.handlers015(), func(rt route.Route) bool { return rt.V015 && !unserved015[rt] })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The mux would serve a HEAD pop as a GET, and redirect a path with "//", "." or ".."
		// segments to its cleaned form.
		if r.Method == http.MethodHead || !isCanonicalPath(r.URL.EscapedPath()) {
			writeNotFound015(w)
			return
		}
		if _, pattern := mux.Handler(r); pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		writeNotFound015(w)
	})
}

// handlers015 are the handlers of the 0.15 routes.
func (s *Server) handlers015() map[route.Route]http.HandlerFunc {
	return map[route.Route]http.HandlerFunc{
		route.Health:             handleHealth015,
		route.Configure:          s.handleConfigure015,
		route.Push:               s.handlePush015,
		route.PopQueue:           s.handlePop015,
		route.PopPartition:       s.handlePop015,
		route.Ack:                s.handleAck015,
		route.AckBatch:           s.handleAckBatch015,
		route.Extend:             s.handleExtend015,
		route.Transaction:        s.handleTransaction015,
		route.DeadLetters:        s.handleDLQList015,
		route.Seek:               s.handleSeek015,
		route.DeleteGroup:        s.handleDeleteGroup015,
		route.DeleteGroupOnQueue: s.handleDeleteGroup015,
		route.DeleteQueue:        s.handleDeleteQueue015,
		route.QueueList:          s.handleQueueList015,
		route.QueueDetail:        s.handleQueueDetail015,
		route.GroupList:          s.handleGroupList015,
		route.Lagging:            s.handleLagging015,
		route.GroupDetail:        s.handleGroupDetail015,
		route.Messages:           s.handleMessages015,
		route.Message:            s.handleMessage015,
		route.Overview:           s.handleOverview015,
		route.ResourceQueues:     s.handleResourceQueues015,
		route.ResourceQueue:      s.handleResourceQueue015,
		route.Namespaces:         s.handleNamespaces015,
		route.Tasks:              s.handleTasks015,
		route.Status:             s.handleStatus015,
		route.QueueMessages:      s.handleQueueMessages015,
	}
}

// unserved015 are the routes of a 0.15 broker the reference broker does not serve: they
// answer as a path 0.15 does not know.
var unserved015 = map[route.Route]bool{
	route.StatusBuffers: true, route.StatusAnalytics: true, route.StatsRefresh: true,
}

// notFound015 is 0.15's answer to a path it does not serve, byte for byte.
const notFound015 = `<html><body><h1>File Not Found</h1><hr><i>uWebSockets/20 Server</i></body></html>`

// writeNotFound015 answers 404 with the HTML body and, as 0.15, no Content-Type.
func writeNotFound015(w http.ResponseWriter) {
	h := w.Header()
	h["Content-Type"] = nil // keep net/http from sniffing one
	h.Set("Content-Length", fmt.Sprint(len(notFound015)))
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte(notFound015))
}

// health015 is 0.15's /health: a fixed version whatever the build, and the state its replicas
// share, as a broker of two replicas reports it (the sync on, with its transport's counters).
const health015 = `{"database":"connected","queen":{"status":"active","worker_id":0},"server":"C++ Queen Server (libqueen)",` +
	`"shared_state":{"enabled":true,"maintenance_mode":false,"pop_maintenance_mode":false,` +
	`"queue_config_cache":{"hit_rate":0.0,"hits":0,"misses":0,"size":0},"running":true,` +
	`"server_health":{"heartbeats_received":0,"restarts_detected":0,"servers_alive":0,"servers_dead":0,"servers_tracked":0},"server_id":"queentest",` +
	`"transport":{"learned_identities":{},"learned_identities_count":0,"messages_dropped":0,"messages_received":0,"messages_sent":0,` +
	`"peer_count":1,"peers":[{"config_server_id":"queentest-2","hostname":"queentest-2","port":6634,"resolved":false}],` +
	`"port":6634,"sequence_rejections":0,"server_id":"queentest","session_id":"00000000-0000-7000-8000-000000000000","signature_failures":0}},` +
	`"status":"healthy","version":"1.0.0","worker_id":0}`

func handleHealth015(w http.ResponseWriter, _ *http.Request) {
	writeBody(w, http.StatusOK, []byte(health015))
}

// writeFailure015 is 0.15's answer to what its database refused: 200 {"success":false}.
func writeFailure015(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusOK, wire.Failure015{Error: msg})
}

// writeTypeError015 is 0.15's answer to a body field of the wrong JSON type: a 500 carrying
// the JSON library's exception.
func writeTypeError015(w http.ResponseWriter, field, want string) {
	WriteError(w, http.StatusInternalServerError,
		fmt.Sprintf("[json.exception.type_error.302] type must be %s, but is not (%s)", want, field))
}

// requireToken015 checks the token as 0.15 does: "Bearer <token>" or the bare token.
func requireToken015(token string, next http.Handler) http.Handler {
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Get("Authorization")
		bare := subtle.ConstantTimeCompare([]byte(strings.TrimSpace(h)), want) == 1
		if route.IsAPI(r.URL.Path) && !bare && !bearerMatches(h, want) {
			WriteError(w, http.StatusUnauthorized, "Authentication required")
			return
		}
		next.ServeHTTP(w, r)
	})
}
