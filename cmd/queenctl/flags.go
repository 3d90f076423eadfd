package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

const (
	defaultServer  = "http://127.0.0.1:6632"
	defaultTimeout = 10 * time.Second
)

// globalFlags are accepted before the command and by every subcommand. server and token
// default to "" so that flag help never prints the token; resolution happens in connect.
type globalFlags struct {
	server, token, context string
	output                 string
	json                   bool
	timeout                time.Duration
}

func (a *app) addGlobalFlags(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&a.global.server, "server", "", "broker URL (default $QUEEN_URL, else the context's, else "+defaultServer+")")
	f.StringVar(&a.global.token, "token", "", "bearer token (default $QUEEN_TOKEN, else the context's)")
	f.StringVar(&a.global.context, "context", "", "broker and token from the config file (default $QUEEN_CONTEXT, else its current-context)")
	f.StringVarP(&a.global.output, "output", "o", "", "output format: table, json, ndjson or yaml (default table)")
	f.BoolVar(&a.global.json, "json", false, "print JSON instead of a table (the same as -o json)")
	f.DurationVar(&a.global.timeout, "timeout", defaultTimeout, "how long each request waits for the broker's answer (0: no limit)")
	_ = root.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(
		[]string{"table", "json", "ndjson", "yaml"}, cobra.ShellCompDirectiveNoFileComp))
	_ = root.RegisterFlagCompletionFunc("context", a.completeContexts)
}

// resolveGlobals checks the global flags once they are parsed, before the command runs.
func (a *app) resolveGlobals() error {
	out := strings.ToLower(a.global.output)
	switch {
	case a.global.json && out != "" && out != string(formatJSON):
		return usageError{msg: fmt.Sprintf("give --json or -o %s, not both", a.global.output)}
	case a.global.json:
		a.format = formatJSON
	case out == "":
		a.format = formatTable
	default:
		switch f := format(out); f {
		case formatTable, formatJSON, formatNDJSON, formatYAML:
			a.format = f
		default:
			return usageError{msg: fmt.Sprintf("-o %q: the output format must be table, json, ndjson or yaml", a.global.output)}
		}
	}
	if a.global.timeout < 0 {
		return usageError{msg: fmt.Sprintf("--timeout %s: must not be negative (0: no limit)", a.global.timeout)}
	}
	return nil
}

// goStyleFlags rewrites the single-dash long flags of Go's flag package (-json, -server URL,
// -dry-run), which queenctl accepted before it moved to POSIX flags, into their double-dash
// form, so that scripts written then keep working. The value of a flag is left as it is
// ("--to -1h"), and so is everything after "--".
func goStyleFlags(root *cobra.Command, args []string) []string {
	takesValue := map[string]bool{} // long names, and shorthands as "-o"
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		record := func(f *pflag.Flag) {
			value := f.NoOptDefVal == ""
			takesValue[f.Name] = value
			if f.Shorthand != "" {
				takesValue["-"+f.Shorthand] = value
			}
		}
		c.Flags().VisitAll(record)
		c.PersistentFlags().VisitAll(record)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	// cobra adds these two when it runs; --f and --h are old spellings, normalized to the new.
	for _, name := range []string{"help", "-h", "version", "f", "h"} {
		takesValue[name] = false
	}

	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		arg := args[i]
		out = append(out, arg)
		switch {
		case arg == "--":
			return append(out, args[i+1:]...)
		case strings.HasPrefix(arg, "--"):
			name, _, hasValue := strings.Cut(arg[2:], "=")
			if takesValue[name] && !hasValue && i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
		case len(arg) == 2 && arg[0] == '-':
			if takesValue[arg] && i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
		case len(arg) > 2 && arg[0] == '-':
			name, _, hasValue := strings.Cut(arg[1:], "=")
			value, known := takesValue[name]
			if !known {
				continue // a shorthand with its value attached ("-ojson"), or unknown
			}
			out[len(out)-1] = "-" + arg
			if value && !hasValue && i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
		}
	}
	return out
}

// command is one subcommand being built: its cobra command, and the app it runs in.
type command struct {
	app  *app
	cmd  *cobra.Command
	name string // "dlq list"
}

// command adds a subcommand under parent. use is its name and synopsis ("list --queue Q"),
// about what its help says it does (its first line lists it under its parent).
func (a *app) command(parent *cobra.Command, use, about string) *command {
	short, _, _ := strings.Cut(about, "\n")
	cmd := &cobra.Command{Use: use, Short: strings.TrimSuffix(short, "."), Long: about,
		DisableFlagsInUseLine: true, Args: cobra.ArbitraryArgs}
	parent.AddCommand(cmd)
	return &command{app: a, cmd: cmd, name: commandName(cmd)}
}

func (c *command) flags() *pflag.FlagSet { return c.cmd.Flags() }

// flagSet reports whether the named flag was given on the command line.
func (c *command) flagSet(name string) bool { return c.cmd.Flags().Changed(name) }

func (c *command) usagef(format string, args ...any) error {
	return usageError{msg: fmt.Sprintf(format, args...), command: c.name}
}

// noArgs makes run the command, which takes flags only.
func (c *command) noArgs(run func() error) {
	c.cmd.RunE = func(_ *cobra.Command, args []string) error {
		if len(args) > 0 {
			return c.usagef("%s takes no arguments, got %q", c.name, args[0])
		}
		return run()
	}
}

// oneArg makes run the command, which takes exactly one argument, a what ("queue name").
func (c *command) oneArg(what string, run func(arg string) error) {
	c.cmd.RunE = func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return c.usagef("%s: give exactly one %s, got %d (%q)", c.name, what, len(args), args)
		}
		return run(args[0])
	}
}

// anyArgs makes run the command, which checks its arguments itself.
func (c *command) anyArgs(run func(args []string) error) {
	c.cmd.RunE = func(_ *cobra.Command, args []string) error { return run(args) }
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}
