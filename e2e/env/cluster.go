package env

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"
)

// kwokStages are the Stage files (relative to kwok's kustomize/stage) that make the fake node
// Ready with lease heartbeats, Pods Running/Ready once their process runs (gateOnProcess),
// deleted Pods go away, and PVCs bind.
var kwokStages = []string{
	"node/fast/node-initialize.yaml",
	"node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
	"pod/fast/pod-ready.yaml",
	"pod/fast/pod-complete.yaml",
	"pod/fast/pod-delete.yaml",
	"volume/fast/pvc-provision.yaml",
	"volume/fast/pv-bind.yaml",
	"volume/fast/pvc-delete.yaml",
	"volume/fast/pv-delete.yaml",
}

// httpOK is a health probe: GET url through client answers 200.
func httpOK(client *http.Client, url string) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// writeKubeconfig writes a kubeconfig for one identity with everything embedded.
func writeKubeconfig(path, server string, ca []byte, id keyPair) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos["e2e"] = &clientcmdapi.AuthInfo{ClientCertificateData: id.CertPEM, ClientKeyData: id.KeyPEM}
	cfg.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "e2e", Namespace: "default"}
	cfg.CurrentContext = "e2e"
	return clientcmd.WriteToFile(*cfg, path)
}

func (e *Env) connect(ctx context.Context, p *pki, server string) error {
	e.Kubeconfig = filepath.Join(e.Dir, "admin.kubeconfig")
	if err := writeKubeconfig(e.Kubeconfig, server, p.CA.CertPEM, p.Admin); err != nil {
		return err
	}
	e.Config = &rest.Config{
		Host: server,
		TLSClientConfig: rest.TLSClientConfig{
			CAData: p.CA.CertPEM, CertData: p.Admin.CertPEM, KeyData: p.Admin.KeyPEM,
		},
		QPS:   200,
		Burst: 400,
	}
	var err error
	if e.Client, err = kubernetes.NewForConfig(e.Config); err != nil {
		return err
	}
	if e.Dynamic, err = dynamic.NewForConfig(e.Config); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	return poll(ctx, "kube-apiserver /readyz", e.apiserver, 200*time.Millisecond, func() error {
		body, err := e.Client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			return fmt.Errorf("%w: %s", err, bytes.TrimSpace(body))
		}
		return nil
	})
}

func (e *Env) startControllers(p *pki, files map[string]string, server string, kcmPort, schedPort, kwokPort int, stageDir string) error {
	kubeconfigs := map[string]keyPair{"kcm": p.KCM, "scheduler": p.Scheduler, "kwok": p.Kwok}
	paths := map[string]string{}
	for name, id := range kubeconfigs {
		paths[name] = filepath.Join(e.Dir, name+".kubeconfig")
		if err := writeKubeconfig(paths[name], server, p.CA.CertPEM, id); err != nil {
			return err
		}
	}
	kcm := []string{
		"--kubeconfig=" + paths["kcm"],
		"--authentication-kubeconfig=" + paths["kcm"],
		"--authorization-kubeconfig=" + paths["kcm"],
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(kcmPort),
		"--controllers=*",
		"--leader-elect=false",
		"--use-service-account-credentials=true",
		"--service-account-private-key-file=" + files["sa.key"],
		"--root-ca-file=" + files["ca.crt"],
		"--cluster-signing-cert-file=" + files["ca.crt"],
		"--cluster-signing-key-file=" + files["ca.key"],
		"--cert-dir=" + filepath.Join(e.Dir, "kcm-certs"),
		"--v=2", // the StatefulSet controller says which pod it deletes for an update, and why
	}
	if err := e.startController("kube-controller-manager", "https://127.0.0.1:"+strconv.Itoa(kcmPort)+"/healthz", kcm, restartHooks{}); err != nil {
		return err
	}
	scheduler := []string{
		"--kubeconfig=" + paths["scheduler"],
		"--authentication-kubeconfig=" + paths["scheduler"],
		"--authorization-kubeconfig=" + paths["scheduler"],
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(schedPort),
		"--leader-elect=false",
		"--cert-dir=" + filepath.Join(e.Dir, "scheduler-certs"),
	}
	if err := e.startController("kube-scheduler", "https://127.0.0.1:"+strconv.Itoa(schedPort)+"/healthz", scheduler, restartHooks{}); err != nil {
		return err
	}
	stages, err := concatStages(stageDir, filepath.Join(e.Dir, "kwok-stages.yaml"))
	if err != nil {
		return err
	}
	kwok := []string{
		"--kubeconfig=" + paths["kwok"],
		"--config=" + stages,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		"--cidr=" + podCIDR,
		"--node-ip=127.0.0.1",
		// The heartbeat-with-lease stage refreshes node status only every ~10 minutes and relies
		// on the node Lease for liveness; without a lease the node lifecycle controller marks
		// the node (and every Pod on it) NotReady after its 50 s grace period.
		"--node-lease-duration-seconds=40",
		"--server-address=127.0.0.1:" + strconv.Itoa(kwokPort),
	}
	return e.startController("kwok", "http://127.0.0.1:"+strconv.Itoa(kwokPort)+"/healthz", kwok, e.kwokRestartHooks())
}

