package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	queen "github.com/queenmq/queen-go"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1 // the broker refused or failed (or lag is over a bound)
	exitUsage   = 2 // bad command line, or a context that cannot be read
	exitOffline = 3 // the broker could not be reached, or did not answer within --timeout
	exitUnknown = 4 // a change whose answer was lost: it may or may not have been applied
)

const topUsage = `Usage: queenctl [--server URL] [--token T] [--context NAME] [-o FORMAT] <command> [arguments]

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

Shell:
  completion bash|zsh|fish                                  print a completion script (see its --help)

The broker is --server, else $QUEEN_URL, else the context's server, else http://127.0.0.1:6632;
the token is --token, else $QUEEN_TOKEN, else the context's token (sent only to the context's own
server). The context is --context, else $QUEEN_CONTEXT, else the current-context of the config
file ($QUEEN_CONFIG, else ~/.queen/config.yaml):

  current-context: prod
  contexts:
    - name: prod
      server: https://queen.internal:6632
      token: s3cret            # or token-ref: env | file:///path/to/token | literal:s3cret

Output is a table, or -o json, ndjson or yaml (--json is -o json; errors are then JSON on stderr).
Each request waits --timeout (default 10s) for the broker's answer.
Run 'queenctl <command> --help' for a command's flags.
Exit status: 0 success, 1 the broker refused or failed (or lag is over), 2 bad usage,
3 the broker could not be reached or did not answer in time, 4 a change whose answer was lost:
it may have been applied (look before you repeat it).
`

// app is one invocation: where to write, and the global flags every subcommand inherits.
type app struct {
	ctx            context.Context
	getenv         func(string) string
	stdin          io.Reader
	stdout, stderr io.Writer
	global         globalFlags
	format         format // resolved from -o and --json once the flags are parsed; "" before
	// stdinIsTerminal reports whether a person may be typing: deletes then need --yes.
	stdinIsTerminal func() bool
	// closers release what the command opened (clients and their connections), last first.
	closers []func()
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
	err := a.execute(args)
	for _, c := range slices.Backward(a.closers) {
		c()
	}
	code := exitCode(err)
	var r reported
	if code == exitOK || errors.As(err, &r) {
		return code
	}
	msg := clean(err.Error())
	if a.format.isJSON() || (a.format == "" && wantsJSON(args)) {
		_ = writeJSON(stderr, struct {
			Error string `json:"error"`
			Exit  int    `json:"exit"`
		}{msg, code})
		return code
	}
	fmt.Fprintf(stderr, "queenctl: %s\n", msg)
	var u usageError
	if errors.As(err, &u) && u.command != "" {
		fmt.Fprintf(stderr, "run 'queenctl %s --help' for usage\n", u.command)
	}
	return code
}

// exitCode maps a command's outcome to the exit status.
func exitCode(err error) int {
	var r reported
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &r):
		return r.code
	case errors.As(err, new(usageError)), errors.Is(err, queen.ErrInvalidOption):
		return exitUsage
	case isMayHaveApplied(err):
		return exitUnknown
	case isUnreachable(err):
		return exitOffline
	}
	return exitFailure
}

// usageError is a bad command line (exit 2); command names the subcommand whose help to suggest.
type usageError struct {
	msg     string
	command string
}

func (e usageError) Error() string { return e.msg }

// reported is an outcome already reported on stderr item by item, with its exit status.
type reported struct{ code int }

func (r reported) Error() string { return fmt.Sprintf("failures reported (exit %d)", r.code) }

// wantsJSON reports JSON output asked for among the arguments, before any "--": for errors
// found before the flags could be parsed.
func wantsJSON(args []string) bool {
	for i, a := range args {
		switch a {
		case "--":
			return false
		case "--json", "-json", "--json=true", "-json=true",
			"-ojson", "-o=json", "--output=json", "-ondjson", "-o=ndjson", "--output=ndjson":
			return true
		case "-o", "--output", "-output":
			if i+1 < len(args) && (args[i+1] == "json" || args[i+1] == "ndjson") {
				return true
			}
		}
	}
	return false
}

