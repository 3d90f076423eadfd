package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// YAML output. What queenctl prints is JSON data (the same values -o json prints, in the same
// key order), so the writer renders JSON as block-style YAML: maps and lists nested by
// indentation, every string that could read as anything else double-quoted with escapes for
// what a terminal would interpret, numbers and booleans as JSON writes them (which YAML 1.1
// and 1.2 read alike), and [] and {} for empty lists and maps.

// yamlNode is one JSON value: a scalar already written as YAML, a map (keys in order) or a list.
type yamlNode struct {
	scalar string
	keys   []string
	values []*yamlNode // a map's values, or a list's items
	isMap  bool
	isList bool
}

// writeYAML writes v, as encoding/json sees it, as one YAML document.
func writeYAML(w io.Writer, v any) error {
	doc, err := toYAML(v)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, doc)
	return err
}

func toYAML(v any) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	n, err := readYAMLNode(dec)
	if err != nil {
		return "", fmt.Errorf("writing YAML: %w", err)
	}
	var b strings.Builder
	if n.isMap && len(n.keys) > 0 || n.isList && len(n.values) > 0 {
		writeBlock(&b, n, 0)
	} else {
		b.WriteString(inline(n) + "\n")
	}
	return b.String(), nil
}

func readYAMLNode(dec *json.Decoder) (*yamlNode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &yamlNode{isMap: true}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := k.(string)
				if !ok {
					return nil, fmt.Errorf("a map key that is not a string: %v", k)
				}
				v, err := readYAMLNode(dec)
				if err != nil {
					return nil, err
				}
				n.keys, n.values = append(n.keys, key), append(n.values, v)
			}
			_, err := dec.Token() // '}'
			return n, err
		case '[':
			n := &yamlNode{isList: true}
			for dec.More() {
				v, err := readYAMLNode(dec)
				if err != nil {
					return nil, err
				}
				n.values = append(n.values, v)
			}
			_, err := dec.Token() // ']'
			return n, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case string:
		return &yamlNode{scalar: yamlString(t)}, nil
	case json.Number:
		return &yamlNode{scalar: yamlNumber(string(t))}, nil
	case bool:
		return &yamlNode{scalar: fmt.Sprint(t)}, nil
	case nil:
		return &yamlNode{scalar: "null"}, nil
	}
	return nil, errors.New("unexpected JSON token")
}

// inline is a node written on the line of its key or dash: a scalar, [] or {}.
func inline(n *yamlNode) string {
	switch {
	case n.isMap:
		return "{}"
	case n.isList:
		return "[]"
	}
	return n.scalar
}

func nested(n *yamlNode) bool { return (n.isMap || n.isList) && len(n.values) > 0 }

// writeBlock writes a non-empty map or list, each of its lines indented by indent spaces.
func writeBlock(b *strings.Builder, n *yamlNode, indent int) {
	pad := strings.Repeat(" ", indent)
	if n.isMap {
		for i, k := range n.keys {
			v := n.values[i]
			if !nested(v) {
				fmt.Fprintf(b, "%s%s: %s\n", pad, yamlString(k), inline(v))
				continue
			}
			fmt.Fprintf(b, "%s%s:\n", pad, yamlString(k))
			writeBlock(b, v, indent+2)
		}
		return
	}
	for _, v := range n.values {
		if !nested(v) {
			fmt.Fprintf(b, "%s- %s\n", pad, inline(v))
			continue
		}
		// The item's block, with its first line's indentation replaced by the dash.
		var item strings.Builder
		writeBlock(&item, v, indent+2)
		b.WriteString(pad + "- " + item.String()[indent+2:])
	}
}

// yamlString writes s plain when it can only read as that string, else double-quoted.
func yamlString(s string) string {
	if plainSafe(s) {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		case r < 0x100 && !yamlPrintable(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x10000 && !yamlPrintable(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		case !yamlPrintable(r):
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// yamlPrintable reports a character written as itself inside double quotes: printable, and not
// one that would change how a terminal shows the text around it.
func yamlPrintable(r rune) bool {
	return r != utf8.RuneError && r != '\ufeff' && unicode.IsPrint(r) && !unsafeRune(r)
}

// plainWords read as booleans or null in YAML 1.1 or 1.2, so they are quoted.
var plainWords = map[string]bool{"y": true, "n": true, "yes": true, "no": true, "on": true, "off": true,
	"true": true, "false": true, "null": true}

// plainSafe reports a string that YAML reads back as that same string when written plain: a
// letter or underscore, then letters, digits, underscores and hyphens (nothing that could read
// as a number, a time, a key, a comment or a flow collection), and not a boolean or null word.
func plainSafe(s string) bool {
	if s == "" || plainWords[strings.ToLower(s)] {
		return false
	}
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '_':
		case i > 0 && (r >= '0' && r <= '9' || r == '-'):
		default:
			return false
		}
	}
	return true
}

// yamlNumber writes a JSON number so that YAML 1.1 reads it as a number too: an exponent
// needs a dot in the mantissa and a sign ("1e5" is a string there, "1.0e+5" a float).
func yamlNumber(s string) string {
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return s
	}
	mantissa, exp := s[:i], s[i+1:]
	if !strings.Contains(mantissa, ".") {
		mantissa += ".0"
	}
	if exp != "" && exp[0] != '+' && exp[0] != '-' {
		exp = "+" + exp
	}
	return mantissa + "e" + exp
}
