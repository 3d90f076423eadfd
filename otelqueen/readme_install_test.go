package otelqueen_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	queen "github.com/queenmq/queen-go"
)

// helloProgram is a user's tiny program: it uses the SDK, otelqueen and the reference broker.
const helloProgram = `package main

import (
	"context"
	"fmt"
	"log"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/otelqueen"
	"github.com/queenmq/queen-go/queentest"
)

func main() {
	srv, err := queentest.Start()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := queen.New(srv.URL(), queen.WithMiddleware(otelqueen.Middleware()), queen.WithHooks(otelqueen.Hooks()))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ctx := context.Background()
	if _, err := client.Queue("hello").Push(ctx, queen.PushItem{Data: "hello", TraceID: otelqueen.TraceID(ctx)}); err != nil {
		log.Fatal(err)
	}
	err = client.Queue("hello").Limit(1).Each().Consume(ctx, func(_ context.Context, m *queen.Message) error {
		fmt.Println("handled", string(m.Data))
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
}
`

// readmeRecipe is the shell block the README's "Installing" section marks with name.
func readmeRecipe(t *testing.T, readme, name string) string {
	t.Helper()
	re := regexp.MustCompile("(?s)<!-- installing: " + regexp.QuoteMeta(name) + " -->\n```sh\n(.*?)```")
	m := re.FindStringSubmatch(readme)
	require.NotNil(t, m, "the README's Installing section has no %q recipe", name)
	return m[1]
}

// run runs a command in dir with env, failing the test with its output when it fails.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), name, args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %s:\n%s", name, strings.Join(args, " "), out)
	return string(out)
}

// A fresh module outside the repository, following the README's "Installing" and nothing else,
// builds and runs a program that uses the SDK and otelqueen from the checkout: with a
// workspace, and with replace lines that record the version the checkout declares. Nothing of
// the modules is published, so this is how a user depends on them today.
func TestTheReadmesInstallingRecipesBuildAFreshModule(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go command runs the recipes")
	checkout, err := filepath.Abs("..")
	require.NoError(t, err)
	readme, err := os.ReadFile(filepath.Join(checkout, "README.md"))
	require.NoError(t, err)

	for _, recipe := range []string{"workspace", "replace"} {
		t.Run(recipe, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			require.False(t, strings.HasPrefix(dir, checkout+string(filepath.Separator)), "the module is outside the repository")
			env := append(os.Environ(), "QUEEN_GO="+checkout, "GOWORK=", "GOFLAGS="+flagsWithoutMod())
			run(t, dir, env, goTool, "mod", "init", "example.com/hello")
			require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(helloProgram), 0o644))

			run(t, dir, env, "sh", "-ec", readmeRecipe(t, string(readme), recipe))
			assert.Equal(t, "handled \"hello\"\n", run(t, dir, env, goTool, "run", "."))

			if recipe == "replace" {
				run(t, dir, env, goTool, "mod", "tidy")
				mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
				require.NoError(t, err)
				for _, path := range []string{"github.com/queenmq/queen-go", "github.com/queenmq/queen-go/otelqueen"} {
					assert.Contains(t, string(mod), path+" v"+queen.Version+"\n", "the version the checkout declares")
				}
				assert.NotContains(t, string(mod), "v0.0.0-00010101000000-000000000000")
			}
		})
	}
}

// flagsWithoutMod is GOFLAGS without -mod, which a workspace refuses, as the README says.
func flagsWithoutMod() string {
	var keep []string
	for _, f := range strings.Fields(os.Getenv("GOFLAGS")) {
		if !strings.HasPrefix(f, "-mod=") {
			keep = append(keep, f)
		}
	}
	return strings.Join(keep, " ")
}
