package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/queenmq/queen-go/internal/testutil"
)

// officialFile is the shape of the official queenctl's config file, as it writes it.
type officialFile struct {
	CurrentContext string            `yaml:"current-context,omitempty"`
	Contexts       []officialContext `yaml:"contexts,omitempty"`
}

type officialContext struct {
	Name     string `yaml:"name"`
	Server   string `yaml:"server"`
	TokenRef string `yaml:"token-ref,omitempty"`
	Insecure bool   `yaml:"insecure,omitempty"`
}

// The file the official queenctl writes reads back the same, whatever its values hold: YAML's
// own quoting of them is undone.
func TestContextFileAsTheOfficialCLIWritesIt(t *testing.T) {
	t.Parallel()
	want := officialFile{CurrentContext: "prod: eu", Contexts: []officialContext{
		{Name: "prod: eu", Server: "https://queen.example:6632", TokenRef: "literal:a#b c: d 'e' \"f\"", Insecure: true},
		{Name: "true", Server: "http://127.0.0.1:6632"},
		{Name: "123", Server: " spaced ", TokenRef: "literal:\\back\\slash\ttab"},
		{Name: "- dash", Server: "#not-a-comment", TokenRef: "literal:ünïcode"},
	}}
	raw, err := yaml.Marshal(want)
	require.NoError(t, err)
	f, err := parseContextFile("config.yaml", string(raw))
	require.NoError(t, err, "%s", raw)
	assert.Equal(t, want.CurrentContext, f.current)
	require.Len(t, f.contexts, len(want.Contexts), "%s", raw)
	for i, c := range want.Contexts {
		assert.Equal(t, c.Name, f.contexts[i].Name, "%s", raw)
		assert.Equal(t, c.Server, f.contexts[i].Server, "%s", raw)
		assert.Equal(t, c.TokenRef, f.contexts[i].TokenRef, "%s", raw)
	}
}

// The file queenctl documents, and the other block layouts YAML allows for it, read as meant;
// what queenctl does not use is skipped with what is nested under it.
func TestContextFileLayouts(t *testing.T) {
	t.Parallel()
	for name, text := range map[string]string{
		"documented": `# brokers
current-context: prod
contexts:
  - name: prod   # the real one
    server: https://queen.internal:6632
    token: s3cret
  - name: local
    server: "http://127.0.0.1:6632"
    token-ref: 'literal:it''s'
`,
		"dashes at the margin, CRLF, a document start, unknown keys": "---\r\npreferences:\r\n  colors: true\r\n  list:\r\n  - a\r\ncurrent-context: prod\r\n" +
			"contexts:\r\n- name: prod\r\n  server: https://queen.internal:6632\r\n  token: s3cret\r\n  extra:\r\n    nested: [1, 2]\r\n" +
			"-\r\n  name: local\r\n  server: http://127.0.0.1:6632\r\n  token-ref: \"literal:it's\"\r\nlater: ~\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f, err := parseContextFile("config.yaml", text)
			require.NoError(t, err)
			assert.Equal(t, "prod", f.current)
			assert.Equal(t, []brokerContext{
				{Name: "prod", Server: "https://queen.internal:6632", Token: "s3cret", line: f.contexts[0].line},
				{Name: "local", Server: "http://127.0.0.1:6632", TokenRef: "literal:it's", line: f.contexts[1].line},
			}, f.contexts)
		})
	}
}

// A file that is not the shape queenctl reads is refused with the line that is wrong.
func TestContextFileErrorsSayWhere(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]string{
		"contexts:\n\t- name: a\n":                        "config.yaml:2: a tab in the indentation",
		"contexts: {prod: x}\n":                           "config.yaml:1: contexts: expected a list",
		"contexts:\n  - name: a\n    server: [x, y]\n":    "config.yaml:3: server:",
		"contexts:\n  - name: a\n  - name: a\n":           `config.yaml:3: context "a" is named twice (first on line 2)`,
		"contexts:\n  - server: http://x\n":               "config.yaml:2: a context without a name",
		"contexts:\n  - name: \"a\\qb\"\n":                "unknown escape \\q",
		"contexts:\n  - name: \"open\n":                   "unterminated quoted value",
		"  current-context: a\n":                          "config.yaml:1: expected a top-level key",
		"current-context a\n":                             "config.yaml:1: expected key: value",
		"contexts:\n  - name: a\n server: http://x\n":     "config.yaml:3: unexpected indentation",
		"contexts:\n  - name: a\n   server: http://x\n":   "config.yaml:3: expected a key of the context at column 5",
		"current-context: &anchor a\n":                    "this YAML form is not read here",
		"contexts:\n  - name: a\n    token: |\n      x\n": "token: |: this YAML form is not read here",
	} {
		_, err := parseContextFile("config.yaml", text)
		if assert.Error(t, err, text) {
			assert.Contains(t, err.Error(), want, text)
		}
	}
}

// contextSetup: broker a needs token "s3cret-a"; broker b needs none and is spied on (at urlB); a
// config file names both, b current.
type contextSetup struct {
	a, b broker
	spyB *testutil.Spy
	urlB string
	env  map[string]string
}

