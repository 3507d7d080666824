package env

import (
	"context"
	"fmt"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// kwokUser is kwok's identity (its client certificate's common name, certs.go).
const kwokUser = "kwok"

const kwokDeletesPolicy = "e2e-kwok-finalizes-only-terminating-pods"

// kwokDeletesMessage is the policy's refusal, which guardKwokDeletes waits to see.
const kwokDeletesMessage = "kwok may delete only a Pod that is already being deleted"

// guardKwokDeletes makes kwok delete Pods as a kubelet does. A kubelet finalizes a terminating
// Pod with its UID as a precondition; kwok v0.8.0 deletes by name alone, and when it handled a
// deleted Pod twice its second delete removed the replacement the StatefulSet controller had
// just created under the same name (seen as a Pod deleted twice in one rolling update). This
// admission policy lets kwok delete only a Pod that already has a deletionTimestamp — every Pod
// its pod-delete stage means to delete, and never a fresh replacement. It returns once the API
// server enforces the policy.
func (e *Env) guardKwokDeletes(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	fail, deny := admissionv1.Fail, admissionv1.Deny
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: kwokDeletesPolicy},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Delete},
					Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
				},
			}}},
			MatchConditions: []admissionv1.MatchCondition{{Name: "kwok", Expression: fmt.Sprintf("request.userInfo.username == %q", kwokUser)}},
			Validations: []admissionv1.Validation{{
				Expression: "has(oldObject.metadata.deletionTimestamp)",
				Message:    kwokDeletesMessage + " (a kubelet deletes with the Pod's UID as a precondition)",
			}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: kwokDeletesPolicy},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName: kwokDeletesPolicy, ValidationActions: []admissionv1.ValidationAction{deny},
		},
	}
	policies := e.Client.AdmissionregistrationV1()
	if _, err := policies.ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create %s: %w", kwokDeletesPolicy, err)
	}
	if _, err := policies.ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create binding %s: %w", kwokDeletesPolicy, err)
	}
	return e.waitKwokDeletesGuarded(ctx)
}

// waitKwokDeletesGuarded asks, as kwok and in dry run, to delete a Pod that is not being deleted
// until the API server refuses with the policy's message; the probe Pod is then removed.
func (e *Env) waitKwokDeletesGuarded(ctx context.Context) error {
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-kwok-delete-probe", Namespace: metav1.NamespaceDefault},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "probe", Image: "probe"}},
			// Never scheduled: the probe must not run anywhere.
			NodeSelector: map[string]string{"e2e.memgraph-hooks/no-such-node": "true"},
		},
	}
	if _, err := e.Client.CoreV1().Pods(probe.Namespace).Create(ctx, probe, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create the kwok delete probe: %w", err)
	}
	defer e.Client.CoreV1().Pods(probe.Namespace).Delete(context.WithoutCancel(ctx), probe.Name, metav1.DeleteOptions{})
	asKwok := rest.CopyConfig(e.Config)
	asKwok.Impersonate = rest.ImpersonationConfig{UserName: kwokUser, Groups: []string{"system:masters"}}
	kwok, err := kubernetes.NewForConfig(asKwok)
	if err != nil {
		return err
	}
	return poll(ctx, "kwok's deletes guarded by "+kwokDeletesPolicy, nil, 200*time.Millisecond, func() error {
		err := kwok.CoreV1().Pods(probe.Namespace).Delete(ctx, probe.Name, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		switch {
		case apierrors.IsInvalid(err) || apierrors.IsForbidden(err):
			if strings.Contains(err.Error(), kwokDeletesMessage) {
				return nil
			}
			return err
		case err != nil:
			return err
		}
		return fmt.Errorf("kwok could still delete a Pod that was not being deleted")
	})
}
