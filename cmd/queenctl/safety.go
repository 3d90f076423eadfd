package main

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Operator safety: changes can be previewed (--dry-run), deletes typed at a terminal need --yes,
// and times can be given relative to now.

// errRefused is a change queenctl declined to make (exit 1).
var errRefused = errors.New("refused")

// safetyFlags registers --dry-run, and --yes when the command deletes.
func (c *command) safetyFlags(deletes bool) (dryRun, yes *bool) {
	dryRun = c.flags().Bool("dry-run", false, "show what would change, and change nothing")
	yes = new(bool)
	if deletes {
		yes = c.flags().Bool("yes", false, "delete without asking (needed when stdin is a terminal)")
	}
	return dryRun, yes
}

// confirmDelete refuses a delete typed at a terminal without --yes.
func (c *command) confirmDelete(yes bool, what string) error {
	if yes || !c.app.stdinIsTerminal() {
		return nil
	}
	return fmt.Errorf("%w: %s: deleting %s needs --yes (or --dry-run to see what it would delete)", errRefused, c.name, what)
}

// parseSeekTime reads --to: an RFC 3339 time, or a duration back from now ("-1h", "15m": both
// mean that long ago).
func parseSeekTime(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(strings.TrimPrefix(s, "-"))
	if err != nil || strings.HasPrefix(s, "--") {
		return time.Time{}, fmt.Errorf("--to %q is neither an RFC 3339 time like 2026-11-29T10:00:00Z nor a duration back from now like -1h or 15m", s)
	}
	return now.Add(-d), nil
}

// dryRunList reports the ids a change would apply to, and changes nothing.
func (a *app) dryRunList(verb, what string, ids []string) error {
	if a.structured() {
		return a.encode(struct {
			DryRun bool     `json:"dryRun"`
			Action string   `json:"action"`
			IDs    []string `json:"ids"`
		}{true, verb, ids})
	}
	for _, id := range ids {
		fmt.Fprintf(a.stdout, "would %s %s\n", verb, clean(id))
	}
	fmt.Fprintf(a.stdout, "dry run: would %s %d %s; nothing changed\n", verb, len(ids), what)
	return nil
}
