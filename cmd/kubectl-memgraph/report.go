package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

var (
	servicesGVR = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	secretsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	eventsGVR   = schema.GroupVersionResource{Version: "v1", Resource: "events"}
	budgetsGVR  = schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}
)

// Redacted replaces every value of a Secret's data and stringData in a report.
const Redacted = "REDACTED"

// hookSelector selects the hook's pods (manifests/deployment.yaml).
const hookSelector = "app.kubernetes.io/name=memgraph-hooks"

// podLogs reads the tail of a container's log.
type podLogs interface {
	Tail(ctx context.Context, namespace, pod, container string, lines int64, previous bool) ([]byte, error)
}

// clientsetLogs reads logs through the API server, with the user's credentials.
type clientsetLogs struct{ client kubernetes.Interface }

func (c clientsetLogs) Tail(ctx context.Context, namespace, pod, container string, lines int64, previous bool) ([]byte, error) {
	return c.client.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container, TailLines: &lines, Previous: previous}).DoRaw(ctx)
}

// reportOptions are the report verb's flags.
type reportOptions struct {
	output        string
	hookNamespace string
	tail          int64
}

// reportCommand writes one archive a user can attach to a bug report.
func (p *plugin) reportCommand() *cobra.Command {
	var o reportOptions
	cmd := p.clusterCommand("report", "Write a support archive: the cluster, its children, pods, events, backups and logs, Secrets redacted",
		func(cmd *cobra.Command, s *session, name string) error {
			logs, err := p.logs()
			if err != nil {
				return err
			}
			path := o.output
			if path == "" {
				path = fmt.Sprintf("%s-report-%s.tar.gz", name, time.Now().UTC().Format("20060102-150405"))
			}
			var buf bytes.Buffer
			notes, err := s.report(cmd.Context(), &buf, name, logs, o)
			if err != nil {
				return err
			}
			if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
				return err
			}
			fmt.Fprintf(p.out, "wrote %s (%d bytes); every Secret's data is redacted\n", path, buf.Len())
			for _, n := range notes {
				fmt.Fprintf(p.out, "  not collected: %s\n", n)
			}
			return nil
		})
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "the archive to write (default <cluster>-report-<time>.tar.gz)")
	cmd.Flags().StringVar(&o.hookNamespace, "hook-namespace", "memgraph-hooks", "the namespace the hook runs in")
	cmd.Flags().Int64Var(&o.tail, "tail", 2000, "lines of each container's log")
	return cmd
}

// archive is the report under construction: its files, and what could not be collected.
type archive struct {
	tw    *tar.Writer
	now   time.Time
	notes []string
}

func (a *archive) add(name string, data []byte) error {
	hdr := &tar.Header{Name: "report/" + name, Mode: 0o600, Size: int64(len(data)), ModTime: a.now}
	if err := a.tw.WriteHeader(hdr); err != nil {
		return err
	}
	_, err := a.tw.Write(data)
	return err
}

// addObjects writes objects as one YAML stream, Secrets redacted and managedFields dropped.
func (a *archive) addObjects(name string, objects []unstructured.Unstructured) error {
	var b bytes.Buffer
	for _, o := range objects {
		raw, err := yaml.Marshal(scrub(o).Object)
		if err != nil {
			return err
		}
		b.WriteString("---\n")
		b.Write(raw)
	}
	return a.add(name, b.Bytes())
}

// scrub is a copy of o fit for a report: no managedFields and, for a Secret, every value of data
// and stringData replaced by Redacted (the keys stay: they say what the Secret holds), and the
// last-applied-configuration annotation, which repeats them, dropped.
func scrub(o unstructured.Unstructured) unstructured.Unstructured {
	c := *o.DeepCopy()
	unstructured.RemoveNestedField(c.Object, "metadata", "managedFields")
	if c.GetKind() != "Secret" {
		return c
	}
	for _, field := range []string{"data", "stringData"} {
		values, _, _ := unstructured.NestedMap(c.Object, field)
		for k := range values {
			values[k] = Redacted
		}
		if values != nil {
			_ = unstructured.SetNestedMap(c.Object, values, field)
		}
	}
	annotations := c.GetAnnotations()
	delete(annotations, corev1.LastAppliedConfigAnnotation)
	c.SetAnnotations(annotations)
	return c
}

// report writes the archive of cluster to w, and returns what could not be collected (a kind the
// user may not list, a log the API server does not serve): the rest is written regardless.
func (s *session) report(ctx context.Context, w io.Writer, cluster string, logs podLogs, o reportOptions) ([]string, error) {
	mgc, err := s.get(ctx, cluster)
	if err != nil {
		return nil, err
	}
	gz := gzip.NewWriter(w)
	a := &archive{tw: tar.NewWriter(gz), now: time.Now()}
	if err := s.collect(ctx, a, mgc, logs, o); err != nil {
		return nil, err
	}
	if len(a.notes) > 0 {
		if err := a.add("not-collected.txt", []byte(strings.Join(a.notes, "\n")+"\n")); err != nil {
			return nil, err
		}
	}
	if err := a.tw.Close(); err != nil {
		return nil, err
	}
	return a.notes, gz.Close()
}

