package main

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/queenmq/queen-go/admin"
)

// format is how a command prints what it read or did: -o table (the default), json, ndjson or
// yaml.
type format string

const (
	formatTable  format = "table"
	formatJSON   format = "json"
	formatNDJSON format = "ndjson"
	formatYAML   format = "yaml"
)

func (f format) isJSON() bool { return f == formatJSON || f == formatNDJSON }

// structured reports output for programs (json, ndjson or yaml) rather than for people.
func (a *app) structured() bool { return a.format != formatTable && a.format != "" }

// encode writes v in the structured format asked for.
func (a *app) encode(v any) error {
	switch a.format {
	case formatNDJSON:
		return writeNDJSON(a.stdout, v)
	case formatYAML:
		return writeYAML(a.stdout, v)
	}
	return writeJSON(a.stdout, v)
}

// show writes v in the structured format asked for, or has table print it for people.
func (a *app) show(v any, table func(w io.Writer) error) error {
	if a.structured() {
		return a.encode(v)
	}
	return table(a.stdout)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// rowser is a value whose NDJSON form is a line per row (a page's entries), not one line.
type rowser interface{ rows() []any }

// writeNDJSON writes one JSON value per line: each element of a list (or row of a page), or
// the whole value when it is neither.
func writeNDJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	if r, ok := v.(rowser); ok {
		for _, row := range r.rows() {
			if err := enc.Encode(row); err != nil {
				return err
			}
		}
		return nil
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice {
		for i := range rv.Len() {
			if err := enc.Encode(rv.Index(i).Interface()); err != nil {
				return err
			}
		}
		return nil
	}
	return enc.Encode(v)
}

// table writes aligned columns. Every cell is cleaned: whatever the broker stored, a table
// shows it as text and never passes a control character to the terminal.
type table struct{ tw *tabwriter.Writer }

func newTable(w io.Writer, header ...any) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
	if len(header) > 0 {
		t.row(header...)
	}
	return t
}

// row writes one line of cells: strings cleaned, other values as fmt prints them.
func (t *table) row(cells ...any) {
	var b strings.Builder
	for i, c := range cells {
		if i > 0 {
			b.WriteByte('\t')
		}
		if s, ok := c.(string); ok {
			b.WriteString(clean(s))
		} else {
			fmt.Fprint(&b, c)
		}
	}
	b.WriteByte('\n')
	_, _ = io.WriteString(t.tw, b.String())
}

func (t *table) flush() error { return t.tw.Flush() }

// clean makes text from the broker (a name, a handler's error text) safe to print on a
// terminal: control characters, with which every escape sequence starts, invalid UTF-8, and
// the characters that reorder or hide text (bidirectional overrides, line separators) are
// written as escapes (\x1b, \n, \u202e). Nothing stored can then move the cursor, recolour or
// retitle the terminal, or make a line read as something it is not.
func clean(s string) string {
	if !needsCleaning(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80 && unsafeRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

func needsCleaning(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || unsafeRune(r) {
			return true
		}
	}
	return false
}

// unsafeRune reports a character a terminal does not simply show: a control character, or
// one that changes the direction or the lines of the text around it.
func unsafeRune(r rune) bool {
	switch {
	case unicode.IsControl(r):
		return true
	case r == '\u061c', r == '\u200e', r == '\u200f', r >= '\u202a' && r <= '\u202e',
		r >= '\u2066' && r <= '\u2069', r == '\u2028', r == '\u2029':
		return true
	}
	return false
}

// deadLetterPage is a dlq list answer: as JSON the page itself, as NDJSON a line per letter.
type deadLetterPage admin.DLQPage

func (p deadLetterPage) rows() []any {
	out := make([]any, len(p.DeadLetters))
	for i, dl := range p.DeadLetters {
		out[i] = dl
	}
	return out
}

func printDeadLetters(w io.Writer, page admin.DLQPage) error {
	if len(page.DeadLetters) > 0 {
		t := newTable(w, "ID", "QUEUE", "PARTITION", "GROUP", "RETRIES", "FAILED AT", "ERROR")
		for _, dl := range page.DeadLetters {
			t.row(dl.ID, dl.Queue, dl.Partition, dl.ConsumerGroup, dl.RetryCount, timeText(dl.FailedAt), oneLine(dl.Error, 60))
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	if page.Total < 0 {
		_, err := fmt.Fprintf(w, "%d dead letters (the broker does not report a total)\n", len(page.DeadLetters))
		return err
	}
	_, err := fmt.Fprintf(w, "%d of %d dead letters (offset %d)\n", len(page.DeadLetters), page.Total, page.Offset)
	return err
}

func timeText(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// oneLine keeps a table cell on one line and at most max runes.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

type itemOutcome struct {
	ID     string `json:"id"`
	Result any    `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
	// MayHaveBeenApplied: the answer was lost, so the change may or may not have happened.
	MayHaveBeenApplied bool `json:"mayHaveBeenApplied,omitempty"`
}

// forEach applies do to every id, reporting each outcome (do's errors say what failed): a list with -o json, ndjson or yaml,
// a progress bar on a terminal, else one line per id. Failures go to stderr and make the exit
// status 1; items whose answer was lost, and nothing worse, make it 4.
func (a *app) forEach(verb string, ids []string, do func(id string) (result any, line string, err error)) error {
	if len(ids) == 0 && !a.structured() {
		fmt.Fprintf(a.stdout, "no dead letters to %s\n", verb)
		return nil
	}
	bar := !a.structured() && isTerminal(a.stdout)
	outcomes := make([]itemOutcome, 0, len(ids))
	succeeded, failed, unknown := 0, 0, 0
	for i, id := range ids {
		result, line, err := do(id)
		switch {
		case err != nil:
			o := itemOutcome{ID: id, Error: clean(err.Error()), MayHaveBeenApplied: isMayHaveApplied(err)}
			if o.MayHaveBeenApplied {
				unknown++
			} else {
				failed++
			}
			outcomes = append(outcomes, o)
			if bar {
				fmt.Fprint(a.stdout, "\r\033[K")
			}
			fmt.Fprintf(a.stderr, "queenctl: %s\n", o.Error)
		default:
			succeeded++
			outcomes = append(outcomes, itemOutcome{ID: id, Result: result})
			if !bar && !a.structured() {
				fmt.Fprintln(a.stdout, line)
			}
		}
		if bar {
			drawProgress(a.stdout, verb, i+1, len(ids))
		}
		if a.ctx.Err() != nil && i+1 < len(ids) {
			fmt.Fprintf(a.stderr, "queenctl: %s interrupted after %d of %d\n", verb, i+1, len(ids))
			failed++
			break
		}
	}
	if a.structured() {
		if err := a.encode(outcomes); err != nil {
			return err
		}
	} else {
		if bar {
			fmt.Fprintln(a.stdout)
		}
		summary := fmt.Sprintf("%s: %d of %d succeeded", verb, succeeded, len(ids))
		if unknown > 0 {
			summary += fmt.Sprintf(", %d may have been applied (their answers were lost)", unknown)
		}
		fmt.Fprintln(a.stdout, summary)
	}
	switch {
	case failed > 0:
		return reported{exitFailure}
	case unknown > 0:
		return reported{exitUnknown}
	}
	return nil
}

func drawProgress(w io.Writer, verb string, done, total int) {
	const width = 30
	filled := width * done / total
	fmt.Fprintf(w, "\r%s [%s%s] %d/%d", verb, strings.Repeat("=", filled), strings.Repeat(" ", width-filled), done, total)
}
