// Package exampletest runs an example the way the test suite checks it.
package exampletest

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/testmode"
)

// Output runs an example against an in-process broker (QUEEN_URL cleared), fails the test on
// its error or on a missing line of want, and returns what the example printed.
func Output(t *testing.T, run func(context.Context, io.Writer) error, want ...string) string {
	t.Helper()
	t.Setenv("QUEEN_URL", "")
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), &out))
	got := out.String()
	for _, w := range want {
		require.Contains(t, got, w)
	}
	return got
}

// ForEachMode runs body once per broker generation, the in-process broker answering as 2.0
// and then as 0.15 (QUEEN_COMPAT); the subtests run one after the other, as they set the
// environment.
func ForEachMode(t *testing.T, body func(t *testing.T, m testmode.Mode)) {
	t.Helper()
	for _, m := range testmode.Modes {
		t.Run(m.Name, func(t *testing.T) {
			t.Setenv("QUEEN_COMPAT", m.Name)
			body(t, m)
		})
	}
}

// PerMode is want on 2.0 and want015 on 0.15.
func PerMode(m testmode.Mode, want, want015 string) string {
	if m.V015 {
		return want015
	}
	return want
}

// SameInBothModes runs an example once per broker generation, each run checked as Output
// checks it, and fails the test unless both printed the same: an example shows what a user
// sees on either broker, so nothing it prints may depend on the broker's generation. Ids,
// times and ports, which change at every run, are masked, and lines are compared in sorted
// order, as handlers of different partitions print in any order. It returns the 2.0 output.
func SameInBothModes(t *testing.T, run func(context.Context, io.Writer) error, want ...string) string {
	t.Helper()
	got := map[string]string{}
	ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		got[m.Name] = Output(t, run, want...)
	})
	if len(got) != len(testmode.Modes) {
		return "" // a mode failed and said why
	}
	first := testmode.Modes[0].Name
	for _, m := range testmode.Modes[1:] {
		require.Equal(t, normalized(got[first]), normalized(got[m.Name]),
			"the example prints the same on %s as on %s", m.Name, first)
	}
	return got[first]
}

// masks replace what changes at every run with a placeholder.
var masks = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), "<id>"},
	{regexp.MustCompile(`time=\S+`), "time=<time>"},
	{regexp.MustCompile(`127\.0\.0\.1:\d+`), "127.0.0.1:<port>"},
}

// normalized is out with its run-specific parts masked, its lines sorted.
func normalized(out string) []string {
	for _, m := range masks {
		out = m.re.ReplaceAllString(out, m.with)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	slices.Sort(lines)
	return lines
}
