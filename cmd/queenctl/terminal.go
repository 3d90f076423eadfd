package main

import (
	"io"
	"os"

	"golang.org/x/term"
)

// isTerminalReader reports whether r is a terminal a person types into (or a reader that says
// it stands for one). A character device that is no terminal, /dev/null say, is no person.
func isTerminalReader(r io.Reader) bool {
	if t, ok := r.(interface{ IsTerminal() bool }); ok {
		return t.IsTerminal()
	}
	return isTerminalFile(r)
}

// isTerminal reports whether w is a terminal, where a progress bar can redraw itself.
func isTerminal(w io.Writer) bool { return isTerminalFile(w) }

func isTerminalFile(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
