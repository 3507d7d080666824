package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

var usersGVR = v1alpha1.GroupVersion.WithResource(v1alpha1.UserResource)

// users are the MemgraphUsers of cluster in the session's namespace, by name; none when the
// MemgraphUser CRD is not installed.
func (s *session) users(ctx context.Context, cluster string) ([]v1alpha1.MemgraphUser, error) {
	list, err := s.client.Resource(usersGVR).Namespace(s.namespace).List(ctx, listAll)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("MemgraphUsers of %s/%s: %w", s.namespace, cluster, err)
	}
	var out []v1alpha1.MemgraphUser
	for _, item := range list.Items {
		var u v1alpha1.MemgraphUser
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(item.Object, &u); err != nil {
			return nil, err
		}
		if u.Spec.Cluster == cluster {
			out = append(out, u)
		}
	}
	slices.SortFunc(out, func(a, b v1alpha1.MemgraphUser) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// printUsers writes the status command's Users section: each MemgraphUser of the cluster with
// its Memgraph user, phase, roles, privileges in force, Secret and why it is not Ready.
func printUsers(w io.Writer, users []v1alpha1.MemgraphUser) error {
	fmt.Fprintln(w, "\nUsers:")
	if len(users) == 0 {
		fmt.Fprintln(w, "  none")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  NAME\tUSERNAME\tPHASE\tROLES\tPRIVILEGES\tSECRET\tMESSAGE")
	for _, u := range users {
		st := u.Status
		msg := ""
		if c := apimeta.FindStatusCondition(st.Conditions, "Ready"); c != nil && c.Status != metav1.ConditionTrue {
			msg = c.Reason + ": " + c.Message
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", u.Name, dash(u.Username()), dash(string(st.Phase)),
			dash(strings.Join(st.Roles, ",")), dash(strings.Join(st.Privileges, ",")), u.PasswordSecretName(), dash(msg))
	}
	return tw.Flush()
}

// rotatePasswordCommand asks the hook for a new generated password of a MemgraphUser: it sets the
// annotation memgraph.com/rotate-password to the current time, which the hook answers with a new
// password in the user's <name>-credentials Secret and SET PASSWORD on the MAIN.
func (p *plugin) rotatePasswordCommand() *cobra.Command {
	var wait, dryRun bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "rotate-password USER",
		Short: "Generate a new password for a MemgraphUser (annotation memgraph.com/rotate-password)",
		Args:  cobra.ExactArgs(1),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			return p.completeNames(cmd, args, usersGVR)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := p.open()
			if err != nil {
				return err
			}
			return s.rotatePassword(cmd.Context(), args[0], time.Now().UTC().Format(time.RFC3339Nano), dryRun, wait, timeout)
		},
	}
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the new password is in force")
	cmd.Flags().DurationVar(&timeout, "timeout", 2*time.Minute, "how long --wait waits")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the kubectl command that asks for the rotation, and change nothing")
	return cmd
}

func (s *session) user(ctx context.Context, name string) (*v1alpha1.MemgraphUser, error) {
	raw, err := s.client.Resource(usersGVR).Namespace(s.namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("MemgraphUser %s/%s: %w", s.namespace, name, err)
	}
	var u v1alpha1.MemgraphUser
	return &u, runtime.DefaultUnstructuredConverter.FromUnstructured(raw.Object, &u)
}

// rotatePassword annotates MemgraphUser name with request and, with wait, follows it until the
// user's status records a password version other than the one it had, Ready.
func (s *session) rotatePassword(ctx context.Context, name, request string, dryRun, wait bool, timeout time.Duration) error {
	u, err := s.user(ctx, name)
	if err != nil {
		return err
	}
	if ref := u.Spec.PasswordSecret; ref != nil {
		return fmt.Errorf("memgraphuser %s takes its password from Secret %s (spec.passwordSecret): change its key password, "+
			"and the hook sets the new password within one sync", name, ref.Name)
	}
	if dryRun {
		fmt.Fprintf(s.out, "# rotate-password (dry run, nothing applied)\nkubectl annotate memgraphuser/%s %s=%s --overwrite -n %s\n",
			name, v1alpha1.AnnotationRotatePassword, request, s.namespace)
		return nil
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, v1alpha1.AnnotationRotatePassword, request)
	if _, err := s.client.Resource(usersGVR).Namespace(s.namespace).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("annotate MemgraphUser %s/%s: %w", s.namespace, name, err)
	}
	fmt.Fprintf(s.out, "memgraphuser.memgraph.com/%s annotated: %s=%s\n", name, v1alpha1.AnnotationRotatePassword, request)
	if !wait {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	before := u.Status.AppliedPasswordVersion
	for {
		u, err := s.user(ctx, name)
		if err != nil {
			return err
		}
		if v := u.Status.AppliedPasswordVersion; v != before && v != "" && u.Status.Phase == v1alpha1.UserReady {
			fmt.Fprintf(s.out, "memgraphuser/%s: the new password of Secret %s is in force (%s)\n", name, u.PasswordSecretName(), v)
			return nil
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("memgraphuser/%s: the new password is not in force after %s (phase %s); the rotation stays requested", name, timeout, u.Status.Phase)
			}
			return ctx.Err()
		case <-time.After(s.poll):
		}
	}
}
