package jsonwrite

import (
	"encoding/json"
	"testing"
)

// AppendString must write exactly what json.Marshal writes for the same string.
func FuzzAppendString(f *testing.F) {
	for _, seed := range []string{"", "plain", "q\"b\\s/", "\n\r\t\b\f\x00\x1f", "é€😀", "\u2028\u2029", "\xff\xfe bad", "<&>"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("AppendString(%q) = %s, want x%s", s, got, want)
		}
	})
}
