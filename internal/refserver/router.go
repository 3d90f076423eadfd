package refserver

import (
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/queenmq/queen-go/internal/route"
)

// router20 serves the 2.0 routes; a path that is not in canonical form, or fits no route,
// answers a JSON 404, and a method the path does not serve a JSON 405.
func (s *Server) router20() http.Handler {
	return canonicalPaths(jsonFallbacks(serveMux(s.handlers20(), func(rt route.Route) bool { return rt.V20 })))
}

// handlers20 are the handlers of the 2.0 routes; one file per route family holds them.
func (s *Server) handlers20() map[route.Route]http.HandlerFunc {
	return map[route.Route]http.HandlerFunc{
		route.Health:             handleHealth,
		route.Configure:          s.handleConfigure,
		route.Push:               s.handlePush,
		route.PopQueue:           s.handlePop,
		route.PopPartition:       s.handlePop,
		route.PopDiscovery:       s.handlePopDiscovery,
		route.Ack:                s.handleAck,
		route.AckBatch:           s.handleAckBatch,
		route.Extend:             s.handleExtend,
		route.Transaction:        s.handleTransaction,
		route.DeadLetters:        s.handleDLQList,
		route.ReplayDeadLetter:   s.handleDLQReplay,
		route.DeleteDeadLetter:   s.handleDLQDelete,
		route.Seek:               s.handleSeek,
		route.DeleteGroup:        s.handleDeleteGroup,
		route.DeleteGroupOnQueue: s.handleDeleteGroupOnQueue,
		route.DeleteQueue:        s.handleDeleteQueue,
		route.QueueList:          s.handleQueueList,
		route.QueueDetail:        s.handleQueueDetail,
		route.GroupList:          s.handleGroupList,
		route.Lagging:            s.handleLagging,
		route.GroupDetail:        s.handleGroupDetail,
		route.Messages:           s.handleMessages,
		route.Message:            s.handleMessage,
		route.Overview:           s.handleOverview,
	}
}

// serveMux registers handlers for the routes of the route table that serves reports. A route
// served without a handler, or a handler for a route not served, is a programming error.
func serveMux(handlers map[route.Route]http.HandlerFunc, serves func(route.Route) bool) *http.ServeMux {
	mux := http.NewServeMux()
	n := 0
	for _, rt := range route.All {
		h, ok := handlers[rt]
		if ok != serves(rt) {
			panic("refserver: a handler for " + rt.Mux() + " must be given exactly when the route is served")
		}
		if ok {
			mux.HandleFunc(rt.Mux(), h)
			n++
		}
	}
	if n != len(handlers) {
		panic("refserver: a handler for a route outside the route table")
	}
	return mux
}

// jsonFallbacks replaces ServeMux's plain-text 404 and 405 answers with JSON ones.
func jsonFallbacks(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := mux.Handler(r)
		if r.Method == http.MethodHead && strings.HasPrefix(pattern, http.MethodGet+" ") && route.IsAPI(r.URL.Path) {
			// The mux serves HEAD as GET; a HEAD pop would lease messages nobody receives.
			// The API serves no HEAD route.
			w.Header().Set("Allow", "GET")
			WriteError(w, http.StatusMethodNotAllowed, "method not allowed")
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
			WriteError(w, http.StatusMethodNotAllowed, "method not allowed")
			return
		}
		WriteError(w, http.StatusNotFound, "not found")
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

// recoverPanics turns a panic into 500 {"error":...} and logs its stack.
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
			WriteError(w, http.StatusInternalServerError, "internal error")
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
