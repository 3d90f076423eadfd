package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Contexts: named brokers, each with its server and token, in a config file of the shape the
// official queenctl reads and writes ($QUEEN_CONFIG, else ~/.queen/config.yaml):
//
//	current-context: prod
//	contexts:
//	  - name: prod
//	    server: https://queen.internal:6632
//	    token: s3cret          # or token-ref: env | file:///path | literal:s3cret
//
// The file is read as that block-style subset of YAML: comments, plain and quoted scalars,
// keys queenctl does not use (ignored, with whatever is nested under them). Anything else
// (flow collections other than [], anchors, block scalars) is refused with its line number.

// brokerContext is one named broker of the config file.
type brokerContext struct {
	Name, Server, Token, TokenRef string
	line                          int
}

// contextFile is the config file as read.
type contextFile struct {
	path     string
	current  string
	contexts []brokerContext
}

func (f *contextFile) find(name string) *brokerContext {
	for i := range f.contexts {
		if f.contexts[i].Name == name {
			return &f.contexts[i]
		}
	}
	return nil
}

func (f *contextFile) names() []string {
	out := make([]string, 0, len(f.contexts))
	for _, c := range f.contexts {
		out = append(out, c.Name)
	}
	return out
}

// configPath is where the config file is: $QUEEN_CONFIG, else ~/.queen/config.yaml ("" when
// there is no home directory).
func (a *app) configPath() string {
	if p := a.getenv("QUEEN_CONFIG"); p != "" {
		return p
	}
	home := firstNonEmpty(a.getenv("HOME"), a.getenv("USERPROFILE"))
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".queen", "config.yaml")
}

// target is the server and token to use: --server and --token, else QUEEN_URL and
// QUEEN_TOKEN, else the context's, else the default server without a token. A context's token
// goes only to the context's own server, never to a server named some other way.
func (a *app) target() (server, token string, err error) {
	server = firstNonEmpty(a.global.server, a.getenv("QUEEN_URL"))
	token = firstNonEmpty(a.global.token, a.getenv("QUEEN_TOKEN"))
	named := firstNonEmpty(a.global.context, a.getenv("QUEEN_CONTEXT")) != ""
	if server != "" && token != "" && !named {
		return server, token, nil // nothing a context could add
	}
	c, err := a.selectedContext()
	if err != nil {
		return "", "", err
	}
	if c != nil {
		if server == "" {
			server = c.Server
		}
		if token == "" && sameServer(server, c.Server) {
			if token, err = a.contextToken(c); err != nil {
				return "", "", err
			}
		}
	}
	return firstNonEmpty(server, defaultServer), token, nil
}

func sameServer(a, b string) bool {
	return a != "" && strings.TrimSuffix(strings.TrimSpace(a), "/") == strings.TrimSuffix(strings.TrimSpace(b), "/")
}

// selectedContext is the context --context names, else QUEEN_CONTEXT, else the file's
// current-context; nil when none is named and the file names none (or there is no file).
func (a *app) selectedContext() (*brokerContext, error) {
	name, by := a.global.context, "--context"
	if name == "" {
		name, by = a.getenv("QUEEN_CONTEXT"), "QUEEN_CONTEXT"
	}
	path := a.configPath()
	if path == "" {
		if name != "" {
			return nil, usageError{msg: fmt.Sprintf("%s %q: no config file to read it from (set QUEEN_CONFIG or HOME)", by, name)}
		}
		return nil, nil
	}
	f, err := readContextFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && name == "":
		return nil, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, usageError{msg: fmt.Sprintf("%s %q: there is no config file %s", by, name, path)}
	case err != nil:
		return nil, usageError{msg: err.Error()}
	}
	if name == "" {
		if f.current == "" {
			return nil, nil
		}
		name, by = f.current, "current-context"
	}
	c := f.find(name)
	if c == nil {
		return nil, usageError{msg: fmt.Sprintf("%s %q: %s has no such context (it has: %s)", by, name, path, listOrNone(f.names()))}
	}
	return c, nil
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// contextToken reads the context's token: given literally, or by its reference.
func (a *app) contextToken(c *brokerContext) (string, error) {
	if c.Token != "" {
		return c.Token, nil
	}
	ref := c.TokenRef
	switch {
	case ref == "":
		return "", nil
	case ref == "env":
		return a.getenv("QUEEN_TOKEN"), nil
	case strings.HasPrefix(ref, "literal:"):
		return strings.TrimPrefix(ref, "literal:"), nil
	case strings.HasPrefix(ref, "file://"):
		b, err := os.ReadFile(strings.TrimPrefix(ref, "file://"))
		if err != nil {
			return "", usageError{msg: fmt.Sprintf("context %q: reading its token: %v", c.Name, err)}
		}
		return strings.TrimSpace(string(b)), nil
	case strings.HasPrefix(ref, "keychain://"):
		return "", usageError{msg: fmt.Sprintf("context %q: its token is in the OS keychain, which this queenctl does not read: "+
			"give --token, or store it with token-ref file:///path or token", c.Name)}
	}
	return "", usageError{msg: fmt.Sprintf("context %q: token-ref %q: must be env, file:///path, literal:TOKEN or keychain://ID", c.Name, ref)}
}

