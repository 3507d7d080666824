package v1alpha1

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"
)

// InstancePlaceholder is what spec.externalAccess.hostnameTemplate names each member's pod by.
const InstancePlaceholder = "{instance}"

var hostnameTemplateRE = regexp.MustCompile(clusterDomainPattern)

// validateExternalAccess is the twin of spec.externalAccess's CEL rules.
func validateExternalAccess(vs *violations, e *ExternalAccess) {
	if e == nil {
		return
	}
	vs.add(e.Type != ExternalLoadBalancer && e.LoadBalancerSourceRanges != nil, "spec.externalAccess", MsgSourceRangesType)
	for i, r := range e.LoadBalancerSourceRanges {
		vs.add(!isCIDR(r), fmt.Sprintf("spec.externalAccess.loadBalancerSourceRanges[%d]", i), MsgSourceRange)
	}
	*vs = append(*vs, hostnameTemplateViolations(e.HostnameTemplate)...)
}

// hostnameTemplateViolations are the template's rules it breaks (none for an unset template).
func hostnameTemplateViolations(template string) violations {
	var vs violations
	if template == "" {
		return nil
	}
	const field = "spec.externalAccess.hostnameTemplate"
	vs.add(!strings.Contains(template, InstancePlaceholder), field, MsgHostnameInstance)
	vs.add(!hostnameTemplateRE.MatchString(strings.ReplaceAll(template, InstancePlaceholder, "x")), field, MsgHostnameForm)
	return vs
}

// isCIDR is CEL's isCIDR (k8s.io/apiserver pkg/cel/library/cidr.go): netip.ParsePrefix's
// syntax, no IPv4-mapped IPv6 address.
func isCIDR(s string) bool {
	p, err := netip.ParsePrefix(s)
	return err == nil && !p.Addr().Is4In6()
}

// withholdHostnameTemplate takes out of spec a hostnameTemplate that breaks the CRD's rules (a
// spec stored under a CRD without them) and returns what it breaks: the hook then ignores it
// and says why (ReasonHostnameTemplateInvalid) instead of refusing the whole cluster.
func withholdHostnameTemplate(spec *MemgraphClusterSpec) violations {
	e := spec.ExternalAccess
	if e == nil {
		return nil
	}
	vs := hostnameTemplateViolations(e.HostnameTemplate)
	if len(vs) > 0 {
		e.HostnameTemplate = ""
	}
	return vs
}
