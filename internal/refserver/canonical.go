package refserver

import (
	"net/http"
	"strings"
)

// canonicalPaths answers 404 to a path that is not in canonical form: an empty segment ("//"
// or a trailing "/"), or a "." or ".." segment. http.ServeMux would otherwise answer
// such a path with a redirect to its cleaned form, so that a group path ending in ".." could
// reach another route. Percent-escaped dots stay inside their segment and are names, which
// the routes check.
func canonicalPaths(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isCanonicalPath(r.URL.EscapedPath()) {
			WriteError(w, http.StatusNotFound, "not found")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func isCanonicalPath(p string) bool {
	if p == "/" {
		return true
	}
	if !strings.HasPrefix(p, "/") {
		return false
	}
	for seg := range strings.SplitSeq(p[1:], "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}
