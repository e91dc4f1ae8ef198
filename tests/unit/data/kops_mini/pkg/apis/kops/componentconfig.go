package kops

// kops' internal types: the `flag` tags flagbuilder reads, internal spellings.
type KubeAPIServerConfig struct {
	// Image has no flag.
	Image string `json:"image,omitempty"`
	// A non-pointer int: written even when unset, unless it equals flag-empty.
	LogLevel int32 `json:"logLevel,omitempty" flag:"v" flag-empty:"0"`
	SecurePort int32 `json:"securePort,omitempty" flag:"secure-port"`
	EtcdCAFile string `json:"etcdCAFile,omitempty" flag:"etcd-cafile"`
	AuthorizationWebhookCacheAuthorizedTTL *metav1.Duration `json:"authorizationWebhookCacheAuthorizedTTL,omitempty" flag:"authorization-webhook-cache-authorized-ttl"`
	// Out of JSON internally, but v1alpha2 has a field for it.
	OIDCRequiredClaim []string `json:"-" flag:"oidc-required-claim,repeat"`
	ServiceAccountKeyFile []string `json:"serviceAccountKeyFile,omitempty" flag:"service-account-key-file,repeat"`
	RuntimeConfig map[string]string `json:"runtimeConfig,omitempty" flag:"runtime-config"`
	AllowPrivileged *bool `json:"allowPrivileged,omitempty" flag:"allow-privileged"`
	// InternalOnly has a flag but no v1alpha2 field: nothing a spec can set.
	InternalOnly *string `json:"-" flag:"internal-only"`
	// Skipped has flag "-".
	Skipped *string `json:"skipped,omitempty" flag:"-"`
}

type KubeControllerManagerConfig struct {
	ConcurrentRCSyncs *int32 `json:"concurrentRCSyncs,omitempty" flag:"concurrent-rc-syncs"`
	KubeAPIQPS *resource.Quantity `json:"kubeAPIQPS,omitempty" flag:"kube-api-qps"`
	LeaderElection *LeaderElectionConfiguration `json:"leaderElection,omitempty"`
}

type KubeSchedulerConfig struct {
	LeaderElection *LeaderElectionConfiguration `json:"leaderElection,omitempty"`
}

type KubeProxyConfig struct {
	IPVSExcludeCIDRs []string `json:"ipvsExcludeCIDRs,omitempty" flag:"ipvs-exclude-cidrs"`
}

type LeaderElectionConfiguration struct {
	LeaderElect *bool `json:"leaderElect,omitempty" flag:"leader-elect"`
}

type KubeletConfigSpec struct {
	MaxPods    *int32            `json:"maxPods,omitempty" flag:"-"`
	LogLevel   *int32            `json:"logLevel,omitempty" flag:"v" flag-empty:"0"`
	NodeLabels map[string]string `json:"nodeLabels,omitempty" flag:"node-labels"`
}
