package queen

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The SDK's module never requires OpenTelemetry (or Prometheus): they belong to the otelqueen
// and examples/observability modules, so a program that does not use them never downloads them.
func TestSDKModuleLeavesTelemetryOut(t *testing.T) {
	t.Parallel()
	for _, file := range []string{"go.mod", "go.sum"} {
		raw, err := os.ReadFile(file)
		require.NoError(t, err)
		assert.NotContains(t, string(raw), "go.opentelemetry.io", file)
		assert.NotContains(t, string(raw), "github.com/prometheus", file)
	}
}
