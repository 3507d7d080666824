package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The user kind and its plural, as its CompositeController names them.
const (
	UserKind     = "MemgraphUser"
	UserResource = "memgraphusers"
)

// MemgraphUser is a Memgraph user of a MemgraphCluster, kept on the cluster's MAIN as declared:
// created with its password, its roles, privileges and databases put back when they drift, its
// password set again when the password Secret changes, and dropped when the MemgraphUser is
// deleted (deletionPolicy Delete). Memgraph replicates users to every data instance.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=mgu
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=".spec.cluster",description="The MemgraphCluster the user belongs to"
// +kubebuilder:printcolumn:name="Username",type=string,JSONPath=".status.username",description="The Memgraph user"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=".status.phase",description="Pending, Ready or Failed"
// +kubebuilder:printcolumn:name="Secret",type=string,JSONPath=".status.secret",description="The Secret with the user's credentials"
// +kubebuilder:printcolumn:name="Password",type=string,JSONPath=".status.appliedPasswordVersion",description="The version of the password Secret whose password is in force (never the password)",priority=1
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,description="Why the user is or is not in force",priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 128",message="metadata.name must be at most 128 characters: it is the Memgraph user's name unless spec.username is set, and names the generated Secret <name>-credentials; pick a shorter name"
type MemgraphUser struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MemgraphUserSpec   `json:"spec"`
	Status MemgraphUserStatus `json:"status,omitempty"`
}

// MemgraphUserList is a list of MemgraphUsers.
//
// +kubebuilder:object:root=true
type MemgraphUserList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MemgraphUser `json:"items"`
}

// MemgraphUserSpec is the user, its password and what it may do.
// +kubebuilder:validation:XValidation:rule="has(self.username) == has(oldSelf.username) && (!has(self.username) || self.username == oldSelf.username)",message="spec.username cannot change: it names the Memgraph user; delete this MemgraphUser (which drops the user, with deletionPolicy Delete) and create another"
// +kubebuilder:validation:XValidation:rule="!has(self.mainDatabase) || (has(self.databases) ? (self.databases.exists(d, d == '*') || self.mainDatabase in self.databases) : self.mainDatabase == 'memgraph')",message="mainDatabase must be one of databases (any database when databases lists *); without databases the user may use the default database memgraph alone, so mainDatabase can only be memgraph"
type MemgraphUserSpec struct {
	// Cluster is the MemgraphCluster in the user's namespace whose Memgraph has the user. The
	// cluster needs spec.auth: the hook manages users as that user.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="cluster must name a MemgraphCluster in the user's namespace: lower-case letters, digits and '-', starting with a letter"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.cluster cannot change: a MemgraphUser belongs to one cluster; create another MemgraphUser for another cluster"
	Cluster string `json:"cluster"`

	// Username is the Memgraph user's name; unset, the MemgraphUser's own name. Memgraph keeps
	// names in lower case. It cannot be the cluster's spec.auth user, the hook's own.
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9_][a-z0-9_.@+-]*$')",message="username must be a Memgraph user name: 1 to 128 lower-case letters, digits and '_', '.', '@', '+', '-', not starting with one of '.@+-'"
	// +optional
	Username string `json:"username,omitempty"`

	// PasswordSecret names a Secret in the user's namespace whose key password is the user's
	// password; a change of it sets the new password within one sync. Unset, the hook generates a
	// password into a Secret of its own, <name>-credentials, with the keys username, password,
	// uri (the cluster's -rw Service) and routingUri (neo4j:// routing through the coordinators),
	// and generates a new one when the annotation memgraph.com/rotate-password changes.
	// +optional
	PasswordSecret *SecretReference `json:"passwordSecret,omitempty"`

	// Roles are the user's roles: roles the cluster declares in spec.roles, or Memgraph's
	// built-in admin, readwrite and readonly. The user has exactly these.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.all(r, r.matches('^[a-z0-9_][a-z0-9_.@+-]*$'))",message="roles must list Memgraph role names: 1 to 128 lower-case letters, digits and '_', '.', '@', '+', '-', not starting with one of '.@+-'"
	// +listType=set
	// +optional
	Roles []string `json:"roles,omitempty"`

	// Privileges are the user's own privileges, Memgraph 3.12's (or ALL, every one of them); its
	// roles add theirs. The user has exactly these of its own: any other is revoked.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="!self.exists(p, p == 'ALL') || self.size() == 1",message="privileges must list ALL alone or name privileges without ALL: ALL is every privilege"
	// +listType=set
	// +optional
	Privileges []MemgraphPrivilege `json:"privileges,omitempty"`

	// Databases are the databases the user itself may use (its roles may add others); * is
	// every database. Unset, the default database memgraph alone, as Memgraph gives a new user.
	// Multi-tenancy needs Memgraph Enterprise, which high availability runs anyway.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.all(d, d == '*' || d.matches('^[A-Za-z0-9_][A-Za-z0-9_.-]*$'))",message="databases must list database names (letters, digits, '_', '.', '-', at most 128 characters) or * for every database"
	// +listType=set
	// +optional
	Databases []string `json:"databases,omitempty"`

	// MainDatabase is the database the user's sessions start in; unset, memgraph.
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9_][A-Za-z0-9_.-]*$')",message="mainDatabase must be a database name: letters, digits, '_', '.', '-'"
	// +optional
	MainDatabase string `json:"mainDatabase,omitempty"`

	// DeletionPolicy says what deleting the MemgraphUser does to the Memgraph user: Delete (the
	// default) drops it first, Retain leaves it.
	// +kubebuilder:default=Delete
	// +optional
	DeletionPolicy UserDeletionPolicy `json:"deletionPolicy,omitempty"`
}

