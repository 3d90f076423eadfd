package names

import (
	"strings"
	"testing"
	"unicode/utf8"
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

// Problem agrees with the rule read rune by rune.
func FuzzProblem(f *testing.F) {
	for _, seed := range []string{"", ".", "..", "...", "orders", "a\x00", "\x7f", "é", "\xff", strings.Repeat("é", 128)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		control := strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
		want := len(s) >= 1 && len(s) <= 255 && utf8.ValidString(s) && !control && s != "." && s != ".."
		if got := Problem(s) == ""; got != want {
			t.Fatalf("Problem(%q) = %q, want valid=%v", s, Problem(s), want)
		}
	})
}

func TestIsUUIDAcceptsOnlyTheCanonicalForm(t *testing.T) {
	for s, want := range map[string]bool{
		"0195a3b2-7c4d-7e8f-9a0b-1c2d3e4f5a6b":   true,
		"0195A3B2-7C4D-7E8F-9A0B-1C2D3E4F5A6B":   true,
		"0195a3b27c4d7e8f9a0b1c2d3e4f5a6b":       false,
		"{0195a3b2-7c4d-7e8f-9a0b-1c2d3e4f5a6b}": false,
		"0195a3b2-7c4d-7e8f-9a0b-1c2d3e4f5a6g":   false,
		"0195a3b2_7c4d-7e8f-9a0b-1c2d3e4f5a6b":   false,
		"":                                       false,
	} {
		if IsUUID(s) != want {
			t.Errorf("IsUUID(%q) = %v, want %v", s, !want, want)
		}
	}
}