// readContextFile reads and parses the config file at path.
func readContextFile(path string) (*contextFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseContextFile(path, string(b))
}

// yamlLine is one line of the file that holds something: its number, indentation, and text
// without indentation, comment or trailing blanks.
type yamlLine struct {
	n, indent int
	text      string
}

func parseContextFile(path, data string) (*contextFile, error) {
	lines, err := yamlLines(path, data)
	if err != nil {
		return nil, err
	}
	f := &contextFile{path: path}
	fail := func(l yamlLine, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", path, l.n, fmt.Sprintf(format, args...))
	}
	for i := 0; i < len(lines); {
		l := lines[i]
		i++
		if l.indent != 0 || isSeqItem(l.text) {
			return nil, fail(l, "expected a top-level key (current-context or contexts), got %q", l.text)
		}
		key, value, ok := splitKey(l.text)
		if !ok {
			return nil, fail(l, "expected key: value, got %q", l.text)
		}
		switch key {
		case "current-context":
			if f.current, err = scalar(value); err != nil {
				return nil, fail(l, "current-context: %v", err)
			}
		case "contexts":
			switch value {
			case "", "[]", "~", "null":
			default:
				return nil, fail(l, "contexts: expected a list of contexts, got %q", value)
			}
			if value != "" {
				continue
			}
			if i, err = parseContexts(lines, i, f, fail); err != nil {
				return nil, err
			}
		default: // a key queenctl does not use: skip what is nested under it
			for i < len(lines) && (lines[i].indent > 0 || value == "" && isSeqItem(lines[i].text)) {
				i++
			}
		}
	}
	seen := map[string]int{}
	for _, c := range f.contexts {
		switch {
		case c.Name == "":
			return nil, fmt.Errorf("%s:%d: a context without a name", path, c.line)
		case seen[c.Name] != 0:
			return nil, fmt.Errorf("%s:%d: context %q is named twice (first on line %d)", path, c.line, c.Name, seen[c.Name])
		}
		seen[c.Name] = c.line
	}
	return f, nil
}

// parseContexts reads the list under "contexts:" from line i on, and returns the line after it.
func parseContexts(lines []yamlLine, i int, f *contextFile, fail func(yamlLine, string, ...any) error) (int, error) {
	if i >= len(lines) || !isSeqItem(lines[i].text) {
		return i, nil // "contexts:" with nothing under it
	}
	dash := lines[i].indent
	for i < len(lines) && lines[i].indent == dash && isSeqItem(lines[i].text) {
		l := lines[i]
		i++
		c := brokerContext{line: l.n}
		rest := strings.TrimLeft(l.text[1:], " ")
		keys := l.indent + len(l.text) - len(rest) // the column of the item's keys
		if rest == "" && i < len(lines) && lines[i].indent > dash {
			keys = lines[i].indent
		}
		entries := []yamlLine{}
		if rest != "" {
			entries = append(entries, yamlLine{l.n, keys, rest})
		}
		for i < len(lines) && lines[i].indent > dash {
			if lines[i].indent == keys {
				entries = append(entries, lines[i])
			} else if lines[i].indent < keys {
				return 0, fail(lines[i], "expected a key of the context at column %d, got %q", keys+1, lines[i].text)
			}
			i++ // deeper lines belong to a key queenctl does not use
		}
		for _, e := range entries {
			key, value, ok := splitKey(e.text)
			if !ok {
				return 0, fail(e, "expected key: value in a context, got %q", e.text)
			}
			v, err := scalar(value)
			if err != nil {
				return 0, fail(e, "%s: %v", key, err)
			}
			switch key {
			case "name":
				c.Name = v
			case "server":
				c.Server = v
			case "token":
				c.Token = v
			case "token-ref":
				c.TokenRef = v
			}
		}
		f.contexts = append(f.contexts, c)
	}
	if i < len(lines) && lines[i].indent > 0 {
		return 0, fail(lines[i], "unexpected indentation: %q", lines[i].text)
	}
	return i, nil
}

func isSeqItem(text string) bool { return text == "-" || strings.HasPrefix(text, "- ") }