// UserDeletionPolicy is a MemgraphUser's spec.deletionPolicy.
// +kubebuilder:validation:Enum=Delete;Retain
type UserDeletionPolicy string

const (
	UserDelete UserDeletionPolicy = "Delete"
	UserRetain UserDeletionPolicy = "Retain"
)

// MemgraphPrivilege is one of Memgraph 3.12's privileges as GRANT names it (MemgraphCypher.g4's
// privilege rule), or ALL for every privilege (GRANT ALL PRIVILEGES).
// +kubebuilder:validation:Enum=ALL;CREATE;DELETE;MATCH;MERGE;SET;REMOVE;INDEX;STATS;AUTH;CONSTRAINT;DUMP;REPLICATION;READ_FILE;DURABILITY;FREE_MEMORY;TRIGGER;CONFIG;STREAM;MODULE_READ;MODULE_WRITE;WEBSOCKET;TRANSACTION_MANAGEMENT;STORAGE_MODE;MULTI_DATABASE_EDIT;MULTI_DATABASE_USE;COORDINATOR;IMPERSONATE_USER;PROFILE_RESTRICTION;PARALLEL_EXECUTION;SERVER_SIDE_PARAMETERS;RELOAD_TLS
type MemgraphPrivilege string

// PrivilegeAll is every privilege.
const PrivilegeAll MemgraphPrivilege = "ALL"

// ClusterRole is a Memgraph role a MemgraphCluster declares for its MemgraphUsers.
// +kubebuilder:validation:XValidation:rule="!(self.name in ['admin', 'readwrite', 'readonly'])",message="roles[].name must not be one of Memgraph 3.12's built-in roles (admin, readwrite, readonly): a MemgraphUser names those as they are; declare a role of another name for other privileges"
type ClusterRole struct {
	// Name is the role's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9_][a-z0-9_.@+-]*$')",message="roles[].name must be a Memgraph role name: 1 to 128 lower-case letters, digits and '_', '.', '@', '+', '-', not starting with one of '.@+-'"
	Name string `json:"name"`

	// Privileges are the role's privileges, Memgraph 3.12's (or ALL); any other is revoked.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="!self.exists(p, p == 'ALL') || self.size() == 1",message="privileges must list ALL alone or name privileges without ALL: ALL is every privilege"
	// +listType=set
	// +optional
	Privileges []MemgraphPrivilege `json:"privileges,omitempty"`

	// Databases are the databases the role gives its users; * is every database. Unset, the
	// default database memgraph alone, as Memgraph gives a new role.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.all(d, d == '*' || d.matches('^[A-Za-z0-9_][A-Za-z0-9_.-]*$'))",message="databases must list database names (letters, digits, '_', '.', '-', at most 128 characters) or * for every database"
	// +listType=set
	// +optional
	Databases []string `json:"databases,omitempty"`
}

// MemgraphUserStatus is what the hook found and did. Every field but AppliedPasswordVersion and
// MainDatabase is read from Memgraph on each sync.
type MemgraphUserStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Phase is Pending (waiting for the cluster, its MAIN or the generated Secret: the Ready
	// condition says why), Ready (the user is in force as declared) or Failed (the declaration
	// cannot be applied as it is, or Memgraph refused it: the Ready condition has Memgraph's own
	// words).
	// +optional
	Phase UserPhase `json:"phase,omitempty"`

	// Username is the Memgraph user.
	// +optional
	Username string `json:"username,omitempty"`

	// Secret is the Secret with the user's password: spec.passwordSecret's, or the generated
	// <name>-credentials.
	// +optional
	Secret string `json:"secret,omitempty"`

	// AppliedPasswordVersion is the version of the password Secret (its name and
	// resourceVersion) whose password the hook set last; never the password. A Secret of another
	// version gets its password set on the next sync.
	// +optional
	AppliedPasswordVersion string `json:"appliedPasswordVersion,omitempty"`

	// Roles are the user's roles, as Memgraph shows them.
	// +listType=atomic
	// +optional
	Roles []string `json:"roles,omitempty"`

	// Privileges are the privileges in force: those Memgraph grants the user, its own and its
	// roles', on its main database.
	// +listType=atomic
	// +optional
	Privileges []string `json:"privileges,omitempty"`

	// Databases are the databases the user may use, its own and its roles' (* for every one).
	// +listType=atomic
	// +optional
	Databases []string `json:"databases,omitempty"`

	// MainDatabase is the main database the hook set: Memgraph 3.12 has no query that shows it.
	// +optional
	MainDatabase string `json:"mainDatabase,omitempty"`

	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// UserPhase is a MemgraphUser's status.phase.
// +kubebuilder:validation:Enum=Pending;Ready;Failed
type UserPhase string

const (
	UserPending UserPhase = "Pending"
	UserReady   UserPhase = "Ready"
	UserFailed  UserPhase = "Failed"
)

// The annotation that asks for a new generated password, and the one the generated Secret
// records the request it answered with.
const (
	AnnotationRotatePassword = "memgraph.com/rotate-password"
	AnnotationRotatedFor     = "memgraph.com/password-rotated-for"
)

// The keys of a user's password Secret: password is the only one a spec.passwordSecret needs.
const (
	UserUsernameKey   = "username"
	UserPasswordKey   = "password"
	UserURIKey        = "uri"
	UserRoutingURIKey = "routingUri"
)

// UserSecretName is the name of the Secret the hook generates for a MemgraphUser without
// spec.passwordSecret.
func UserSecretName(user string) string { return user + "-credentials" }
