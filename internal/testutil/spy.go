package testutil

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/jarcoal/httpmock"

	"github.com/queenmq/queen-go/internal/route"
)

// Request is one request a Spy saw.
type Request struct {
	Method, Path, RawQuery string // Path is the escaped path
	Header                 http.Header
	Body                   []byte
	Route                  route.Route // the route the path matched (its Pattern is route.Unknown otherwise)
}

// Spy records every request it serves, then hands it to Next, or answers instead of it when
// Override says so. It serves as an http.Handler in front of a broker (NewSpy) and as an
// httpmock responder (Respond). The zero value with Next set is ready.
type Spy struct {
	Next http.Handler

	mu       sync.Mutex
	reqs     []Request
	override func(r *http.Request) (status int, ok bool)
}

// NewSpy starts an HTTP server that spies on every request before next serves it, closed when
// the test ends, and returns the spy and the server's URL.
func NewSpy(t testing.TB, next http.Handler) (*Spy, string) {
	s := &Spy{Next: next}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv.URL
}

// Override makes the spy answer requests for which f says ok with status and an
// {"error":"injected <status>"} body instead of Next; status 0 drops the connection, as a
// crashed broker would. nil ends the override.
func (s *Spy) Override(f func(r *http.Request) (status int, ok bool)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.override = f
}

func (s *Spy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.keep(r)
	s.mu.Lock()
	override := s.override
	s.mu.Unlock()
	if override != nil {
		if status, ok := override(r); ok {
			if status == 0 {
				if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
					_ = conn.Close()
				}
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = fmt.Fprintf(w, `{"error":"injected %d"}`, status)
			return
		}
	}
	s.Next.ServeHTTP(w, r)
}

// Respond is an httpmock responder that records each request and answers status with body as
// JSON.
func (s *Spy) Respond(status int, body string) httpmock.Responder {
	return func(req *http.Request) (*http.Response, error) {
		s.keep(req)
		resp := httpmock.NewStringResponse(status, body)
		resp.Header.Set("Content-Type", "application/json")
		return resp, nil
	}
}

// Answer is an httpmock responder that records each request and answers it with f: a canned
// answer that changes from one request to the next.
func (s *Spy) Answer(f httpmock.Responder) httpmock.Responder {
	return func(req *http.Request) (*http.Response, error) {
		s.keep(req)
		return f(req)
	}
}

// RouteOf is the route a request's path matches (its Pattern is route.Unknown otherwise).
func RouteOf(r *http.Request) route.Route {
	rt, _ := route.Match(r.Method, r.URL.EscapedPath())
	return rt
}

// keep records r and leaves its body readable for whoever serves it next.
func (s *Spy) keep(r *http.Request) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	rt := RouteOf(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, Request{Method: r.Method, Path: r.URL.EscapedPath(), RawQuery: r.URL.RawQuery,
		Header: r.Header.Clone(), Body: body, Route: rt})
}

// All is every request seen so far, in arrival order.
func (s *Spy) All() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Only is the one request seen; it fails the test when there were more or none.
func (s *Spy) Only(t testing.TB) Request {
	t.Helper()
	all := s.All()
	if len(all) != 1 {
		t.Fatalf("saw %d requests, want 1", len(all))
	}
	return all[0]
}

// Of is the requests seen for routes of family f ("pop" counts every pop route).
func (s *Spy) Of(f route.Family) []Request {
	var out []Request
	for _, r := range s.All() {
		if r.Route.Family == f {
			out = append(out, r)
		}
	}
	return out
}

// Count is how many requests were seen for route r.
func (s *Spy) Count(r route.Route) int {
	n := 0
	for _, q := range s.All() {
		if q.Route == r {
			n++
		}
	}
	return n
}

// Containing is how many requests were seen whose path contains part.
func (s *Spy) Containing(part string) int {
	n := 0
	for _, q := range s.All() {
		if strings.Contains(q.Path, part) {
			n++
		}
	}
	return n
}

// Reset forgets every request seen so far.
func (s *Spy) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = nil
}
