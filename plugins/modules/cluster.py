#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: cluster
short_description: Create, replace or delete a kops cluster spec in the state store
version_added: 0.1.0
description:
  - Writes a kops cluster (the C(kops.k8s.io/v1alpha2) Cluster and its InstanceGroups) to a kops state store,
    exactly as C(kops create cluster), C(kops create -f), C(kops replace -f) and C(kops delete cluster --unregister) do.
  - With O(options), the spec is built from C(kops create cluster) options (snake-cased flag names, see
    docs/create-cluster-options.md), including subnet CIDR allocation, control-plane and etcd layout and channel images.
  - With O(definition), the given objects (the YAML a user keeps in git) replace the stored ones.
  - Everything is validated (kops' rules) before anything is written; a failed validation writes nothing.
  - No cloud resource is touched; use M(kubeops.kops.cluster_update) to apply the spec to a cloud.
options:
  name:
    description:
      - Cluster name (a DNS name such as V(k8s.example.com)).
      - Taken from C(options.cluster_name) or the Cluster in O(definition) when not given.
    type: str
  state:
    description:
      - V(present) writes the spec, V(absent) removes the cluster and everything under it from the state store.
      - V(absent) is refused while the cloud still holds objects the cluster owns (one tagged lookup); delete the
        cluster with M(kubeops.kops.cluster_delete) (playbook C(delete_cluster.yml)), which removes the store last.
    type: str
    choices: [present, absent]
    default: present
  options:
    description:
      - C(kops create cluster) options (its flags, snake-cased), as one mapping; the playbook
        C(kubeops.kops.create_cluster) takes them as C(cluster_options).
      - An unknown option fails naming the closest known one; a value of the wrong type fails naming the option.
      - Lists may be given as lists or comma-separated strings.
    type: dict
    suboptions:
      cluster_name:
        description: Cluster name, a fully-qualified DNS name such as V(k8s.example.com) (C(--name)). Required unless O(name)
          is given.
        type: str
      cloud_provider:
        description: V(aws), V(gce) or V(metal) (C(--cloud); metal is the hosts of an inventory, docs/metal.md). Guessed
          from the state store when not given (C(s3://) is aws, C(gs://) is gce).
        type: str
      channel:
        description: Release channel (C(--channel)); the embedded channels are V(stable) and V(alpha).
        type: str
        default: stable
      kubernetes_version:
        description: Kubernetes version (C(--kubernetes-version)), e.g. V(v1.34.2). Defaults to the channel's recommendation.
        type: str
      config_base:
        description: Where the cluster lives in the store (C(--config-base)). Defaults to C(<state_store>/<cluster_name>).
        type: str
      authorization:
        description: V(RBAC) or V(AlwaysAllow) (C(--authorization)).
        type: str
        default: RBAC
      admin_access:
        description: CIDRs allowed to reach the API (C(--admin-access)). Defaults to V(0.0.0.0/0) and V(::/0).
        type: list
        elements: str
        default: []
      ssh_access:
        description: CIDRs allowed to SSH (C(--ssh-access)). Defaults to O(options.admin_access).
        type: list
        elements: str
        default: []
      zones:
        description: Zones for the nodes (C(--zones)); one subnet per zone on AWS, one per region on GCE. Required.
        type: list
        elements: str
        default: []
      control_plane_zones:
        description: Zones for the control plane (C(--control-plane-zones)). Without them, O(options.zones) are used.
        type: list
        elements: str
        default: []
      control_plane_count:
        description: Number of control-plane instances (C(--control-plane-count)), round-robin over the zones. V(0) means one
          per control-plane zone, or 1 without O(options.control_plane_zones).
        type: int
        default: 0
      control_plane_sizes:
        description: Control-plane machine types (C(--control-plane-size)); more than one makes a mixed instances policy on
          AWS. Defaults to the cloud's default type.
        type: list
        elements: str
        default: []
      control_plane_image:
        description: Control-plane image (C(--control-plane-image)). Defaults to O(options.image).
        type: str
      control_plane_volume_size:
        description: Control-plane root volume size in GB (C(--control-plane-volume-size)); V(0) keeps kops' default.
        type: int
        default: 0
      control_plane_volume_type:
        description: Control-plane root volume type (C(--control-plane-volume-type)).
        type: str
      control_plane_security_groups:
        description: Extra security groups for the control plane (C(--control-plane-security-groups)).
        type: list
        elements: str
        default: []
      control_plane_tenancy:
        description: Control-plane tenancy, V(default) or V(dedicated) (C(--control-plane-tenancy)).
        type: str
      node_count:
        description: Number of nodes (C(--node-count)), split over the C(nodes-<zone>) groups. V(0) means one per zone.
        type: int
        default: 0
      node_sizes:
        description: Node machine types (C(--node-size)); more than one makes a mixed instances policy on AWS.
        type: list
        elements: str
        default: []
      node_image:
        description: Node image (C(--node-image)). Defaults to O(options.image).
        type: str
      node_volume_size:
        description: Node root volume size in GB (C(--node-volume-size)); V(0) keeps kops' default.
        type: int
        default: 0
      node_volume_type:
        description: Node root volume type (C(--node-volume-type)).
        type: str
      node_security_groups:
        description: Extra security groups for the nodes (C(--node-security-groups)).
        type: list
        elements: str
        default: []
      node_tenancy:
        description: Node tenancy, V(default) or V(dedicated) (C(--node-tenancy)).
        type: str
      bastion_image:
        description: Bastion image (C(--bastion-image)). Defaults to O(options.image).
        type: str
      image:
        description: Image for every group (C(--image)). Defaults to the channel's image for the cloud, Kubernetes version
          and architecture.
        type: str
      networking:
        description: 'Networking (C(--networking)): V(kubenet), V(external), V(cni), V(kopeio), V(kopeio-vxlan), V(flannel),
          V(flannel-vxlan), V(flannel-udp), V(calico), V(kube-router), V(amazonvpc), V(amazon-vpc-routed-eni), V(cilium), V(cilium-etcd),
          V(cilium-eni), V(gcp), V(gce) or V(kindnet).'
        type: str
        default: cilium
      network_cidrs:
        description: 'VPC CIDRs (C(--network-cidr)): the first is C(networkCIDR), the others C(additionalNetworkCIDRs), each
          with a C(<zone>-<n>) subnet. Defaults to V(172.20.0.0/16) on AWS.'
        type: list
        elements: str
        default: []
      network_id:
        description: An existing VPC or network (C(--vpc), C(--network-id)); its CIDR comes from O(cloud_facts) or O(cloud_lookup).
        type: str
      subnet_ids:
        description: Existing subnets to use (C(--subnets)); their zones and VPC come from O(cloud_facts) or O(cloud_lookup).
        type: list
        elements: str
        default: []
      utility_subnet_ids:
        description: Existing utility subnets to use (C(--utility-subnets)).
        type: list
        elements: str
        default: []
      topology:
        description: V(public) or V(private) (C(--topology)); private adds C(utility-<zone>) subnets. Defaults to V(public),
          V(private) with O(options.ipv6).
        type: str
      ipv6:
        description: IPv6 cluster with dual-stack subnets (C(--ipv6)); AWS only.
        type: bool
        default: false
      bastion:
        description: Add a bastion instance group (C(--bastion)); needs O(options.topology=private).
        type: bool
        default: false
      dns_type:
        description: V(public), V(private) or V(none) (C(--dns)). Defaults to V(public) with O(options.dns_zone), else V(none).
        type: str
      dns_zone:
        description: The DNS zone for the cluster's records (C(--dns-zone)).
        type: str
      egress:
        description: NAT gateway or instance id for the private subnets' egress (C(--egress)).
        type: str
      api_load_balancer_type:
        description: V(public) or V(internal) (C(--api-loadbalancer-type)), when the API uses a load balancer.
        type: str
      api_ssl_certificate:
        description: ACM certificate ARN for the API load balancer (C(--api-ssl-certificate)).
        type: str
      api_public_name:
        description: The API's public name (C(--api-public-name)). Defaults to C(api.<cluster_name>) with public DNS.
        type: str
      api_server_count:
        description: Number of API server instances in C(apiserver-<zone>) groups (C(--api-server-count)).
        type: int
        default: 0
      api_server_sizes:
        description: Machine type of the API server groups (C(--api-server-size)); one only.
        type: list
        elements: str
        default: []
      associate_public_ip:
        description: Give every group's instances public IPs, or not (C(--associate-public-ip)). Unset keeps kops' default.
        type: bool
      project:
        description: GCE project (C(--project)).
        type: str
      gce_service_account:
        description: GCE service account for the instances (C(--gce-service-account)).
        type: str
      discovery_store:
        description: Where service account issuer discovery documents are published (C(--discovery-store)), for IRSA or workload
          identity.
        type: str
      encrypt_etcd_storage:
        description: Encrypt the etcd volumes (C(--encrypt-etcd-storage)). Unset means true on AWS.
        type: bool
      etcd_clusters:
        description: etcd clusters (C(--etcd-clusters)); V(cilium) is added for O(options.networking=cilium-etcd).
        type: list
        elements: str
        default:
        - main
        - events
      etcd_storage_type:
        description: Volume type of the etcd members (C(--etcd-storage-type)).
        type: str
      instance_manager:
        description: V(cloudgroups) or V(karpenter) (C(--instance-manager)); karpenter needs O(options.discovery_store).
        type: str
        default: cloudgroups
      kubernetes_feature_gates:
        description: Feature gates for every component (C(--kubernetes-feature-gates)), V(+Gate) or V(-Gate).
        type: list
        elements: str
        default: []
      cloud_labels:
        description: 'Tags for every cloud resource (C(--cloud-labels)): a dict, or a string C(k=v,k2="v, with comma").'
        type: raw
      disable_subnet_tags:
        description: Do not tag the subnets (C(--disable-subnet-tags)).
        type: bool
        default: false
      sets:
        description: Spec fields to set (C(--set)), C(cluster.spec.path=value); kops' internal paths and v1alpha2 paths both
          work.
        type: list
        elements: str
        default: []
      unsets:
        description: Spec fields to unset (C(--unset)), C(cluster.spec.path).
        type: list
        elements: str
        default: []
      etcd_count:
        description: Experimental (C(--etcd-count)); accepted, and like kops 1.37 it creates no group yet.
        type: int
        default: 0
      etcd_sizes:
        description: Experimental (C(--etcd-size)); accepted, creates no group yet.
        type: list
        elements: str
        default: []
      kube_controller_manager_count:
        description: Experimental (C(--kube-controller-manager-count)); accepted, creates no group yet.
        type: int
        default: 0
      kube_controller_manager_sizes:
        description: Experimental (C(--kube-controller-manager-size)); accepted, creates no group yet.
        type: list
        elements: str
        default: []
      scheduler_count:
        description: Experimental (C(--scheduler-count)); accepted, creates no group yet.
        type: int
        default: 0
      scheduler_sizes:
        description: Experimental (C(--scheduler-size)); accepted, creates no group yet.
        type: list
        elements: str
        default: []
  definition:
    description:
      - Cluster and/or InstanceGroup objects, as YAML text (multi-document) or a list of dicts.
      - Like C(kops replace -f); a new cluster also needs O(force=true).
      - Other Kubernetes objects given with the Cluster (kops' additional objects, as C(kops create -f) takes them) are
        stored as kops stores them (C(clusteraddons/default)), replacing the stored ones. A
        C(KubeSchedulerConfiguration) (at most one, without C(clientConnection.kubeconfig)) becomes the control plane's
        kube-scheduler configuration; the bootstrap channel does not yet apply the others (a warning names them).
    type: raw
  definition_source:
    description:
      - Where O(definition) was read from (a file name), named by its errors (invalid YAML names the file, line and
        column, as C(kops replace -f FILE) does). C(replace_cluster.yml) passes its O(definition)'s file.
    type: str
    version_added: 0.1.0
  force:
    description:
      - With O(definition), create the cluster when it does not exist (C(kops replace --force)), and replace it even
        when it would undo a change stored since the definition's O(revision).
      - With O(state=absent), remove the cluster from the store even though its cloud objects still exist
        (C(kops delete cluster --unregister)); they keep running.
    type: bool
    default: false
  revision:
    description:
      - "With O(definition), the revision of the spec's history the definition was read at. Without it, the
        Cluster's annotation C(kubeops.kops/revision) (C(metadata.annotations), which C(get_cluster.yml) writes and
        every YAML tool keeps), else the first line C(# kubeops.kops revision: <revision>) of a O(definition) string
        (what earlier releases wrote). The annotation is never stored."
      - When the state store moved on since that revision, the replace is accepted if the definition already holds
        every change stored since (a three-way comparison with the spec at that revision, as git merges, so editing and
        replacing the same file again works) and refused, writing nothing, naming each field it would undo
        otherwise (for example C(spec.kubernetesVersion) or C(InstanceGroup nodes-us-east-1a spec.maxSize)), so
        another run's edit is never written over unseen; O(force=true) overwrites it.
      - Without any (a file that never came from C(get_cluster.yml)) the definition replaces what is stored, as
        C(kops replace) does, with a warning that no check was made; the writes are still conditional on what this
        run read.
      - "With O(name) and neither O(definition) nor O(options): roll back. The config and instance groups are written
        back byte for byte as the state store held them at this revision (groups added since are deleted). The
        rollback is itself a new revision; apply it with M(kubeops.kops.cluster_update). Rolling back to the revision
        the store already holds changes nothing."
    type: str
  history_limit:
    description:
      - How many revisions of the spec the state store keeps (C(<cluster>/.kubeops-history/)); older ones are removed
        at the next write. Kept in the history, so later writes by any module keep to it.
      - Defaults to the stored value, else 100.
    type: int
  overwrite:
    description:
      - With O(options), rewrite an existing cluster whose stored spec differs from what the options produce.
      - Without it such a run fails and nothing is written, as C(kops create cluster) refuses an existing cluster.
    type: bool
    default: false
  prune:
    description:
      - With O(definition), delete stored instance groups that the definition does not list.
    type: bool
    default: false
extends_documentation_fragment:
  - kubeops.kops.state_store
  - kubeops.kops.aws
  - kubeops.kops.spec_history
attributes:
  check_mode:
    description: Check mode computes the same plan and writes nothing.
    support: full
  diff_mode:
    description: Shows the YAML of every object that changes, before and after.
    support: full
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: Create a cluster spec like `kops create cluster`
  kubeops.kops.cluster:
    state_store: s3://my-kops-state
    options:
      cluster_name: k8s.example.com
      cloud_provider: aws
      zones: [eu-west-1a, eu-west-1b, eu-west-1c]
      control_plane_zones: [eu-west-1a, eu-west-1b, eu-west-1c]
      networking: cilium
      topology: private
      bastion: true

- name: Apply the spec kept in git, like `kops replace -f`
  kubeops.kops.cluster:
    state_store: s3://my-kops-state
    definition: "{{ lookup('ansible.builtin.file', 'clusters/k8s.example.com.yaml') }}"

- name: Roll the spec back to revision 50 of its history (a new revision; then apply it with cluster_update)
  kubeops.kops.cluster:
    state_store: s3://my-kops-state
    name: k8s.example.com
    revision: "50"

- name: Remove the cluster from the state store only, leaving its cloud objects (kops delete cluster --unregister)
  kubeops.kops.cluster:
    state_store: s3://my-kops-state
    name: k8s.example.com
    state: absent
    force: true
"""

RETURN = r"""
cluster:
  description: The Cluster object as stored (the user spec).
  returned: when state=present
  type: dict
instance_groups:
  description: The InstanceGroup objects as stored, sorted by name.
  returned: when state=present
  type: list
  elements: dict
completed_spec:
  description: The completed Cluster (every default filled in), as C(cluster-completed.spec) would hold it.
  returned: when state=present
  type: dict
changed_paths:
  description: State store paths, relative to the cluster, that were (or in check mode would be) written or deleted.
  returned: always
  type: list
  elements: str
  sample: [config, instancegroup/control-plane-us-east-1a, instancegroup/nodes-us-east-1a]
revision:
  description: The revision of the spec's history the store is at after this run (what C(get_cluster.yml) would write
    as its first line).
  returned: when state=present and not in check mode
  type: str
  sample: "51"
restored:
  description: The revision a rollback wrote back.
  returned: when rolling back
  type: int
lines:
  description:
    - What was done, as lines for the console (C(replace_cluster.yml) prints them). How many objects changed (or
      C(No changes)) in the cluster's location in the store and the revision it is at now; then the table of the
      changed objects, OBJECT CHANGE (C(created), C(updated), C(deleted)).
  returned: always
  type: list
  elements: str
  sample: ["1 object(s) changed in s3://my-kops-state/k8s.example.com, now at revision 51",
           "OBJECT                          CHANGE", "instancegroup/nodes-us-east-1a  updated"]
config_base:
  description: The cluster's location in the state store.
  returned: always
  type: str
  sample: s3://my-kops-state/k8s.example.com
"""

from ansible_collections.kubeops.kops.plugins.module_utils.module import KopsModule, reports_errors


@reports_errors
def run(module):
    from ansible_collections.kubeops.kops.plugins.module_utils import cluster_writes

    write = cluster_writes.ClusterWrite(module.params, check_mode=module.check_mode, diff=module._diff,
                                        warn=module.warn)
    module.exit_json(**write.run(module.service(zone_hint=write.zone_hint())))


class ClusterModule(KopsModule):
    def _load_params(self):
        """Fail on an unknown create-cluster option before Ansible does, naming the closest known one."""
        from ansible_collections.kubeops.kops.plugins.module_utils.completion import new_cluster

        super(ClusterModule, self)._load_params()
        options = self.params.get("options")
        message = new_cluster.unknown_options_message(options) if isinstance(options, dict) else None
        if message:
            self.fail_json(msg=message)


def main():
    from ansible_collections.kubeops.kops.plugins.module_utils.completion import new_cluster

    module = ClusterModule(
        argument_spec=dict(
            name=dict(type="str"),
            state=dict(type="str", choices=["present", "absent"], default="present"),
            options=dict(type="dict", options=new_cluster.OPTION_SPEC),
            definition=dict(type="raw"),
            definition_source=dict(type="str"),
            force=dict(type="bool", default=False),
            overwrite=dict(type="bool", default=False),
            prune=dict(type="bool", default=False),
            revision=dict(type="str"),
            history_limit=dict(type="int"),
            change_cause=dict(type="str"),
        ),
        mutually_exclusive=[["options", "definition"]],
    )
    run(module)


if __name__ == "__main__":
    main()
