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
	exitOffline = 3 // the broker could not be reached
)

const topUsage = `Usage: queenctl [--server URL] [--token T] [--json] <command> [arguments]

Look:
  status                                                    every queue's depth and every group's lag
  queue list [--namespace N] [--task T]                     queues with their message counts
  queue show Q                                              a queue's options and partitions
  group list                                                consumer groups with their lag per queue
  group show G                                              a group's cursor, lag and lease per partition
  lag [--min N] [--min-time D]                              lag per group and queue; exit 1 when over
  messages peek Q [--partition P] [--limit N]               stored messages, leasing nothing
  tail Q [--group G] [-f]                                   print messages (as they arrive with -f)
  dlq list --queue Q [--group G] [--limit N] [--offset N]   list dead letters
  dlq show ID                                               one dead letter with its payload
  ping                                                      is the broker up, and how fast it answers
  version                                                   queenctl's and the broker's versions

Change:
  push Q [--partition P] [--transaction-id T] [--data JSON] push JSON values (stdin: NDJSON or one value)
  dlq replay ID... | --queue Q --all [--group G]            replay dead letters
  dlq delete ID...                                          delete dead letters by id
  seek --group G --queue Q (--to TIME | --to -1h | --to-start | --to-end) [--create]
  queue configure Q [--lease-time D] [--retry-limit N] [--no-dlq | --dlq] [--namespace N] [--task T]
  queue delete Q                                            delete a queue and all its state
  group delete G [--queue Q]                                forget a consumer group
  (--dry-run on seek, replay, delete and configure shows what would change; deletes need --yes
  when stdin is a terminal)

The broker is --server, else $QUEEN_URL, else http://127.0.0.1:6632; the token is --token,
else $QUEEN_TOKEN. Run 'queenctl <command> --help' for a command's flags.
Exit status: 0 success, 1 the broker refused or failed (or lag is over), 2 bad usage,
3 the broker could not be reached. With --json, errors are JSON on stderr.
`

// app is one invocation: where to write, and the global flags every subcommand inherits.
type app struct {
	ctx            context.Context
	getenv         func(string) string
	stdin          io.Reader
	stdout, stderr io.Writer
	global         commonFlags
	// stdinIsTerminal reports whether a person may be typing: deletes then need --yes.
	stdinIsTerminal func() bool
}

// run is the whole command, testable in-process, with nothing on stdin; it returns the exit status.
func run(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	return runWith(ctx, args, env, strings.NewReader(""), stdout, stderr)
}

// runWith is run reading stdin.
func runWith(ctx context.Context, args []string, env func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	if env == nil {
		env = func(string) string { return "" }
	}
	a := &app{ctx: ctx, getenv: env, stdin: stdin, stdout: stdout, stderr: stderr,
		stdinIsTerminal: func() bool { return isTerminalReader(stdin) }}
	err := a.dispatch(args)
	code := exitCode(err)
	if code == exitOK || errors.Is(err, errReported) {
		return code
	}
	if wantsJSON(args) {
		_ = writeJSON(stderr, struct {
			Error string `json:"error"`
			Exit  int    `json:"exit"`
		}{err.Error(), code})
		return code
	}
	fmt.Fprintf(stderr, "queenctl: %v\n", err)
	var u usageError
	if errors.As(err, &u) && u.command != "" {
		fmt.Fprintf(stderr, "run 'queenctl %s --help' for usage\n", u.command)
	}
	return code
}

// exitCode maps a command's outcome to the exit status.
func exitCode(err error) int {
	switch {
	case err == nil, errors.Is(err, errHelpShown):
		return exitOK
	case errors.As(err, new(usageError)), errors.Is(err, queen.ErrInvalidOption):
		return exitUsage
	case isUnreachable(err):
		return exitOffline
	}
	return exitFailure
}

// wantsJSON reports --json among the arguments, before any "--".
func wantsJSON(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "--json", "-json", "--json=true", "-json=true":
			return true
		}
	}
	return false
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
	if a.global.version {
		fmt.Fprintf(a.stdout, "queenctl %s\n", clientVersion())
		return nil
	}
	if len(rest) == 0 {
		fmt.Fprint(a.stderr, topUsage)
		return usageError{msg: "no command given"}
	}
	if rest[0] == "help" {
		fmt.Fprint(a.stdout, topUsage)
		return nil
	}
	commands := map[string]func([]string) error{
		"status":          a.status,
		"queue list":      a.queueList,
		"queue show":      a.queueShow,
		"group list":      a.groupList,
		"group show":      a.groupShow,
		"lag":             a.lag,
		"messages peek":   a.messagesPeek,
		"tail":            a.tail,
		"push":            a.push,
		"dlq show":        a.dlqShow,
		"ping":            a.ping,
		"version":         a.version,
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
	case rest[0] != "dlq" && rest[0] != "queue" && rest[0] != "group" && rest[0] != "messages":
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
	return usageError{msg: fmt.Sprintf("unknown command %q (see queenctl --help)", rest[0])}
}

func isHelpFlag(s string) bool {
	switch s {
	case "-h", "-help", "--help", "--h":
		return true
	}
	return false
}
