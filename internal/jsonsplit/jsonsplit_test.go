package jsonsplit

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

// lastValues returns each key's last value, as encoding/json counts a repeated key.
func lastValues(fields []Field) map[string]json.RawMessage {
	m := make(map[string]json.RawMessage, len(fields))
	for _, f := range fields {
		m[f.Key] = f.Val
	}
	return m
}

func compact(raw []byte) string {
	var b bytes.Buffer
	_ = json.Compact(&b, raw)
	return b.String()
}

// SplitObject must agree with encoding/json on every valid object: same members, same values,
// a repeated key counting its last value.
func FuzzSplitObject(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"a":1}`, ` { "a" : "x\"}" , "b":[1,{"c":"]"}], "a":null } `,
		`{"items":[{"queue":"q","payload":{"s":"\u00e9\\"}}]}`, `{"k\u0041":true,"":false}`,
		"{\"bad\":\"\xff\"}",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		data := bytes.TrimSpace([]byte(s))
		if !json.Valid(data) || len(data) == 0 || data[0] != '{' {
			return
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("encoding/json refused a valid object: %v", err)
		}
		got := lastValues(SplitObject(data))
		if len(got) != len(want) {
			t.Fatalf("%s: split %d members, want %d", data, len(got), len(want))
		}
		for k, v := range want {
			g, ok := got[k]
			if !ok {
				t.Fatalf("%s: member %q missing", data, k)
			}
			if compact(g) != compact(v) {
				t.Fatalf("%s: member %q = %s, want %s", data, k, g, v)
			}
			if len(g) > 0 && g[0] == '"' {
				var ws string
				_ = json.Unmarshal(v, &ws)
				if Unquote(g) != ws {
					t.Fatalf("Unquote(%s) = %q, want %q", g, Unquote(g), ws)
				}
				if Verbatim(g) != (string(g[1:len(g)-1]) == ws) {
					t.Fatalf("Verbatim(%s) = %v, but it decodes to %q", g, Verbatim(g), ws)
				}
			}
		}
	})
}

// SplitArray must find the elements encoding/json finds, and Walk must find them in place
// inside an enclosing document.
func FuzzSplitArray(f *testing.F) {
	for _, seed := range []string{`[]`, ` [ 1 , "]" , {"a":[2,3]}, null, true, -1.5e3 ] `, `[[],[{}],""]`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		data := bytes.TrimSpace([]byte(s))
		if !json.Valid(data) || len(data) == 0 || data[0] != '[' {
			return
		}
		var want []json.RawMessage
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("encoding/json refused a valid array: %v", err)
		}
		got := SplitArray(data)
		doc := append([]byte(`{"x": `), data...)
		doc = append(doc, '}')
		it := Walk(doc, 0)
		_, inner, ok := it.Member()
		if !ok {
			t.Fatalf("%s: no member found", doc)
		}
		nested := Walk(doc, inner.Start)
		inPlace := Walk(doc, inner.Start)
		if len(got) != len(want) {
			t.Fatalf("%s: split %d elements, want %d", data, len(got), len(want))
		}
		for i := range want {
			if compact(got[i]) != compact(want[i]) {
				t.Fatalf("%s: element %d = %s, want %s", data, i, got[i], want[i])
			}
			e, ok := nested.Element()
			if !ok || compact(e.Of(doc)) != compact(want[i]) {
				t.Fatalf("%s: walked element %d = %s, want %s", doc, i, e.Of(doc), want[i])
			}
			at, ok := inPlace.Next()
			if !ok || at != e.Start {
				t.Fatalf("%s: element %d starts at %d (ok %v), want %d", doc, i, at, ok, e.Start)
			}
			if end := endInPlace(doc, at); end != e.End {
				t.Fatalf("%s: element %d read in place ends at %d, want %d", doc, i, end, e.End)
			}
			inPlace.SkipTo(e.End)
		}
		if _, ok := nested.Element(); ok {
			t.Fatalf("%s: walked past the last element", doc)
		}
		if _, ok := inPlace.Next(); ok {
			t.Fatalf("%s: Next went past the last element", doc)
		}
		if inPlace.End() != len(doc)-1 {
			t.Fatalf("%s: array ends at %d, want %d", doc, inPlace.End(), len(doc)-1)
		}
	})
}

func TestIterMemberSpans(t *testing.T) {
	t.Parallel()
	raw := []byte(` {"a" : "x", "b\"c":{"d":[1]} }`)
	it := Walk(raw, 1)
	var keys, vals []string
	for key, val, ok := it.Member(); ok; key, val, ok = it.Member() {
		keys = append(keys, string(key.Of(raw)))
		vals = append(vals, string(val.Of(raw)))
	}
	if want := []string{`"a"`, `"b\"c"`}; !slices.Equal(keys, want) {
		t.Fatalf("keys %q, want %q", keys, want)
	}
	if want := []string{`"x"`, `{"d":[1]}`}; !slices.Equal(vals, want) {
		t.Fatalf("values %q, want %q", vals, want)
	}
}

func TestSpanOfCannotOverwriteWhatFollows(t *testing.T) {
	t.Parallel()
	raw := []byte(`[1,2]`)
	v := Span{1, 2}.Of(raw)
	_ = append(v, '9')
	if string(raw) != `[1,2]` {
		t.Fatalf("append through a span changed the input to %s", raw)
	}
}

func TestIterDoesNotAllocate(t *testing.T) {
	raw := []byte(`{"a":"x","b":[1,2,{"c":null}],"d":true}`)
	allocs := testing.AllocsPerRun(100, func() {
		it := Walk(raw, 0)
		for _, val, ok := it.Member(); ok; _, val, ok = it.Member() {
			if raw[val.Start] == '[' {
				arr := Walk(raw, val.Start)
				for _, ok := arr.Element(); ok; _, ok = arr.Element() {
				}
			}
		}
	})
	if allocs != 0 {
		t.Fatalf("walking allocated %v times", allocs)
	}
}

// endInPlace reads the value at raw[at] member by member (or element by element) and returns
// where it ends, as a caller of Next does.
func endInPlace(raw []byte, at int) int {
	switch raw[at] {
	case '{':
		it := Walk(raw, at)
		for _, val, ok := it.Member(); ok; _, val, ok = it.Member() {
			_ = endInPlace(raw, val.Start)
		}
		return it.End()
	case '[':
		it := Walk(raw, at)
		for e, ok := it.Next(); ok; e, ok = it.Next() {
			it.SkipTo(endInPlace(raw, e))
		}
		return it.End()
	}
	return SkipValue(raw, at)
}