// ProcessAnnotation is what runs a Pod's process (podsim) writes on the Pod, its UID as the
// value, once the process runs. kwok's stage makes a Pod Running and Ready only then, as a
// kubelet does once the container runs and its probe passes: otherwise kwok marks a replacement
// Pod Ready at once, and the hook could act on a member whose new process is not up yet.
const ProcessAnnotation = "e2e.memgraph-hooks/process"

const podReadyStage = "pod/fast/pod-ready.yaml"

// gateOnProcess adds ProcessAnnotation to the selector of kwok's pod-ready Stage.
func gateOnProcess(stage []byte) ([]byte, error) {
	var obj map[string]any
	if err := yaml.Unmarshal(stage, &obj); err != nil {
		return nil, err
	}
	spec, _ := obj["spec"].(map[string]any)
	selector, _ := spec["selector"].(map[string]any)
	exprs, ok := selector["matchExpressions"].([]any)
	if !ok {
		return nil, fmt.Errorf("no spec.selector.matchExpressions")
	}
	selector["matchExpressions"] = append(exprs, map[string]any{
		"key": fmt.Sprintf(".metadata.annotations[%q]", ProcessAnnotation), "operator": "Exists",
	})
	return yaml.Marshal(obj)
}

// concatStages joins kwok's Stage files into one multi-document config file. It holds only
// Stage objects: kwok v0.8.0 does not default a KwokConfiguration loaded from a file.
func concatStages(stageDir, out string) (string, error) {
	var buf bytes.Buffer
	for _, rel := range kwokStages {
		data, err := os.ReadFile(filepath.Join(stageDir, rel))
		if err != nil {
			return "", fmt.Errorf("kwok stage: %w", err)
		}
		if rel == podReadyStage {
			if data, err = gateOnProcess(data); err != nil {
				return "", fmt.Errorf("kwok stage %s: %w", rel, err)
			}
		}
		buf.WriteString("---\n")
		buf.Write(bytes.TrimSpace(data))
		buf.WriteString("\n")
	}
	return out, os.WriteFile(out, buf.Bytes(), 0o644)
}

// seed creates the fake Node and the default StorageClass, then waits until the node is Ready
// and the default ServiceAccount exists (Pods are refused before that).
func (e *Env) seed(ctx context.Context, stageDir string) error {
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	if _, err := e.Client.CoreV1().Nodes().Create(ctx, fakeNode(NodeName), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create node: %w", err)
	}
	data, err := os.ReadFile(filepath.Join(stageDir, "volume/fast/storage-class.yaml"))
	if err != nil {
		return err
	}
	var sc storagev1.StorageClass
	if err := yaml.UnmarshalStrict(data, &sc); err != nil {
		return fmt.Errorf("kwok storage class: %w", err)
	}
	if _, err := e.Client.StorageV1().StorageClasses().Create(ctx, &sc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create storage class: %w", err)
	}
	if err := e.waitNodeReady(ctx, NodeName); err != nil {
		return err
	}
	return e.WaitServiceAccount(ctx, "default")
}

// AddNode adds another fake Node that kwok manages like NodeName and waits until it is Ready;
// the caller deletes it when done.
func (e *Env) AddNode(ctx context.Context, name string) error {
	if _, err := e.Client.CoreV1().Nodes().Create(ctx, fakeNode(name), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create node %s: %w", name, err)
	}
	return e.waitNodeReady(ctx, name)
}

// fakeNode is a Node kwok manages (its annotation selector) with generous capacity.
func fakeNode(name string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
			Labels: map[string]string{
				"type": "kwok", "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
				"kubernetes.io/arch": "amd64", "kubernetes.io/role": "agent",
			},
		},
		Status: corev1.NodeStatus{
			Capacity:    generous(),
			Allocatable: generous(),
		},
	}
}

func (e *Env) waitNodeReady(ctx context.Context, name string) error {
	return poll(ctx, "fake node Ready", nil, 200*time.Millisecond, func() error {
		if err := e.CheckAlive(); err != nil {
			return err
		}
		n, err := e.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("node %s not Ready", name)
	})
}

func generous() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("64"),
		corev1.ResourceMemory: resource.MustParse("512Gi"),
		corev1.ResourcePods:   resource.MustParse("500"),
	}
}

// WaitServiceAccount waits for the namespace's default ServiceAccount.
func (e *Env) WaitServiceAccount(ctx context.Context, namespace string) error {
	return poll(ctx, "default ServiceAccount in "+namespace, nil, 100*time.Millisecond, func() error {
		_, err := e.Client.CoreV1().ServiceAccounts(namespace).Get(ctx, "default", metav1.GetOptions{})
		return err
	})
}

// CreateNamespace creates a namespace and waits until Pods can be created in it.
func (e *Env) CreateNamespace(ctx context.Context, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := e.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return e.WaitServiceAccount(ctx, name)
}
