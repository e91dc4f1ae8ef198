package v1alpha2

type InstanceGroupRole string

// InstanceGroupSpec is the second root.
type InstanceGroupSpec struct {
	Role        InstanceGroupRole `json:"role,omitempty"`
	MinSize     *int32            `json:"minSize,omitempty"`
	NodeLabels  map[string]string `json:"nodeLabels,omitempty"`
	RootVolume  *kops.InstanceRootVolumeSpec `json:"-"`
	Kubelet     *KubeletConfigSpec `json:"kubelet,omitempty"`
}
