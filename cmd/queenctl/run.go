package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	queen "github.com/queenmq/queen-go"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1 // the broker refused or failed
	exitUsage   = 2 // bad command line
)

const topUsage = `Usage: queenctl [--server URL] [--token T] [--json] <command> [arguments]

Commands:
  dlq list --queue Q [--group G] [--limit N] [--offset N]   list dead letters
  dlq replay ID...                                          replay dead letters by id
  dlq replay --queue Q --all [--group G]                    replay every dead letter of a queue
  dlq delete ID...                                          delete dead letters by id
  seek --group G --queue Q (--to TIME | --to-end)           move a consumer group's cursors
  queue configure Q [--lease-time D] [--retry-limit N] [--no-dlq] [--namespace N] [--task T]
  queue delete Q                                            delete a queue and all its state
  group delete G [--queue Q]                                forget a consumer group

The broker is --server, else $QUEEN_URL, else http://127.0.0.1:6632; the token is --token,
else $QUEEN_TOKEN. Run 'queenctl <command> --help' for a command's flags.
Exit status: 0 success, 1 the broker refused or failed, 2 bad usage.
`

// app is one invocation: where to write, and the global flags every subcommand inherits.
type app struct {
	ctx            context.Context
	getenv         func(string) string
	stdout, stderr io.Writer
	global         commonFlags
}

// run is the whole command, testable in-process; it returns the exit status.
func run(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	if env == nil {
		env = func(string) string { return "" }
	}
	a := &app{ctx: ctx, getenv: env, stdout: stdout, stderr: stderr}
	err := a.dispatch(args)
	switch {
	case err == nil, errors.Is(err, errHelpShown):
		return exitOK
	case errors.As(err, new(usageError)), errors.Is(err, queen.ErrInvalidOption):
		fmt.Fprintf(stderr, "queenctl: %v\n", err)
		var u usageError
		if errors.As(err, &u) && u.command != "" {
			fmt.Fprintf(stderr, "run 'queenctl %s --help' for usage\n", u.command)
		}
		return exitUsage
	case errors.Is(err, errReported):
		return exitFailure
	default:
		fmt.Fprintf(stderr, "queenctl: %v\n", err)
		return exitFailure
	}
}

func (a *app) dispatch(args []string) error {
	fs := a.newFlagSet("queenctl", &a.global)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, errHelp) {
			fmt.Fprint(a.stdout, topUsage)
			return errHelpShown
		}
		return usageError{msg: err.Error()}
	}
	rest := fs.Args()
	if len(rest) == 0 {
		fmt.Fprint(a.stderr, topUsage)
		return usageError{msg: "no command given"}
	}
	if rest[0] == "help" {
		fmt.Fprint(a.stdout, topUsage)
		return nil
	}
	commands := map[string]func([]string) error{
		"dlq list":        a.dlqList,
		"dlq replay":      a.dlqReplay,
		"dlq delete":      a.dlqDelete,
		"seek":            a.seek,
		"queue configure": a.queueConfigure,
		"queue delete":    a.queueDelete,
		"group delete":    a.groupDelete,
	}
	if run, ok := commands[rest[0]]; ok {
		return run(rest[1:])
	}
	switch {
	case rest[0] != "dlq" && rest[0] != "queue" && rest[0] != "group":
	case len(rest) > 1 && commands[rest[0]+" "+rest[1]] != nil:
		return commands[rest[0]+" "+rest[1]](rest[2:])
	case len(rest) > 1 && isHelpFlag(rest[1]):
		fmt.Fprint(a.stdout, topUsage)
		return errHelpShown
	case len(rest) == 1 || strings.HasPrefix(rest[1], "-"):
		return usageError{msg: rest[0] + ": missing subcommand (see queenctl --help)"}
	default:
		return usageError{msg: fmt.Sprintf("unknown command %q (see queenctl --help)", rest[0]+" "+rest[1])}
	}
	return usageError{msg: fmt.Sprintf("unknown command %q (want dlq, seek, queue or group; see queenctl --help)", rest[0])}
}

func isHelpFlag(s string) bool {
	switch s {
	case "-h", "-help", "--help", "--h":
		return true
	}
	return false
}
