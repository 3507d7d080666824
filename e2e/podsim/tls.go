package podsim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
)

// ProjectionDelay is how long after a Secret changes the files a running Pod sees change too:
// the kubelet updates a mounted Secret only on its next sync of the Pod (about a minute by
// default; shorter here, so tests stay short).
const ProjectionDelay = 5 * time.Second

// tlsFlags are the TLS flags whose files Memgraph reads, each projected from a Secret key.
var tlsFlags = []string{"--bolt-cert-file", "--bolt-key-file", "--cluster-cert-file", "--cluster-key-file", "--cluster-ca-file"}

// projection is what the Pod's TLS flags name, read through the Pod's own volumes and mounts as
// the kubelet would mount them: flag → the Secret key's content. A Secret or key that is not
// there is an error: such a Pod could not start, so no instance answers for it (the next
// reconcile tries again).
func (p *Pods) projection(pod *corev1.Pod) (map[string][]byte, error) {
	if len(pod.Spec.Containers) == 0 {
		return nil, nil
	}
	c := pod.Spec.Containers[0]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out := map[string][]byte{}
	for _, flag := range tlsFlags {
		file := flagValue(c.Args, flag)
		if file == "" {
			continue
		}
		data, err := p.mountedSecretFile(ctx, pod, c, file)
		if err != nil {
			return nil, err
		}
		out[flag] = data
	}
	return out, nil
}

// project writes the projection into the Pod's own directory (its files at the paths the flags
// name, under p.root/<host>) and returns the files as the simulated instance reads them.
func (p *Pods) project(host string, pod *corev1.Pod, files map[string][]byte) (sim.TLSFiles, error) {
	named := map[string]string{}
	for flag, data := range files {
		local := filepath.Join(p.root, host, filepath.FromSlash(flagValue(pod.Spec.Containers[0].Args, flag)))
		if err := os.MkdirAll(filepath.Dir(local), 0o700); err != nil {
			return sim.TLSFiles{}, err
		}
		if err := os.WriteFile(local, data, 0o600); err != nil {
			return sim.TLSFiles{}, err
		}
		named[flag] = local
	}
	return sim.TLSFiles{BoltCert: named["--bolt-cert-file"], BoltKey: named["--bolt-key-file"],
		ClusterCert: named["--cluster-cert-file"], ClusterKey: named["--cluster-key-file"], ClusterCA: named["--cluster-ca-file"]}, nil
}

func digest(files map[string][]byte) string {
	h := sha256.New()
	for _, flag := range tlsFlags {
		h.Write([]byte(flag))
		h.Write(files[flag])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// mountAtStart projects the Pod's TLS files as the kubelet does when it starts the Pod, and
// records what it projected on in.
func (p *Pods) mountAtStart(host string, pod *corev1.Pod, in *instance) (sim.TLSFiles, error) {
	files, err := p.projection(pod)
	if err != nil {
		return sim.TLSFiles{}, err
	}
	in.projected, in.changedAt = digest(files), time.Time{}
	return p.project(host, pod, files)
}

// refresh is the kubelet's sync of a running Pod's Secret volumes: a Secret whose content
// changed reaches the Pod's files ProjectionDelay after the change was first seen.
func (p *Pods) refresh(host string, pod *corev1.Pod, in *instance) {
	files, err := p.projection(pod)
	if err != nil || len(files) == 0 {
		return
	}
	switch d := digest(files); {
	case d == in.projected:
		in.changedAt = time.Time{}
	case in.changedAt.IsZero():
		in.changedAt = time.Now()
	case time.Since(in.changedAt) >= ProjectionDelay:
		if _, err := p.project(host, pod, files); err != nil {
			p.record(host, "projecting the TLS files failed: "+err.Error())
			return
		}
		in.projected, in.changedAt = d, time.Time{}
		p.record(host, "projected the changed TLS Secret")
	}
}

// mountedSecretFile reads what the container would find at file: the Secret volume mounted at
// its directory, the key projected to its name.
func (p *Pods) mountedSecretFile(ctx context.Context, pod *corev1.Pod, c corev1.Container, file string) ([]byte, error) {
	dir, name := path.Split(file)
	dir = strings.TrimSuffix(dir, "/")
	for _, m := range c.VolumeMounts {
		if m.MountPath != dir {
			continue
		}
		for _, v := range pod.Spec.Volumes {
			if v.Name != m.Name || v.Secret == nil {
				continue
			}
			key := name
			if len(v.Secret.Items) > 0 {
				key = ""
				for _, it := range v.Secret.Items {
					if it.Path == name {
						key = it.Key
					}
				}
			}
			s, err := p.client.CoreV1().Secrets(pod.Namespace).Get(ctx, v.Secret.SecretName, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("pod %s: volume %s: %w", pod.Name, v.Name, err)
			}
			data, ok := s.Data[key]
			if key == "" || !ok {
				return nil, fmt.Errorf("pod %s: Secret %s has nothing for %s", pod.Name, s.Name, file)
			}
			return data, nil
		}
	}
	return nil, fmt.Errorf("pod %s: no Secret volume is mounted at %s", pod.Name, dir)
}

func flagValue(args []string, flag string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v
		}
	}
	return ""
}
