package planner

import (
	"fmt"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// ExternalAccessCondition is the ExternalAccess condition on what Kubernetes assigned the
// members' Services (d.External) and latest, the latest table a ready leader answered in the
// pass (zero when none was read); ok is false without spec.externalAccess. In order: a
// hostnameTemplate the hook ignores, addresses Memgraph cannot advertise, members waiting for
// one, a table that was not read or gives clients other addresses; else True.
func ExternalAccessCondition(d topology.Declared, latest View) (Condition, bool) {
	ext := d.External
	if ext == nil {
		return Condition{}, false
	}
	var unusable, waiting, stale, advertised []string
	for _, m := range ext.Members {
		switch {
		case m.Unusable:
			unusable = append(unusable, m.Name+": "+m.Waiting)
		case m.Address == "":
			waiting = append(waiting, m.Name+": "+m.Waiting)
		default:
			advertised = append(advertised, m.Name+" "+m.Address)
			if at, ok := advertisedAt(latest.Instances, m.Name); latest.Leader != "" && (!ok || at != m.Address) {
				stale = append(stale, describeStale(m, at, ok))
			}
		}
	}
	switch {
	case ext.TemplateWithheld != "":
		return isFalse(v1alpha1.ReasonHostnameTemplateInvalid, "spec.externalAccess.hostnameTemplate is ignored, so members are "+
			"advertised at their Services' addresses: %s", ext.TemplateWithheld), true
	case len(unusable) > 0:
		return isFalse(v1alpha1.ReasonAddressUnusable, "advertised at the in-cluster name instead: %s", listParts(unusable)), true
	case len(waiting) > 0:
		return isFalse(v1alpha1.ReasonAddressPending, "advertised at the in-cluster name until Kubernetes assigns an address: %s",
			listParts(waiting)), true
	case latest.Leader == "":
		return isFalse(v1alpha1.ReasonAddressPending, "every Service has its address, but no ready leader's SHOW INSTANCES was "+
			"read in this pass to confirm that routing clients are given them"), true
	case len(stale) > 0:
		return isFalse(v1alpha1.ReasonAddressPending, "routing clients are not given these addresses yet: %s", listParts(stale)), true
	}
	return isTrue(v1alpha1.ReasonAddressesAdvertised, "routing clients are given every member's external address: %s",
		listNames(advertised)), true
}

func describeStale(m topology.ExternalMember, at string, registered bool) string {
	if !registered {
		return fmt.Sprintf("%s %s (not registered yet)", m.Name, m.Address)
	}
	return fmt.Sprintf("%s %s (the coordinators give %s)", m.Name, m.Address, at)
}

// listParts renders at most maxListed parts separated by "; ", then how many more there are.
func listParts(parts []string) string {
	if len(parts) <= maxListed {
		return strings.Join(parts, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(parts[:maxListed], "; "), len(parts)-maxListed)
}