// yamlLines splits data into the lines that hold something.
func yamlLines(path, data string) ([]yamlLine, error) {
	if !utf8.ValidString(data) {
		return nil, fmt.Errorf("%s: not UTF-8 text", path)
	}
	data = strings.TrimPrefix(data, "\ufeff")
	var out []yamlLine
	for i, raw := range strings.Split(data, "\n") {
		raw = strings.TrimSuffix(raw, "\r")
		body := strings.TrimLeft(raw, " ")
		indent := len(raw) - len(body)
		if strings.HasPrefix(body, "\t") {
			return nil, fmt.Errorf("%s:%d: a tab in the indentation (YAML indents with spaces)", path, i+1)
		}
		body = strings.TrimRight(stripComment(body), " \t")
		switch {
		case body == "", strings.HasPrefix(body, "%"), indent == 0 && body == "---":
			continue // nothing, a directive, or the start of the document
		case indent == 0 && body == "...":
			return out, nil // the end of the document
		}
		out = append(out, yamlLine{n: i + 1, indent: indent, text: body})
	}
	return out, nil
}

// stripComment drops a comment: a # at the start or after a blank, outside quotes.
func stripComment(s string) string {
	var quote byte
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case quote == '"' && ch == '\\':
			i++
		case quote != 0 && ch == quote:
			quote = 0
		case quote != 0:
		case ch == '"' || ch == '\'':
			if i == 0 || strings.ContainsRune(" :-[{,", rune(s[i-1])) {
				quote = ch
			}
		case ch == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
			return s[:i]
		}
	}
	return s
}

// splitKey splits "key: value" (or "key:") into its key and the value's text.
func splitKey(text string) (key, value string, ok bool) {
	if strings.HasSuffix(text, ":") && !strings.Contains(text, ": ") {
		return strings.TrimSuffix(text, ":"), "", text != ":"
	}
	key, value, ok = strings.Cut(text, ": ")
	key = strings.TrimSpace(key)
	return key, strings.TrimSpace(value), ok && key != "" && !strings.ContainsAny(key[:1], `"'[{`)
}

// scalar reads a scalar's text: plain, 'single-quoted' or "double-quoted"; ~ and null are "".
func scalar(v string) (string, error) {
	switch {
	case v == "" || v == "~" || v == "null" || v == "Null" || v == "NULL":
		return "", nil
	case v[0] == '\'':
		if len(v) < 2 || v[len(v)-1] != '\'' {
			return "", fmt.Errorf("unterminated quoted value %s", v)
		}
		inner := v[1 : len(v)-1]
		if strings.Count(strings.ReplaceAll(inner, "''", ""), "'") > 0 {
			return "", fmt.Errorf("a lone ' inside the quoted value %s", v)
		}
		return strings.ReplaceAll(inner, "''", "'"), nil
	case v[0] == '"':
		return unquoteDouble(v)
	case strings.ContainsRune("[{&*!|>@`", rune(v[0])):
		return "", fmt.Errorf("%s: this YAML form is not read here; write the value plain or quoted", v)
	}
	return v, nil
}

// yamlEscapes are the one-letter escapes of YAML's double-quoted style.
var yamlEscapes = map[byte]string{'0': "\x00", 'a': "\a", 'b': "\b", 't': "\t", '\t': "\t", 'n': "\n", 'v': "\v",
	'f': "\f", 'r': "\r", 'e': "\x1b", ' ': " ", '"': `"`, '/': "/", '\\': `\`, 'N': "\u0085", '_': "\u00a0",
	'L': "\u2028", 'P': "\u2029"}

func unquoteDouble(v string) (string, error) {
	if len(v) < 2 || v[len(v)-1] != '"' {
		return "", fmt.Errorf("unterminated quoted value %s", v)
	}
	inner := v[1 : len(v)-1]
	var b strings.Builder
	for i := 0; i < len(inner); i++ {
		ch := inner[i]
		switch {
		case ch == '"':
			return "", fmt.Errorf(`a lone " inside the quoted value %s`, v)
		case ch != '\\':
			b.WriteByte(ch)
			continue
		case i+1 == len(inner):
			return "", fmt.Errorf("a lone \\ at the end of %s", v)
		}
		i++
		if s, ok := yamlEscapes[inner[i]]; ok {
			b.WriteString(s)
			continue
		}
		digits := map[byte]int{'x': 2, 'u': 4, 'U': 8}[inner[i]]
		if digits == 0 || i+1+digits > len(inner) {
			return "", fmt.Errorf("unknown escape \\%c in %s", inner[i], v)
		}
		n, err := strconv.ParseUint(inner[i+1:i+1+digits], 16, 32)
		if err != nil || !utf8.ValidRune(rune(n)) {
			return "", fmt.Errorf("bad escape \\%s in %s", inner[i:i+1+digits], v)
		}
		b.WriteRune(rune(n))
		i += digits
	}
	return b.String(), nil
}

// contextNames are the names of the config file's contexts, for completion.
func (a *app) contextNames() []string {
	path := a.configPath()
	if path == "" {
		return nil
	}
	f, err := readContextFile(path)
	if err != nil {
		return nil
	}
	names := f.names()
	slices.Sort(names)
	return names
}
