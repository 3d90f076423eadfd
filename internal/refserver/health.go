package refserver

import (
	"net/http"
	"runtime/debug"
	"sync"

	"github.com/queenmq/queen-go/internal/wire"
)

const modulePath = "github.com/queenmq/queen-go"

// moduleVersion is the version of the queen-go module this broker was built from, "(devel)"
// when the build does not say.
var moduleVersion = sync.OnceValue(func() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(devel)"
	}
	if info.Main.Path == modulePath && info.Main.Version != "" {
		return info.Main.Version
	}
	for _, dep := range info.Deps {
		if dep.Path == modulePath && dep.Version != "" {
			return dep.Version
		}
	}
	return "(devel)"
})

// handleHealth answers GET /health, open even with a token.
func handleHealth(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, wire.Health{
		Database: "memory", Server: "queen-go reference broker", Status: "healthy", Version: moduleVersion(),
	})
}
