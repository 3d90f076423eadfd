package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/testutil"
)

// asMainEnv makes the test binary run main instead of the tests, so a test can signal it.
const asMainEnv = "QUEEN_REF_TEST_AS_MAIN"

// listeningURL reads the broker's URL from its startup log, then keeps draining the log.
func listeningURL(t *testing.T, logs io.Reader) string {
	t.Helper()
	lines := bufio.NewScanner(logs)
	urlRE := regexp.MustCompile(`url=(http://\S+)`)
	for lines.Scan() {
		if m := urlRE.FindStringSubmatch(lines.Text()); m != nil {
			go func() {
				for lines.Scan() {
				}
			}()
			return m[1]
		}
	}
	t.Fatalf("no listening line in the log: %v", lines.Err())
	return ""
}

// SIGTERM with a client stuck sending its body still exits 0, once the grace period
// has cut that client off.
func TestSIGTERM_ExitsZeroWithASlowClient(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), asMainEnv+"=1")
	logs, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	base := listeningURL(t, logs)

	slow, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	// Expect: 100-continue makes the broker say when its handler starts reading the body.
	if _, err := io.WriteString(slow, "POST /api/v1/push HTTP/1.1\r\nHost: broker\r\nExpect: 100-continue\r\n"+
		"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = slow.SetReadDeadline(time.Now().Add(10 * time.Second))
	status, err := bufio.NewReader(slow).ReadString('\n')
	if err != nil || !strings.Contains(status, "100") {
		t.Fatalf("no 100 Continue: %q %v", status, err)
	}
	if _, err := io.WriteString(slow, `{"items":[`); err != nil {
		t.Fatal(err)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = testutil.Recv(t, exited, "the exit after SIGTERM")
	exited <- err // for the cleanup
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		t.Fatalf("exit code %d, want 0", exit.ExitCode())
	}
	if err != nil {
		t.Fatal(err)
	}
}

// Without -token, the token comes from QUEEN_TOKEN. Not parallel: it sets the environment.
func TestRun_ReadsTokenFromEnvironment(t *testing.T) {
	t.Setenv("QUEEN_TOKEN", "from-env")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs, logw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0"}, logw)
		logw.Close()
	}()
	base := listeningURL(t, logs)

	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	get := func(token string) *http.Response {
		req, _ := http.NewRequest("GET", base+"/api/v1/dlq", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := get(""); resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != "Bearer" {
		t.Fatalf("without a token: %d, WWW-Authenticate %q; want 401 Bearer", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	if resp := get("from-env"); resp.StatusCode != http.StatusOK {
		t.Fatalf("with QUEEN_TOKEN's token: %d, want 200", resp.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run returned %v", err)
	}
}

func TestRun_RefusesNoConnections(t *testing.T) {
	t.Parallel()
	if err := run(context.Background(), []string{"-max-conns", "0"}, io.Discard); err == nil {
		t.Fatal("run accepted -max-conns 0")
	}
}
