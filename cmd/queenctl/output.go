package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/queenmq/queen-go/admin"
)

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

func printDeadLetters(w io.Writer, page admin.DLQPage) {
	if len(page.DeadLetters) > 0 {
		tw := newTable(w)
		fmt.Fprintln(tw, "ID\tQUEUE\tPARTITION\tGROUP\tRETRIES\tFAILED AT\tERROR")
		for _, dl := range page.DeadLetters {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", dl.ID, dl.Queue, dl.Partition, dl.ConsumerGroup,
				dl.RetryCount, timeText(dl.FailedAt), oneLine(dl.Error, 60))
		}
		tw.Flush()
	}
	if page.Total < 0 {
		fmt.Fprintf(w, "%d dead letters (the broker does not report a total)\n", len(page.DeadLetters))
		return
	}
	fmt.Fprintf(w, "%d of %d dead letters (offset %d)\n", len(page.DeadLetters), page.Total, page.Offset)
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

// isTerminal reports whether w is a character device, where a progress bar can redraw itself.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

type itemOutcome struct {
	ID     string `json:"id"`
	Result any    `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
}

// forEach applies do to every id, reporting each outcome: a JSON array with --json, a progress
// bar on a terminal, else one line per id. Failures go to stderr and make the exit status 1.
func (a *app) forEach(c *command, verb string, ids []string, do func(id string) (result any, line string, err error)) error {
	if len(ids) == 0 && !c.jsonOut() {
		fmt.Fprintf(a.stdout, "no dead letters to %s\n", verb)
		return nil
	}
	bar := !c.jsonOut() && isTerminal(a.stdout)
	outcomes := make([]itemOutcome, 0, len(ids))
	failed := 0
	for i, id := range ids {
		result, line, err := do(id)
		if err != nil {
			failed++
			outcomes = append(outcomes, itemOutcome{ID: id, Error: err.Error()})
			if bar {
				fmt.Fprint(a.stdout, "\r\033[K")
			}
			fmt.Fprintf(a.stderr, "queenctl: %s %s: %v\n", verb, id, err)
		} else {
			outcomes = append(outcomes, itemOutcome{ID: id, Result: result})
			if !bar && !c.jsonOut() {
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
	if c.jsonOut() {
		if err := writeJSON(a.stdout, outcomes); err != nil {
			return err
		}
	} else {
		if bar {
			fmt.Fprintln(a.stdout)
		}
		fmt.Fprintf(a.stdout, "%s: %d of %d succeeded\n", verb, len(ids)-countFailed(outcomes), len(ids))
	}
	if failed > 0 {
		return errReported
	}
	return nil
}

func countFailed(outcomes []itemOutcome) int {
	n := 0
	for _, o := range outcomes {
		if o.Error != "" {
			n++
		}
	}
	return n
}

func drawProgress(w io.Writer, verb string, done, total int) {
	const width = 30
	filled := width * done / total
	fmt.Fprintf(w, "\r%s [%s%s] %d/%d", verb, strings.Repeat("=", filled), strings.Repeat(" ", width-filled), done, total)
}
