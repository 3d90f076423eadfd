package queentest

import (
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"
)

// newRouter routes §2.2's endpoints, or 0.15's (§4) WithCompat("0.15").
func newRouter(s *Server) http.Handler {
	if s.v015 {
		return newRouter015(s, routes(s))
	}
	return canonicalPaths(jsonFallbacks(routes(s)))
}

// routes registers §2.2's endpoints; one file per route family holds the handlers.
func routes(s *Server) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", handleHealth)
	mux.HandleFunc("POST /api/v1/configure", s.handleConfigure)
	mux.HandleFunc("POST /api/v1/push", s.handlePush)
	mux.HandleFunc("GET /api/v1/pop/queue/{queue}", s.handlePopQueue)
	mux.HandleFunc("GET /api/v1/pop/queue/{queue}/partition/{partition}", s.handlePopPartition)
	mux.HandleFunc("GET /api/v1/pop", s.handlePopDiscovery)
	mux.HandleFunc("POST /api/v1/ack", s.handleAck)
	mux.HandleFunc("POST /api/v1/ack/batch", s.handleAckBatch)
	mux.HandleFunc("POST /api/v1/lease/{leaseId}/extend", s.handleExtend)
	mux.HandleFunc("POST /api/v1/transaction", s.handleTransaction)
	mux.HandleFunc("GET /api/v1/dlq", s.handleDLQList)
	mux.HandleFunc("POST /api/v1/dlq/{id}/replay", s.handleDLQReplay)
	mux.HandleFunc("DELETE /api/v1/dlq/{id}", s.handleDLQDelete)
	mux.HandleFunc("POST /api/v1/consumer-groups/{group}/queues/{queue}/seek", s.handleSeek)
	mux.HandleFunc("DELETE /api/v1/consumer-groups/{group}", s.handleDeleteGroup)
	mux.HandleFunc("DELETE /api/v1/consumer-groups/{group}/queues/{queue}", s.handleDeleteGroupOnQueue)
	mux.HandleFunc("DELETE /api/v1/resources/queues/{queue}", s.handleDeleteQueue)
	mux.HandleFunc("GET /api/v1/status/queues", s.handleQueueList)
	mux.HandleFunc("GET /api/v1/status/queues/{queue}", s.handleQueueDetail)
	mux.HandleFunc("GET /api/v1/consumer-groups", s.handleGroupList)
	mux.HandleFunc("GET /api/v1/consumer-groups/lagging", s.handleLagging)
	mux.HandleFunc("GET /api/v1/consumer-groups/{group}", s.handleGroupDetail)
	mux.HandleFunc("GET /api/v1/messages", s.handleMessages)
	mux.HandleFunc("GET /api/v1/messages/{partitionId}/{transactionId}", s.handleMessage)
	mux.HandleFunc("GET /api/v1/resources/overview", s.handleOverview)
	return mux
}

// jsonFallbacks replaces ServeMux's plain-text 404 and 405 answers with JSON ones (R133).
func jsonFallbacks(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := mux.Handler(r)
		if r.Method == http.MethodHead && strings.HasPrefix(pattern, "GET /api/") {
			// The mux serves HEAD as GET; a HEAD pop would lease messages nobody receives.
			// §2.2 serves no HEAD route (R133).
			w.Header().Set("Allow", "GET")
			writeError(w, http.StatusMethodNotAllowed, "method not allowed")
			return
		}
		if pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		// No route: ask the mux's own answer (404, 405, or a path-cleaning redirect) for its status.
		probe := &statusProbe{header: http.Header{}}
		h.ServeHTTP(probe, r)
		if probe.status == http.StatusMethodNotAllowed {
			if allow := probe.header.Get("Allow"); allow != "" {
				w.Header().Set("Allow", allow)
			}
			writeError(w, http.StatusMethodNotAllowed, "method not allowed")
			return
		}
		writeError(w, http.StatusNotFound, "not found")
	})
}

// statusProbe records what a handler answers and discards the body.
type statusProbe struct {
	header http.Header
	status int
}

func (p *statusProbe) Header() http.Header { return p.header }
func (p *statusProbe) Write(b []byte) (int, error) {
	if p.status == 0 {
		p.status = http.StatusOK
	}
	return len(b), nil
}
func (p *statusProbe) WriteHeader(code int) {
	if p.status == 0 {
		p.status = code
	}
}

// recoverPanics turns a panic into 500 {"error":...} (R134) and logs its stack.
func recoverPanics(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler { // net/http's own way to drop a connection
				panic(v)
			}
			logger.Error("request panicked", "method", r.Method, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
			writeError(w, http.StatusInternalServerError, "internal error")
		}()
		next.ServeHTTP(w, r)
	})
}

// logRequests logs one line per request at Debug; it costs nothing when Debug is off.
func logRequests(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !logger.Enabled(r.Context(), slog.LevelDebug) {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		logger.LogAttrs(r.Context(), slog.LevelDebug, "request",
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.String("query", r.URL.RawQuery),
			slog.Int("status", sw.status),
			slog.Duration("duration", time.Since(start)))
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