// execute builds the command tree and runs what args ask for.
func (a *app) execute(args []string) error {
	root := a.rootCommand()
	root.SetArgs(goStyleFlags(root, args))
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetIn(a.stdin)
	return root.ExecuteContext(a.ctx)
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:               "queenctl",
		Short:             "administer a Queen broker: dead letters, seeks, queues and consumer groups",
		Version:           clientVersion(),
		Args:              cobra.ArbitraryArgs,
		SilenceErrors:     true,
		SilenceUsage:      true,
		PersistentPreRunE: func(*cobra.Command, []string) error { return a.resolveGlobals() },
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				fmt.Fprint(a.stderr, topUsage)
				return usageError{msg: "no command given"}
			}
			return unknownCommand(cmd, args[0])
		},
	}
	root.SetVersionTemplate("queenctl {{.Version}}\n")
	root.SetHelpFunc(a.help)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		if !cmd.HasParent() {
			return usageError{msg: err.Error()}
		}
		name := commandName(cmd)
		return usageError{msg: name + ": " + err.Error(), command: name}
	})
	// "-f" is tail's follow flag and "-h" help's: their old long forms "--f" and "--h" still
	// mean --follow and --help.
	root.SetGlobalNormalizationFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		switch name {
		case "f":
			return "follow"
		case "h":
			return "help"
		}
		return pflag.NormalizedName(name)
	})
	a.addGlobalFlags(root)

	dlq := a.group(root, "dlq", "dead letters: list, show, replay and delete them")
	queue := a.group(root, "queue", "queues: list, show, configure and delete them")
	group := a.group(root, "group", "consumer groups: list, show and delete them")
	messages := a.group(root, "messages", "stored messages: peek at them")

	a.statusCommand(root)
	a.queueListCommand(queue)
	a.queueShowCommand(queue)
	a.queueConfigureCommand(queue)
	a.queueDeleteCommand(queue)
	a.groupListCommand(group)
	a.groupShowCommand(group)
	a.groupDeleteCommand(group)
	a.lagCommand(root)
	a.messagesPeekCommand(messages)
	a.tailCommand(root)
	a.pushCommand(root)
	a.pingCommand(root)
	a.versionCommand(root)
	a.dlqListCommand(dlq)
	a.dlqShowCommand(dlq)
	a.dlqReplayCommand(dlq)
	a.dlqDeleteCommand(dlq)
	a.seekCommand(root)
	return root
}

// group adds a command that only holds subcommands ("dlq", "queue", ...).
func (a *app) group(root *cobra.Command, name, short string) *cobra.Command {
	g := &cobra.Command{
		Use:         name,
		Short:       short,
		Args:        cobra.ArbitraryArgs,
		Annotations: map[string]string{groupAnnotation: "true"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{msg: name + ": missing subcommand (see queenctl --help)"}
			}
			return unknownCommand(cmd, args[0])
		},
	}
	root.AddCommand(g)
	return g
}

// groupAnnotation marks the commands that only hold subcommands: their help is the overview.
const groupAnnotation = "queenctl-group"

// unknownCommand refuses a command name, suggesting the nearest ones.
func unknownCommand(parent *cobra.Command, name string) error {
	full := strings.TrimSpace(commandName(parent) + " " + name)
	msg := fmt.Sprintf("unknown command %q (see queenctl --help)", full)
	if s := parent.SuggestionsFor(name); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return usageError{msg: msg}
}

// commandName is a command's path without "queenctl": "dlq list".
func commandName(cmd *cobra.Command) string {
	return strings.TrimSpace(strings.TrimPrefix(cmd.CommandPath(), "queenctl"))
}

// help prints the overview for queenctl and its command groups, and a command's own usage,
// about and flags for the others.
func (a *app) help(cmd *cobra.Command, _ []string) {
	w := cmd.OutOrStdout()
	if !cmd.HasParent() || cmd.Annotations[groupAnnotation] != "" {
		fmt.Fprint(w, topUsage)
		return
	}
	about := cmd.Long
	if about == "" {
		about = cmd.Short
	}
	fmt.Fprintf(w, "Usage: %s\n\n%s\n", cmd.UseLine(), strings.TrimSpace(about))
	if cmd.HasAvailableSubCommands() {
		fmt.Fprintln(w, "\nCommands:")
		for _, sub := range cmd.Commands() {
			if sub.IsAvailableCommand() {
				fmt.Fprintf(w, "  %-12s %s\n", sub.Name(), sub.Short)
			}
		}
	}
	if local := cmd.LocalFlags().FlagUsages(); local != "" {
		fmt.Fprintf(w, "\nFlags:\n%s", local)
	}
	if inherited := cmd.InheritedFlags().FlagUsages(); inherited != "" {
		fmt.Fprintf(w, "\nGlobal flags:\n%s", inherited)
	}
}
