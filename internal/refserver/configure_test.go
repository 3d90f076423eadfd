package refserver

import (
	"net/http"
	"testing"
)

// Configure replaces the options; omitted ones take their defaults.
func TestConfigureReplacesTheOptions(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	var conf map[string]any
	c.Post("/api/v1/configure", `{"queue":"cfg","namespace":"n","options":{"leaseTime":5,"retryLimit":9,"deadLetterQueue":false}}`).Want(t, http.StatusOK, &conf)
	c.Post("/api/v1/configure", `{"queue":"cfg"}`).Want(t, http.StatusOK, &conf)
	opts := conf["options"].(map[string]any)
	if opts["leaseTime"] != float64(60) || opts["retryLimit"] != float64(3) || opts["deadLetterQueue"] != true || conf["namespace"] != "" {
		t.Fatalf("reconfigure without options = %v, want the defaults", conf)
	}
}
