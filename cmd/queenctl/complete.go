package main

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// Shell completion: cobra's completion command writes the scripts (completion bash, zsh, fish),
// and these complete what only the broker knows: queue and consumer-group names, asked of the
// broker the command line names, within a short bound so that a slow broker never hangs the
// shell. What cannot be asked completes to nothing.

// completionTimeout bounds the requests a completion makes.
const completionTimeout = 2 * time.Second

// names asks the broker for names with list, keeping those that start with prefix.
func (a *app) names(prefix string, list func(ctx context.Context, r *remote) ([]string, error)) ([]cobra.Completion, cobra.ShellCompDirective) {
	a.global.timeout = min(a.global.timeout, completionTimeout)
	if a.global.timeout == 0 {
		a.global.timeout = completionTimeout
	}
	r, err := a.connect()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	names, err := ask(r, func(ctx context.Context) ([]string, error) { return list(ctx, r) })
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, n := range names {
		if strings.HasPrefix(n, prefix) && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeQueues completes a flag's value with the broker's queue names.
func (a *app) completeQueues(_ *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return a.names(prefix, func(ctx context.Context, r *remote) ([]string, error) {
		qs, err := r.adm.Queues(ctx)
		names := make([]string, 0, len(qs))
		for _, q := range qs {
			names = append(names, q.Name)
		}
		return names, err
	})
}

// completeGroups completes a flag's value with the broker's consumer-group names.
func (a *app) completeGroups(_ *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return a.names(prefix, func(ctx context.Context, r *remote) ([]string, error) {
		gs, err := r.adm.ConsumerGroups(ctx)
		names := make([]string, 0, len(gs))
		for _, g := range gs {
			names = append(names, g.Name)
		}
		return names, err
	})
}

// queueArg completes a command's one argument, a queue name.
func (a *app) queueArg(cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return a.completeQueues(cmd, args, prefix)
}

// groupArg completes a command's one argument, a consumer-group name.
func (a *app) groupArg(cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return a.completeGroups(cmd, args, prefix)
}

// completeContexts completes --context with the config file's context names.
func (a *app) completeContexts(_ *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	for _, n := range a.contextNames() {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