func twoBrokers(t *testing.T) contextSetup {
	t.Helper()
	s := contextSetup{a: newBroker(t, "s3cret-a"), b: newBroker(t, "")}
	s.spyB, s.urlB = testutil.NewSpy(t, s.b.srv.Handler())
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "token-a"), []byte("s3cret-a\n"), 0o600))
	config := "current-context: b\ncontexts:\n" +
		"  - name: a\n    server: " + s.a.srv.URL() + "\n    token: s3cret-a\n" +
		"  - name: b\n    server: " + s.urlB + "\n" +
		"  - name: a-file\n    server: " + s.a.srv.URL() + "\n    token-ref: file://" + filepath.Join(dir, "token-a") + "\n" +
		"  - name: a-keychain\n    server: " + s.a.srv.URL() + "\n    token-ref: keychain://a\n"
	path := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(config), 0o600))
	s.env = map[string]string{"QUEEN_CONFIG": path}
	return s
}

func hasQueue(t *testing.T, b broker, queue string) bool {
	t.Helper()
	_, err := b.adminClient().QueueInfo(context.Background(), queue)
	return err == nil
}

func with(env map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range env {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// The context is --context, else QUEEN_CONTEXT, else the file's current-context; it gives the
// server and the token, and --server, --token, QUEEN_URL and QUEEN_TOKEN still win.
func TestContextsChooseTheBroker(t *testing.T) {
	t.Parallel()
	s := twoBrokers(t)
	a, b, env := s.a, s.b, s.env

	r := queenctl(t, env, "queue", "configure", "by-current")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.True(t, hasQueue(t, b, "by-current"), "current-context b")

	r = queenctl(t, env, "--context", "a", "queue", "configure", "by-flag")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.True(t, hasQueue(t, a, "by-flag"), "--context a, with a's token")

	r = queenctl(t, with(env, "QUEEN_CONTEXT", "a-file"), "queue", "configure", "by-env")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.True(t, hasQueue(t, a, "by-env"), "QUEEN_CONTEXT, the token read from its file")

	r = queenctl(t, with(env, "QUEEN_CONTEXT", "a"), "--context", "b", "queue", "configure", "flag-wins")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.True(t, hasQueue(t, b, "flag-wins"))

	r = queenctl(t, env, "--context", "a", "--server", b.srv.URL(), "queue", "configure", "server-wins")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.True(t, hasQueue(t, b, "server-wins"))

	r = queenctl(t, with(env, "QUEEN_URL", b.srv.URL()), "--context", "a", "queue", "configure", "url-wins")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.True(t, hasQueue(t, b, "url-wins"))

	r = queenctl(t, env, "--context", "a", "--token", "wrong", "queue", "configure", "token-wins")
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, "401")
	r = queenctl(t, with(env, "QUEEN_TOKEN", "wrong"), "--context", "a", "queue", "configure", "token-wins")
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, "401")
	assert.NotContains(t, r.stderr, "s3cret-a")
}

// A context's token goes only to the context's server: with the server named otherwise, no
// token is sent at all.
func TestAContextsTokenGoesOnlyToItsServer(t *testing.T) {
	t.Parallel()
	s := twoBrokers(t)
	r := queenctl(t, s.env, "--context", "a", "--server", s.urlB, "queue", "configure", "elsewhere")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.NotEmpty(t, s.spyB.All())
	for _, req := range s.spyB.All() {
		assert.Empty(t, req.Header.Get("Authorization"), "a's token was sent to %s", req.Path)
	}
	s.spyB.Reset()
	r = queenctl(t, s.env, "--context", "b", "--token", "mine", "ping")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, "Bearer mine", s.spyB.Only(t).Header.Get("Authorization"), "a token given is sent")
}

// A context that cannot be used is bad usage (exit 2), said with what would work.
func TestUnusableContextsAreBadUsage(t *testing.T) {
	t.Parallel()
	env := twoBrokers(t).env
	r := queenctl(t, env, "--context", "nope", "ping")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, `--context "nope"`)
	assert.Contains(t, r.stderr, "has no such context (it has: a, b, a-file, a-keychain)")

	r = queenctl(t, env, "--context", "a-keychain", "ping")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "OS keychain")

	r = queenctl(t, map[string]string{"QUEEN_CONFIG": filepath.Join(t.TempDir(), "missing.yaml")}, "--context", "a", "ping")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "there is no config file")

	bad := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("contexts: {a: b}\n"), 0o600))
	r = queenctl(t, map[string]string{"QUEEN_CONFIG": bad}, "ping")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, bad+":1:")
}

// Without QUEEN_CONFIG the file is ~/.queen/config.yaml; without one there, nothing changes.
func TestTheConfigFileLivesInTheHomeDirectory(t *testing.T) {
	t.Parallel()
	b := newBroker(t, "")
	home := t.TempDir()
	r := queenctl(t, map[string]string{"HOME": home, "QUEEN_URL": b.srv.URL()}, "ping")
	require.Equal(t, exitOK, r.code, "no file: the environment alone, as before: %s", r.stderr)

	require.NoError(t, os.MkdirAll(filepath.Join(home, ".queen"), 0o700))
	config := "current-context: here\ncontexts:\n  - name: here\n    server: " + b.srv.URL() + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(home, ".queen", "config.yaml"), []byte(config), 0o600))
	r = queenctl(t, map[string]string{"HOME": home}, "ping")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, b.srv.URL())

	r = queenctl(t, map[string]string{"HOME": home}, "__complete", "--context", "")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, "here\n:4\n", r.stdout, "--context completes with the file's contexts")
}
