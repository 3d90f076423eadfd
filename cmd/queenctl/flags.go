package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
)

const defaultServer = "http://127.0.0.1:6632"

var (
	errHelp      = flag.ErrHelp
	errHelpShown = errors.New("help shown")
	// errReported is a failure already reported on stderr item by item (exit 1).
	errReported = errors.New("failures reported")
)

// usageError is a bad command line (exit 2); command names the subcommand whose help to suggest.
type usageError struct {
	msg     string
	command string
}

func (e usageError) Error() string { return e.msg }

// commonFlags are accepted before the command and by every subcommand. They default to ""
// so that flag help never prints the token; resolution happens in connect.
type commonFlags struct {
	server, token string
	json          bool
	version       bool
}

func (a *app) newFlagSet(name string, c *commonFlags) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported by run, help by command.parse
	fs.Usage = func() {}
	fs.StringVar(&c.server, "server", "", "broker URL (default $QUEEN_URL, else "+defaultServer+")")
	fs.StringVar(&c.token, "token", "", "bearer token (default $QUEEN_TOKEN)")
	fs.BoolVar(&c.json, "json", false, "print JSON instead of a table")
	if name == "queenctl" {
		fs.BoolVar(&c.version, "version", false, "print queenctl's version and exit")
	}
	return fs
}

// command is one subcommand: its flags and its help text.
type command struct {
	app      *app
	name     string // "dlq list"
	synopsis string // what follows "queenctl <name>"
	about    string
	fs       *flag.FlagSet
	common   commonFlags
}

func (a *app) command(name, synopsis, about string) *command {
	c := &command{app: a, name: name, synopsis: synopsis, about: about}
	c.fs = a.newFlagSet(name, &c.common)
	return c
}

// parse parses flags wherever they appear among the positional arguments (so that
// "queue configure Q --lease-time 30s" works); after "--" everything is positional.
func (c *command) parse(args []string) ([]string, error) {
	var positional []string
	for {
		if err := c.fs.Parse(args); err != nil {
			if errors.Is(err, errHelp) {
				c.printHelp()
				return nil, errHelpShown
			}
			return nil, c.usagef("%s: %v", c.name, err)
		}
		rest := c.fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

func (c *command) printHelp() {
	w := c.app.stdout
	fmt.Fprintf(w, "Usage: queenctl %s %s\n\n%s\n\nFlags:\n", c.name, c.synopsis, c.about)
	c.fs.SetOutput(w)
	c.fs.PrintDefaults()
	c.fs.SetOutput(io.Discard)
}

func (c *command) usagef(format string, args ...any) error {
	return usageError{msg: fmt.Sprintf(format, args...), command: c.name}
}

// oneArg parses a command that takes exactly one argument, a what ("queue name"), and returns it.
func (c *command) oneArg(args []string, what string) (string, error) {
	pos, err := c.parse(args)
	if err != nil {
		return "", err
	}
	if len(pos) != 1 {
		return "", c.usagef("%s: give exactly one %s, got %d (%q)", c.name, what, len(pos), pos)
	}
	return pos[0], nil
}

// noArgs parses a command that takes flags only.
func (c *command) noArgs(args []string) error {
	pos, err := c.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return c.usagef("%s takes no arguments, got %q", c.name, pos[0])
	}
	return nil
}

// connectNoArgs is the opening of a command that takes no arguments: refuse any, then connect.
func (c *command) connectNoArgs(args []string) (*admin.Admin, func(), error) {
	if err := c.noArgs(args); err != nil {
		return nil, nil, err
	}
	return c.connect()
}

// connectOneArg is the opening of a command that takes one argument, a what: read it, then
// connect.
func (c *command) connectOneArg(args []string, what string) (string, *admin.Admin, func(), error) {
	arg, err := c.oneArg(args, what)
	if err != nil {
		return "", nil, nil, err
	}
	adm, done, err := c.connect()
	return arg, adm, done, err
}

// flagSet reports whether the named flag was given on the command line.
func (c *command) flagSet(name string) bool {
	found := false
	c.fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

// jsonOut reports whether --json was given before or after the command.
func (c *command) jsonOut() bool { return c.common.json || c.app.global.json }

// connect builds an Admin from --server/--token, else QUEEN_URL/QUEEN_TOKEN, else the default.
func (c *command) connect() (*admin.Admin, func(), error) {
	client, done, err := c.connectClient()
	if err != nil {
		return nil, nil, err
	}
	return admin.New(client), done, nil
}

// connectClient builds the client behind connect, for the commands that push or pop.
func (c *command) connectClient() (*queen.Client, func(), error) {
	server := c.serverURL()
	token := firstNonEmpty(c.common.token, c.app.global.token, c.app.getenv("QUEEN_TOKEN"))
	opts := []queen.Option{
		queen.WithLogger(slog.New(slog.DiscardHandler)),                // errors are reported once, by run
		queen.WithRetry(1, 100*time.Millisecond, 500*time.Millisecond), // a person is waiting: fail fast
	}
	if token != "" {
		opts = append(opts, queen.WithToken(token))
	}
	client, err := queen.New(server, opts...)
	if err != nil {
		return nil, nil, c.usagef("invalid server %q: %v", server, err)
	}
	return client, func() { _ = client.Close() }, nil
}

// serverURL is --server, else QUEEN_URL, else the default.
func (c *command) serverURL() string {
	return firstNonEmpty(c.common.server, c.app.global.server, c.app.getenv("QUEEN_URL"), defaultServer)
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}
