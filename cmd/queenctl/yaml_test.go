package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// The YAML writer's output reads back, with a YAML library, as the JSON it was written from,
// whatever the strings hold: words YAML would read as booleans, nulls, numbers or times,
// keys and comments, escapes and control characters, and every shape of nesting.
func TestYAMLReadsBackAsTheJSON(t *testing.T) {
	t.Parallel()
	strs := []string{"", "plain", "Default", "true", "False", "yes", "NO", "on", "y", "null", "~", "1", "-1", "1.5", "1e3",
		"0x1F", "0o17", ".inf", ".NaN", "2026-11-29T10:00:00Z", "2026-11-29", "12:30", "a: b", "a:b", "# c", "a #b", "- d",
		"[x]", "{y}", "&anchor", "*alias", "!tag", "|", ">", "%d", "@x", "`x`", "'q'", `"dq"`, `back\slash`, " lead", "trail ",
		"line\nbreak", "tab\there", "cr\r", "\x1b[31mred", "\x00nul", "del\x7f", "c1\u0085\u009b", "\u202eevil", "\u2028ls",
		"bom\ufeff", "é ü 漢字 😀", "dlq:0193", "a-b_c", "_x", "-x", "x-"}
	doc := map[string]any{"strings": strs, "keys": map[string]any{}, "numbers": []json.Number{"0", "-3", "1.25", "1e21",
		"1E-7", "2e+5", "12345678901234567890"}, "bools": []bool{true, false}, "null": nil,
		"empty":  map[string]any{"list": []any{}, "map": map[string]any{}},
		"nested": []any{[]any{1, []any{2, 3}}, map[string]any{"a": []any{map[string]any{"b": 1}}}, []any{}, map[string]any{}}}
	keys := doc["keys"].(map[string]any)
	for i, s := range strs {
		keys[s] = i
	}
	raw, err := json.Marshal(doc)
	require.NoError(t, err)
	var want any
	require.NoError(t, json.Unmarshal(raw, &want))

	out, err := toYAML(json.RawMessage(raw))
	require.NoError(t, err)
	var got any
	require.NoError(t, yaml.Unmarshal([]byte(out), &got), out)
	assert.Equal(t, want, normalized(got), out)
	assertPrintable(t, out, "the YAML")
}

// The writer's layout: block style, strings plain only where nothing else could be read.
func TestYAMLLayout(t *testing.T) {
	t.Parallel()
	out, err := toYAML(struct {
		Queue  string           `json:"queue"`
		Groups []map[string]any `json:"groups"`
		Pairs  [][]int          `json:"pairs"`
		None   []int            `json:"none"`
		At     string           `json:"at"`
		Lag    float64          `json:"lag"`
	}{"orders", []map[string]any{{"group": "billing", "lag": 2}}, [][]int{{1, 2}}, []int{}, "2026-11-29T10:00:00Z", 1e21})
	require.NoError(t, err)
	assert.Equal(t, `queue: orders
groups:
  - group: billing
    lag: 2
pairs:
  - - 1
    - 2
none: []
at: "2026-11-29T10:00:00Z"
lag: 1.0e+21
`, out)
	for _, tc := range []struct {
		v    any
		want string
	}{{"x", "x\n"}, {3, "3\n"}, {nil, "null\n"}, {[]int{}, "[]\n"}, {map[string]int{}, "{}\n"}} {
		out, err := toYAML(tc.v)
		require.NoError(t, err)
		assert.Equal(t, tc.want, out, tc.v)
	}
}
