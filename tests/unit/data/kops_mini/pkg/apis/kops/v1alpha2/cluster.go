package v1alpha2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kops/pkg/apis/kops"
)

// Cluster is not a root of the table: only its spec is.
type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ClusterSpec `json:"spec,omitempty"`
}

// ClusterSpec: pointers, slices of structs, maps, an alias, hidden fields.
type ClusterSpec struct {
	// Channel is a plain string.
	Channel string `json:"channel,omitempty"`
	// ConfigStore is internal only.
	ConfigStore kops.ConfigStoreSpec `json:"-"`
	KubernetesVersion string `json:"kubernetesVersion,omitempty"` // a trailing comment
	Subnets           []ClusterSubnetSpec `json:"subnets,omitempty"`
	CloudLabels       map[string]string   `json:"cloudLabels,omitempty"`
	KubeAPIServer     *KubeAPIServerConfig `json:"kubeAPIServer,omitempty"`
	KubeControllerManager *KubeControllerManagerConfig `json:"kubeControllerManager,omitempty"`
	KubeScheduler     *KubeSchedulerConfig `json:"kubeScheduler,omitempty"`
	KubeProxy         *KubeProxyConfig     `json:"kubeProxy,omitempty"`
	Authorization     *AuthorizationSpec   `json:"authorization,omitempty"`
	// NoJSONTag keeps its Go name, as encoding/json does.
	NoJSONTag *int32
	// Embedded struct without a JSON name: its fields are ClusterSpec's.
	LegacySpec `json:",inline"`
}

// LegacySpec is only ever inlined.
type LegacySpec struct {
	MasterPublicName string `json:"masterPublicName,omitempty"`
}

type ClusterSubnetSpec struct {
	Name string     `json:"name,omitempty"`
	Type SubnetType `json:"type,omitempty"`
}

// SubnetType is an alias the table lists under ALIASES.
type SubnetType string

// KeysetType is an alias no root reaches: left out.
type KeysetType string

type AuthorizationSpec struct {
	AlwaysAllow *AlwaysAllowAuthorizationSpec `json:"alwaysAllow,omitempty"`
}

type AlwaysAllowAuthorizationSpec struct{}

// Unreachable is declared but no root reaches it: left out.
type Unreachable struct {
	Field string `json:"field,omitempty"`
}
