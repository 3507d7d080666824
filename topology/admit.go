package topology

import (
	"encoding/json"

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
func Admit(raw []byte) (*Cluster, error) { return admitParent(raw, false) }

// AdmitWithholding is Admit for a hook request's parent, which the API server may have stored
// under an older CRD that lacked a rule: a declared coordinator setting Memgraph 3.12 takes but
// cannot run with (settingfloors.go) refuses nothing. The Cluster withholds it instead — Declare
// leaves it out of Declared.Settings and lists it, with the rule's message, in
// Declared.WithheldSettings — so the hook never sends it and says why. So is a
// spec.externalAccess.hostnameTemplate that breaks its rules: it is ignored, and
// ExternalAccessView.TemplateWithheld says why. Any other broken rule refuses the parent as Admit
// does, the withheld fields named with it.
func AdmitWithholding(raw []byte) (*Cluster, error) { return admitParent(raw, true) }

func admitParent(raw []byte, withhold bool) (*Cluster, error) {
	mc, err := DecodeCluster(raw)
	if err != nil {
		return nil, err
	}
	root, err := embeddedSchema()
	if err != nil {
		return nil, err
	}
	var obj struct {
		Spec any `json:"spec"`
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, &obj); err != nil {
		return nil, describeDecodeError(err)
	}
	stored := map[string]any{}
	if obj.Spec != nil {
		stored["spec"] = obj.Spec
	}
	root.applyDefaults(stored)
	vs := schemaViolations(stored["spec"])
	specJSON, err := json.Marshal(stored["spec"])
	if err != nil {
		return nil, err
	}
	mc.Spec = MemgraphClusterSpec{}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(specJSON, &mc.Spec); err != nil {
		if len(vs) > 0 {
			return nil, vs.err(nil) // the schema says what is wrong, in the API server's terms
		}
		return nil, describeDecodeError(err)
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
		return nil, append(append(vs, withheld...), template...).err(mc)
	}
	c := admitted(mc)
	c.withheld, c.withheldTemplate = withheld, template
	return c, nil
}
