package names

import (
	"strings"
	"testing"
)

func TestProblem(t *testing.T) {
	t.Parallel()
	valid := []string{"orders", "a", strings.Repeat("x", 255), "é-ü", "a/b", "...", ".a", "a b", "__QUEUE_MODE__"}
	for _, n := range valid {
		if p := Problem(n); p != "" {
			t.Errorf("Problem(%q) = %q, want valid", n, p)
		}
	}
	invalid := map[string]string{
		"":                       "is empty",
		strings.Repeat("x", 256): "longer than 255",
		".":                      `"." or ".."`,
		"..":                     `"." or ".."`,
		"a\xffb":                 "UTF-8",
		"a\x00b":                 "control",
		"tab\there":              "control",
		"del\x7f":                "control",
		"nl\n":                   "control",
	}
	for n, want := range invalid {
		if p := Problem(n); !strings.Contains(p, want) {
			t.Errorf("Problem(%.20q) = %q, want it to mention %q", n, p, want)
		}
	}
}
