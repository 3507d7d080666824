package v1alpha1

// Placement says how the hook spreads each role's pods over the nodes and zones.
type Placement struct {
	// AntiAffinity is the pod anti-affinity every pod gets against the other pods of its role in
	// this cluster, on kubernetes.io/hostname: Preferred (the default) asks the scheduler to put
	// each on a node of its own and still schedules a pod when no such node is free; Required
	// leaves a pod Pending until a node without a pod of its role is free (so a role needs at
	// least as many schedulable nodes as pods); None renders no anti-affinity. An affinity
	// written in coordinatorTemplate or dataTemplate replaces it for that role.
	// +kubebuilder:default=Preferred
	// +optional
	AntiAffinity AntiAffinity `json:"antiAffinity,omitempty"`
}

// AntiAffinity is spec.placement.antiAffinity.
// +kubebuilder:validation:Enum=Required;Preferred;None
type AntiAffinity string

const (
	AntiAffinityRequired  AntiAffinity = "Required"
	AntiAffinityPreferred AntiAffinity = "Preferred"
	AntiAffinityNone      AntiAffinity = "None"
)
