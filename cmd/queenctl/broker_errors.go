package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime/debug"
	"syscall"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
)

// isUnreachable reports an error that means no broker answered at all: refused, unresolvable,
// timed out or dropped before any HTTP answer.
func isUnreachable(err error) bool {
	if errors.As(err, new(*queen.APIError)) {
		return false
	}
	var dnsErr *net.DNSError
	var opErr *net.OpError
	return errors.As(err, &dnsErr) || errors.As(err, &opErr) || errors.Is(err, syscall.ECONNREFUSED)
}

// notQueen adds a hint to a read whose route the server does not have at all: every Queen
// broker serves the introspection routes, so the server is likely something else.
func (c *command) notQueen(err error) error {
	var apiErr *queen.APIError
	if errors.Is(err, admin.ErrUnsupported) && errors.As(err, &apiErr) && apiErr.StatusCode == 404 && apiErr.NotJSON {
		return fmt.Errorf("%w (is QUEEN_URL a Queen broker? %s answered 404 to %s)", err, c.serverURL(), apiErr.Path)
	}
	return err
}

// isTerminalReader reports whether r is a terminal a person types into (or a reader that says
// it stands for one).
func isTerminalReader(r io.Reader) bool {
	if t, ok := r.(interface{ IsTerminal() bool }); ok {
		return t.IsTerminal()
	}
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// clientVersion is the version of the queen-go module queenctl was built from.
func clientVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok || info.Main.Version == "" {
		return "(devel)"
	}
	return info.Main.Version
}
