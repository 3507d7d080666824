// Command kubectl-memgraph is a kubectl plugin (kubectl memgraph …) for MemgraphClusters: status
// and the day-2 operations of docs/operations.md — switchover, pause and resume, hibernate and
// wake, restart — backup, which creates a MemgraphBackup (docs/backup.md), rebuild, which
// replaces a replica's volume, and report, a support archive. The day-2 verbs change only the
// cluster's declaration (a spec field or an annotation), exactly as the docs do by hand, and the
// hook converges to it; --wait follows the conditions, --dry-run prints the patch and the kubectl
// command instead of applying it. rebuild also deletes the replica's data claim and pod, with the
// user's own credentials, once the hook has unregistered it.
//
// Install: go install github.com/memgraph-hooks/memgraph-hooks/cmd/kubectl-memgraph@latest
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/memgraph-hooks/memgraph-hooks/internal/version"
)

func main() {
	os.Exit(exitCode(newRoot(os.Stdout, os.Stderr, nil).Execute(), os.Stderr))
}

// usageError is a command line the plugin cannot run: a flag or argument it does not know, or
// one missing.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// exitCode reports err and returns the exit code: 2 for a command line that cannot run (with a
// pointer to --help), 1 for a failure while running, 0 for none.
func exitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil:
		return 0
	// cobra reports a subcommand it does not know with this plain error.
	case errors.As(err, new(usageError)), strings.HasPrefix(err.Error(), "unknown command "):
		fmt.Fprintf(stderr, "error: %v\nRun 'kubectl memgraph --help' for usage.\n", err)
		return 2
	}
	fmt.Fprintln(stderr, "error:", err)
	return 1
}

// usageArgs wraps an argument validator so that its refusals are usage errors.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}

// newRoot builds the command tree. connect, when not nil, replaces the kubeconfig's client (tests).
func newRoot(out, errOut io.Writer, connect func() (dynamic.Interface, string, error)) *cobra.Command {
	return newRootWith(out, errOut, connect, nil)
}

// newRootWith is newRoot whose log reader, when not nil, replaces the kubeconfig's (tests).
func newRootWith(out, errOut io.Writer, connect func() (dynamic.Interface, string, error), logs func() (podLogs, error)) *cobra.Command {
	flags := genericclioptions.NewConfigFlags(true)
	root := &cobra.Command{
		Use:           "kubectl-memgraph",
		Short:         "Status and day-2 operations of MemgraphClusters",
		Long:          "kubectl memgraph shows a MemgraphCluster and changes its declaration the way docs/operations.md does by hand; the memgraph-hooks hook converges to it.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl memgraph"},
		Version:       version.Get().String(),
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.SetOut(out)
	root.SetErr(errOut)
	flags.AddFlags(root.PersistentFlags())
	if connect == nil {
		connect = func() (dynamic.Interface, string, error) {
			cfg, err := flags.ToRESTConfig()
			if err != nil {
				return nil, "", err
			}
			ns, _, err := flags.ToRawKubeConfigLoader().Namespace()
			if err != nil {
				return nil, "", err
			}
			client, err := dynamic.NewForConfig(cfg)
			return client, ns, err
		}
	}
	if logs == nil {
		logs = func() (podLogs, error) {
			cfg, err := flags.ToRESTConfig()
			if err != nil {
				return nil, err
			}
			client, err := kubernetes.NewForConfig(cfg)
			return clientsetLogs{client}, err
		}
	}
	p := &plugin{connect: connect, logs: logs, out: out}
	root.AddCommand(p.clusterCommand("status", "Members, conditions, rollout progress and the last operations",
		func(cmd *cobra.Command, s *session, name string) error {
			mgc, err := s.get(cmd.Context(), name)
			if err != nil {
				return err
			}
			pods, err := s.pods(cmd.Context(), name)
			if err != nil {
				return err
			}
			users, err := s.users(cmd.Context(), name)
			if err != nil {
				return err
			}
			if err := printStatus(out, mgc, pods, time.Now()); err != nil {
				return err
			}
			return printUsers(out, users)
		}))
	for _, v := range []struct{ verb, short string }{
		{"switchover", "Move MAIN to a caught-up data instance (spec.preferredMain)"},
		{"pause", "Stop the hook acting on the cluster (annotation memgraph.com/paused=true)"},
		{"resume", "Let the hook act again (remove memgraph.com/paused)"},
		{"hibernate", "Stop every pod, keep every volume and registration (spec.hibernate=true)"},
		{"wake", "Start a hibernated cluster again (spec.hibernate=false)"},
		{"restart", "Restart every pod the safe way, one at a time (annotation memgraph.com/restartedAt)"},
	} {
		root.AddCommand(p.verbCommand(v.verb, v.short))
	}
	root.AddCommand(p.backupCommand())
	root.AddCommand(p.rotatePasswordCommand())
	root.AddCommand(p.rebuildCommand())
	root.AddCommand(p.reportCommand())
	return root
}

