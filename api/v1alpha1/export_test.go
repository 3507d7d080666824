package v1alpha1

// The rules' patterns, bounds and messages, for the external tests that compare them with the CRDs.
const (
	AuthNamePattern         = authNamePattern
	ClusterDomainPattern    = clusterDomainPattern
	ClusterNamePattern      = clusterNamePattern
	DatabaseNamePattern     = databaseNamePattern
	ImageDigestPattern      = imageDigestPattern
	ImageTagPattern         = imageTagPattern
	MaxGracePeriod          = maxGracePeriod
	MaxMaxMapCount          = maxMaxMapCount
	MaxSchemaViolations     = maxSchemaViolations
	MaxStepTimeout          = maxStepTimeout
	MinGracePeriod          = minGracePeriod
	MinMaxMapCount          = minMaxMapCount
	MinSettingSeconds       = minSettingSeconds
	MinStepTimeout          = minStepTimeout
	MsgBackupOwnerReference = msgBackupOwnerReference
	MsgDeletionPolicy       = msgDeletionPolicy
	PreferredMainPattern    = preferredMainPattern
	RepositoryTagPattern    = repositoryTagPattern
	ReservedArgsPattern     = reservedArgsPattern
	ReservedEnvNamesInCEL   = reservedEnvNamesInCEL
	S3BucketPattern         = s3BucketPattern
	S3EndpointPattern       = s3EndpointPattern
	StepTimeoutPattern      = stepTimeoutPattern
	WalArgPattern           = walArgPattern
)

var (
	EmbeddedSchema   = embeddedSchema
	ReservedEnvNames = reservedEnvNames
)
