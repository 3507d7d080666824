package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const (
	Group   = "memgraph.com"
	Version = "v1alpha1"
	Kind    = "MemgraphCluster"
	// Resource is the plural the CompositeController names as its parent resource.
	Resource = "memgraphclusters"
)

// APIVersion is the apiVersion every MemgraphCluster carries.
var APIVersion = GroupVersion.String()

// GroupVersion identifies the API the MemgraphCluster types belong to.
var GroupVersion = schema.GroupVersion{Group: Group, Version: Version}

// The backup kinds and their plurals, as the CompositeControllers name them.
const (
	BackupKind              = "MemgraphBackup"
	BackupResource          = "memgraphbackups"
	ScheduledBackupKind     = "MemgraphScheduledBackup"
	ScheduledBackupResource = "memgraphscheduledbackups"
)