// pollInterval is how often a waiting command reads the cluster again.
var pollInterval = time.Second

// plugin is what every command of the tree shares: the connection to the cluster and the output.
type plugin struct {
	connect func() (dynamic.Interface, string, error)
	logs    func() (podLogs, error)
	out     io.Writer
}

func (p *plugin) open() (*session, error) {
	client, ns, err := p.connect()
	if err != nil {
		return nil, err
	}
	return &session{client: client, namespace: ns, out: p.out, poll: pollInterval}, nil
}

// clusterCommand is a command on the one MemgraphCluster its argument names, completed from the
// clusters of the namespace; run gets a session open on that namespace.
func (p *plugin) clusterCommand(verb, short string, run func(cmd *cobra.Command, s *session, name string) error) *cobra.Command {
	return &cobra.Command{
		Use:               verb + " NAME",
		Short:             short,
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: p.complete,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := p.open()
			if err != nil {
				return err
			}
			return run(cmd, s, args[0])
		},
	}
}

// complete lists the namespace's MemgraphClusters for a command's one argument.
func (p *plugin) complete(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	return p.completeNames(cmd, args, clustersGVR)
}

// completeNames lists the names of the namespace's objects of gvr for a command's one argument.
func (p *plugin) completeNames(cmd *cobra.Command, args []string, gvr schema.GroupVersionResource) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	s, err := p.open()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	list, err := s.client.Resource(gvr).Namespace(s.namespace).List(cmd.Context(), listAll)
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var names []string
	for _, item := range list.Items {
		names = append(names, item.GetName())
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

// verbCommand is one day-2 verb: plan the change on the stored cluster, print it with --dry-run,
// else apply it and, with --wait, follow the cluster until it is done.
func (p *plugin) verbCommand(verb, short string) *cobra.Command {
	var to string
	var wait, dryRun bool
	var timeout time.Duration
	out := p.out
	cmd := p.clusterCommand(verb, short, func(cmd *cobra.Command, s *session, name string) error {
		ctx := cmd.Context()
		mgc, err := s.get(ctx, name)
		if err != nil {
			return err
		}
		c, err := plan(verb, mgc, to, time.Now())
		if err != nil {
			return fmt.Errorf("%s %s refused: %w", verb, name, err)
		}
		if dryRun {
			fmt.Fprintf(out, "# %s (dry run, nothing applied)\n%s -n %s\n", verb, c.Kubectl, s.namespace)
			return nil
		}
		patched, err := s.apply(ctx, c)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "memgraphcluster.memgraph.com/%s patched: %s\n", c.Cluster, c.Patch)
		if !wait {
			return nil
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		if err := s.wait(ctx, c, patched.GetGeneration()); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("%w; the change stays declared and the hook goes on converging", err)
			}
			return err
		}
		fmt.Fprintf(out, "%s %s: done\n", verb, c.Cluster)
		return nil
	})
	if verb == "switchover" {
		cmd.Flags().StringVar(&to, "to", "", "the data instance to hand MAIN to, instance_<n> (required)")
		cmd.PreRunE = func(*cobra.Command, []string) error {
			if to == "" {
				return usageError{errors.New("switchover needs --to, the data instance to hand MAIN to (instance_<n>)")}
			}
			return nil
		}
		_ = cmd.RegisterFlagCompletionFunc("to", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return []string{"instance_0", "instance_1", "instance_2"}, cobra.ShellCompDirectiveNoFileComp
		})
	}
	cmd.Flags().BoolVar(&wait, "wait", false, "follow the conditions until the change is done, printing progress")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "how long --wait waits")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the patch (as the kubectl command that applies it) and change nothing")
	return cmd
}
