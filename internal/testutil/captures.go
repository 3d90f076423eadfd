package testutil

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// Capture is one exchange with a real broker, kept verbatim in a module's testdata: what was
// sent and what the broker answered.
type Capture struct {
	Title    string `json:"title"` // the capture's id, a space, then what it shows
	Kind     string `json:"kind"`  // pop, push, ack, extend or tx
	Method   string `json:"method"`
	URL      string `json:"url"`
	Status   int    `json:"status"`
	Request  string `json:"request"`
	Response string `json:"response"`
}

// Name is what the capture shows: its title without the id, for a subtest or a lookup.
func (c Capture) Name() string {
	_, name, _ := strings.Cut(c.Title, " ")
	return name
}

// Captures reads the captures of the given kind from the JSON list in file; it fails the test
// when there are none.
func Captures(t testing.TB, file, kind string) []Capture {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var all []Capture
	if err := json.Unmarshal(raw, &all); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var out []Capture
	for _, c := range all {
		if c.Kind == kind {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s holds no %s capture", file, kind)
	}
	return out
}

// CaptureNamed is the one capture of the given kind whose Name is name; it fails the test when
// there is none.
func CaptureNamed(t testing.TB, file, kind, name string) Capture {
	t.Helper()
	for _, c := range Captures(t, file, kind) {
		if c.Name() == name {
			return c
		}
	}
	t.Fatalf("%s holds no %s capture named %q", file, kind, name)
	panic("unreachable")
}
