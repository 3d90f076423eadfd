package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/queenmq/queen-go/internal/testutil"
)

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" { // the test binary standing in for the command
		main()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// TestRun_ServesHealthAndStopsOnCancel starts the broker on a free port, reads its address
// from the startup log, checks /health and the 401 of a request without the token, then cancels and waits for exit.
func TestRun_ServesHealthAndStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs, logw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-token", "s3cret"}, logw)
		logw.Close()
	}()

	lines := bufio.NewScanner(logs)
	urlRE := regexp.MustCompile(`url=(http://\S+)`)
	var base string
	for base == "" && lines.Scan() {
		if m := urlRE.FindStringSubmatch(lines.Text()); m != nil {
			base = m[1]
		}
	}
	if base == "" {
		t.Fatalf("no listening line in the log: %v", lines.Err())
	}
	go func() { // keep draining so logging never blocks
		for lines.Scan() {
		}
	}()

	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Get(base + "/health")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"status":"healthy"`) {
		t.Fatalf("GET /health = %d %s", resp.StatusCode, body)
	}
	resp, err = hc.Get(base + "/api/v1/dlq")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET /api/v1/dlq without a token = %d, want 401", resp.StatusCode)
	}

	cancel()
	if err := testutil.Recv(t, done, "run to return after cancel"); err != nil {
		t.Fatalf("run returned %v", err)
	}
}

func TestRun_RefusesBadFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"-nope"}, {"-log-level", "loud"}, {"extra"}} {
		if err := run(context.Background(), args, io.Discard); err == nil {
			t.Errorf("run(%q) = nil, want an error", args)
		}
	}
}

// TestRun_RefusesAnUnknownCompat names the value it does not know.
func TestRun_RefusesAnUnknownCompat(t *testing.T) {
	err := run(context.Background(), []string{"-addr", "127.0.0.1:0", "-compat", "1.0"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `"1.0"`) {
		t.Fatalf("run -compat 1.0 = %v, want an error naming 1.0", err)
	}
}

// -h says what the broker is and that stopping it loses everything it holds.
func TestRun_HelpSaysStoppingDiscardsEverything(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	if err := run(context.Background(), []string{"-h"}, &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("run -h = %v, want flag.ErrHelp", err)
	}
	for _, want := range []string{"keeps everything in memory", "discards every message,\ncursor and dead letter", "-max-conns"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("-h lacks %q:\n%s", want, out.String())
		}
	}
}
