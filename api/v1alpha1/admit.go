package v1alpha1

import (
	"encoding/json"
	"errors"

	"k8s.io/apimachinery/pkg/util/validation"
	kjson "sigs.k8s.io/json"
)

// MsgNamespace is the API server's own rule for a namespaced object's namespace.
const MsgNamespace = "metadata.namespace must be a namespace name: at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit"

// Admit decodes a MemgraphCluster from a hook request's parent the way the API server admits
// one, and returns it as the API server would store it, or an error naming every problem:
//
//   - DecodeCluster's checks (JSON object, apiVersion, kind, metadata.name and namespace, the
//     type of every field);
//   - the CRD's structural defaulting, on the JSON: an absent (or null) field gets its default,
//     while an explicit zero stays zero and is judged as written, so "dataInstances: 0" is
//     refused rather than read as the default 2;
//   - the CRD's OpenAPI schema and the Go twins of its CEL rules, and the namespace's own rule.
//
// The result needs no Defaulted: every field with a default is set. When only the rules are
// broken, the error is a *ValidationError naming the object; when the spec does not even decode,
// one that does not.
func Admit(raw []byte) (*MemgraphCluster, error) {
	mc, _, err := admitParent(raw, false)
	return mc, err
}

// Withheld are the fields AdmitWithholding took out of a spec instead of refusing it, with the
// rules they broke.
// +kubebuilder:object:generate=false
type Withheld struct {
	// Settings are the declared coordinator settings Memgraph 3.12 takes but cannot run with.
	Settings []Violation
	// HostnameTemplate are the rules spec.externalAccess.hostnameTemplate broke.
	HostnameTemplate []Violation
}

// AdmitWithholding is Admit for a hook request's parent, which the API server may have stored
// under an older CRD that lacked a rule: a declared coordinator setting Memgraph 3.12 takes but
// cannot run with (settingfloors.go) refuses nothing. It is taken out of the spec instead and
// listed, with the rule's message, in Withheld.Settings, so the hook never sends it and says why.
// So is a spec.externalAccess.hostnameTemplate that breaks its rules (Withheld.HostnameTemplate).
// Any other broken rule refuses the parent as Admit does, the withheld fields named with it.
func AdmitWithholding(raw []byte) (*MemgraphCluster, Withheld, error) {
	return admitParent(raw, true)
}

// Admit admits a typed object: a copy of mc with every default applied (a zero value counts as
// unset, as it does when a typed object is marshalled for the API server), checked against every
// creation-time rule. An invalid spec is refused with its *ValidationError.
func (mc *MemgraphCluster) Admit() (*MemgraphCluster, error) {
	switch {
	case mc == nil:
		return nil, errors.New("no MemgraphCluster")
	case mc.Name == "" || mc.Namespace == "":
		return nil, errors.New("a MemgraphCluster needs metadata.name and metadata.namespace")
	}
	d := mc.Defaulted()
	if err := d.validateDefaulted(); err != nil {
		return nil, err
	}
	return d, nil
}

func admitParent(raw []byte, withhold bool) (*MemgraphCluster, Withheld, error) {
	mc, err := DecodeCluster(raw)
	if err != nil {
		return nil, Withheld{}, err
	}
	root, err := embeddedSchema()
	if err != nil {
		return nil, Withheld{}, err
	}
	var obj struct {
		Spec any `json:"spec"`
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, &obj); err != nil {
		return nil, Withheld{}, describeDecodeError(err)
	}
	stored := map[string]any{}
	if obj.Spec != nil {
		stored["spec"] = obj.Spec
	}
	root.applyDefaults(stored)
	vs := schemaViolations(stored["spec"])
	specJSON, err := json.Marshal(stored["spec"])
	if err != nil {
		return nil, Withheld{}, err
	}
	mc.Spec = MemgraphClusterSpec{}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(specJSON, &mc.Spec); err != nil {
		if len(vs) > 0 {
			return nil, Withheld{}, vs.err(nil) // the schema says what is wrong, in the API server's terms
		}
		return nil, Withheld{}, describeDecodeError(err)
	}
	if errs := validation.IsDNS1123Label(mc.Namespace); len(errs) > 0 {
		vs.add(true, "metadata.namespace", MsgNamespace)
	}
	var withheld, template violations
	if withhold {
		withheld = withholdUnsafe(&mc.Spec.CoordinatorSettings)
		template = withholdHostnameTemplate(&mc.Spec)
	}
	mc.celRules(&vs)
	if len(vs) > 0 {
		return nil, Withheld{}, append(append(vs, withheld...), template...).err(mc)
	}
	return mc, Withheld{Settings: withheld, HostnameTemplate: template}, nil
}