func (s *session) collect(ctx context.Context, a *archive, mgc *unstructured.Unstructured, logs podLogs, o reportOptions) error {
	cluster := mgc.GetName()
	selector := metav1.FormatLabelSelector(&metav1.LabelSelector{MatchLabels: topology.PodSelector(cluster)})
	owned := func(u unstructured.Unstructured) bool {
		return slices.ContainsFunc(u.GetOwnerReferences(), func(r metav1.OwnerReference) bool { return r.UID == mgc.GetUID() })
	}
	list := func(gvr schema.GroupVersionResource, namespace, selector string, keep func(unstructured.Unstructured) bool) []unstructured.Unstructured {
		l, err := s.client.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			a.notes = append(a.notes, fmt.Sprintf("%s in %s: %v", gvr.Resource, namespace, err))
			return nil
		}
		var out []unstructured.Unstructured
		for _, item := range l.Items {
			if keep == nil || keep(item) {
				out = append(out, item)
			}
		}
		return out
	}
	var summary bytes.Buffer
	pods := list(podsGVR, s.namespace, selector, nil)
	typed, _ := typedPods(pods)
	if err := printStatus(&summary, mgc, typed, a.now); err != nil {
		fmt.Fprintf(&summary, "status: %v\n", err)
	}
	backups := list(backupsGVR, s.namespace, "", func(u unstructured.Unstructured) bool {
		c, _, _ := unstructured.NestedString(u.Object, "spec", "cluster")
		return c == cluster
	})
	schedules := list(schedulesGVR, s.namespace, "", func(u unstructured.Unstructured) bool {
		c, _, _ := unstructured.NestedString(u.Object, "spec", "backupTemplate", "cluster")
		return c == cluster
	})
	users := list(usersGVR, s.namespace, "", func(u unstructured.Unstructured) bool {
		c, _, _ := unstructured.NestedString(u.Object, "spec", "cluster")
		return c == cluster
	})
	referenced := map[string]bool{}
	for _, u := range slices.Concat([]unstructured.Unstructured{*mgc}, backups, schedules, users) {
		secretNames(u.Object["spec"], referenced)
	}
	files := []struct {
		name    string
		objects []unstructured.Unstructured
	}{
		{"memgraphcluster.yaml", []unstructured.Unstructured{*mgc}},
		{"statefulsets.yaml", list(statefulSetsGVR, s.namespace, "", owned)},
		{"services.yaml", list(servicesGVR, s.namespace, "", owned)},
		{"poddisruptionbudgets.yaml", list(budgetsGVR, s.namespace, "", owned)},
		{"secrets.yaml", list(secretsGVR, s.namespace, "", func(u unstructured.Unstructured) bool { return owned(u) || referenced[u.GetName()] })},
		{"pods.yaml", pods},
		{"persistentvolumeclaims.yaml", list(claimsGVR, s.namespace, selector, nil)},
		{"memgraphbackups.yaml", backups},
		{"memgraphscheduledbackups.yaml", schedules},
		{"memgraphusers.yaml", users},
	}
	involved := map[string]bool{}
	for _, f := range files {
		for _, u := range f.objects {
			involved[u.GetKind()+"/"+u.GetName()] = true
		}
	}
	events := list(eventsGVR, s.namespace, "", func(u unstructured.Unstructured) bool {
		kind, _, _ := unstructured.NestedString(u.Object, "involvedObject", "kind")
		name, _, _ := unstructured.NestedString(u.Object, "involvedObject", "name")
		return involved[kind+"/"+name]
	})
	files = append(files, struct {
		name    string
		objects []unstructured.Unstructured
	}{"events.yaml", events})
	if err := a.add("summary.txt", summary.Bytes()); err != nil {
		return err
	}
	for _, f := range files {
		if err := a.addObjects(f.name, f.objects); err != nil {
			return err
		}
	}
	hookPods := list(podsGVR, o.hookNamespace, hookSelector, nil)
	for _, group := range []struct {
		dir  string
		pods []unstructured.Unstructured
	}{{"logs/members", pods}, {"logs/hook", hookPods}} {
		if err := s.addLogs(ctx, a, group.dir, group.pods, logs, o.tail); err != nil {
			return err
		}
	}
	return nil
}

// addLogs writes the tail of every container's log of pods under dir/<pod>/, and the previous
// run's of a container that restarted.
func (s *session) addLogs(ctx context.Context, a *archive, dir string, pods []unstructured.Unstructured, logs podLogs, lines int64) error {
	typed, err := typedPods(pods)
	if err != nil {
		return err
	}
	for _, p := range typed {
		restarted := map[string]bool{}
		for _, cs := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
			restarted[cs.Name] = cs.RestartCount > 0
		}
		for _, c := range append(p.Spec.InitContainers, p.Spec.Containers...) {
			for _, previous := range []bool{false, true} {
				if previous && !restarted[c.Name] {
					continue
				}
				name := fmt.Sprintf("%s/%s/%s.log", dir, p.Name, c.Name)
				if previous {
					name = fmt.Sprintf("%s/%s/%s.previous.log", dir, p.Name, c.Name)
				}
				out, err := logs.Tail(ctx, p.Namespace, p.Name, c.Name, lines, previous)
				if err != nil {
					a.notes = append(a.notes, fmt.Sprintf("log %s: %v", name, err))
					continue
				}
				if err := a.add(name, out); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func typedPods(items []unstructured.Unstructured) ([]corev1.Pod, error) {
	out := make([]corev1.Pod, len(items))
	for i, item := range items {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(item.Object, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// secretNames adds to names every Secret a spec refers to: the value of a field called
// secretName or ending in SecretName, and the name of an object under a field ending in Secret.
func secretNames(v any, names map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, field := range v {
			switch ref := field.(type) {
			case string:
				if k == "secretName" || strings.HasSuffix(k, "SecretName") {
					names[ref] = true
				}
			case map[string]any:
				if name, ok := ref["name"].(string); ok && strings.HasSuffix(k, "Secret") {
					names[name] = true
				}
			}
			secretNames(field, names)
		}
	case []any:
		for _, item := range v {
			secretNames(item, names)
		}
	}
}
