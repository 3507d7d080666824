package podsim

import (
	"context"
	"crypto/tls"
	"fmt"
	"path"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// boltTLS is the TLS configuration the Pod's Memgraph would serve Bolt with: nil when its
// container has no --bolt-cert-file, otherwise the pair read from the Secret keys behind the
// files --bolt-cert-file and --bolt-key-file name, through the Pod's own volumes and mounts, as
// the kubelet would mount them. A Secret or key that is not there is an error: such a Pod could
// not start, so no instance answers for it (the next reconcile tries again).
func (p *Pods) boltTLS(pod *corev1.Pod) (*tls.Config, error) {
	if len(pod.Spec.Containers) == 0 {
		return nil, nil
	}
	c := pod.Spec.Containers[0]
	certFile, keyFile := flagValue(c.Args, "--bolt-cert-file"), flagValue(c.Args, "--bolt-key-file")
	if certFile == "" && keyFile == "" {
		return nil, nil
	}
	if certFile == "" || keyFile == "" {
		return nil, fmt.Errorf("pod %s sets only one of --bolt-cert-file and --bolt-key-file", pod.Name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	certPEM, err := p.mountedSecretFile(ctx, pod, c, certFile)
	if err != nil {
		return nil, err
	}
	keyPEM, err := p.mountedSecretFile(ctx, pod, c, keyFile)
	if err != nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("pod %s: Bolt certificate and key: %w", pod.Name, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
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
