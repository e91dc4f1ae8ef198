package v1alpha2

// The user-facing spellings: v1alpha2 names some fields differently from
// kops' internal types (Rc, Ttl, Cidrs), and has OIDC fields the internal
// types keep out of JSON.
type KubeAPIServerConfig struct {
	Image    string `json:"image,omitempty"`
	LogLevel int32  `json:"logLevel,omitempty" flag:"v" flag-empty:"0"`
	SecurePort int32 `json:"securePort,omitempty" flag:"secure-port"`
	EtcdCAFile string `json:"etcdCaFile,omitempty" flag:"etcd-cafile"`
	AuthorizationWebhookCacheAuthorizedTTL *metav1.Duration `json:"authorizationWebhookCacheAuthorizedTtl,omitempty" flag:"authorization-webhook-cache-authorized-ttl"`
	OIDCRequiredClaim []string `json:"oidcRequiredClaim,omitempty" flag:"oidc-required-claim,repeat"`
	ServiceAccountKeyFile []string `json:"serviceAccountKeyFile,omitempty" flag:"service-account-key-file,repeat"`
	RuntimeConfig map[string]string `json:"runtimeConfig,omitempty" flag:"runtime-config"`
	AllowPrivileged *bool `json:"allowPrivileged,omitempty" flag:"allow-privileged"`
}

type KubeControllerManagerConfig struct {
	ConcurrentRCSyncs *int32 `json:"concurrentRcSyncs,omitempty" flag:"concurrent-rc-syncs"`
	KubeAPIQPS *resource.Quantity `json:"kubeAPIQPS,omitempty" flag:"kube-api-qps"`
	LeaderElection *LeaderElectionConfiguration `json:"leaderElection,omitempty"`
}

type KubeSchedulerConfig struct {
	LeaderElection *LeaderElectionConfiguration `json:"leaderElection,omitempty"`
}

type KubeProxyConfig struct {
	IPVSExcludeCIDRs []string `json:"ipvsExcludeCidrs,omitempty" flag:"ipvs-exclude-cidrs"`
}

type LeaderElectionConfiguration struct {
	LeaderElect *bool `json:"leaderElect,omitempty" flag:"leader-elect"`
}

type KubeletConfigSpec struct {
	MaxPods  *int32 `json:"maxPods,omitempty" flag:"-"`
	LogLevel *int32 `json:"logLevel,omitempty" flag:"v" flag-empty:"0"`
}
