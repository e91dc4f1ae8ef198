# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""What the addon templates read from a completed cluster: kops' template functions, as properties."""

from __future__ import annotations

import ipaddress

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.errors import AddonError  # this layer's error, raised here
from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names.aws import cluster_queue_name
from ansible_collections.kubeops.kops.plugins.module_utils.zones import region_of


class Facts(object):
    """The completed cluster (and its instance groups) as the addon templates see it."""

    def __init__(self, completed, groups, account_id=None, karpenter_nodes=None):
        self.cluster = completed
        self.spec = completed["spec"]
        self.name = completed["metadata"]["name"]
        self.groups = list(groups)
        self.account_id = account_id
        # {group: what its EC2NodeClass and NodePool take from the AWS model} (model/aws/karpenter.node_inputs)
        self.karpenter_nodes = karpenter_nodes

    @property
    def provider(self):
        """v1alpha2 spec.cloudProvider: aws or gce."""
        return self.spec.get("cloudProvider")

    def section(self, name):
        """A v1alpha2 spec section as a dict ({} when absent)."""
        return self.spec.get(name) or {}

    @property
    def nth(self):
        return self.section("nodeTerminationHandler")

    @property
    def kube_dns(self):
        return self.spec.get("kubeDNS") or {}

    @property
    def networking(self):
        return self.spec.get("networking") or {}

    @property
    def ccm(self):
        """The external cloud controller manager's config (v1alpha2 cloudControllerManager)."""
        config = self.spec.get("cloudControllerManager") or self.spec.get("externalCloudControllerManager")
        if not config:
            raise AddonError("spec.cloudControllerManager is missing from the completed spec: the cloud controller "
                             "manager addon needs its image and flags (complete the cluster spec first)")
        return config

    @property
    def region(self):
        return region_of(self.spec)

    @property
    def ipv6_only(self):
        """kops IsIPv6Only: the non-masquerade CIDR is an IPv6 network."""
        try:
            return ipaddress.ip_network(self.spec.get("nonMasqueradeCIDR") or "", strict=False).version == 6
        except ValueError:
            return False

    @property
    def highly_available_control_plane(self):
        """kops HasHighlyAvailableControlPlane: more than one control-plane instance group."""
        roles = [(g.get("spec") or {}).get("role") for g in self.groups]
        return sum(1 for role in roles if role in (objects.ROLE_CONTROL_PLANE, "ControlPlane")) > 1

    def control_plane_controller_replicas(self, deploy_on_workers_if_external_permissions=True):
        """kops ControlPlaneControllerReplicas: two with an HA control plane, else one."""
        del deploy_on_workers_if_external_permissions  # both branches agree on the count
        return 2 if self.highly_available_control_plane else 1

    @property
    def use_service_account_external_permissions(self):
        return bool((self.spec.get("iam") or {}).get("useServiceAccountExternalPermissions"))

    @property
    def selinux(self):
        return bool((self.spec.get("containerd") or {}).get("seLinuxEnabled"))

    @property
    def cloud_labels(self):
        """kops CloudLabels: KubernetesCluster=<name> and spec.cloudLabels, as sorted k=v joined by commas."""
        labels = ["KubernetesCluster=%s" % self.name] + ["%s=%s" % kv for kv in (self.spec.get("cloudLabels") or {}).items()]
        return ",".join(sorted(labels))

    @property
    def nth_queue_url(self):
        """kops DefaultQueueName: the SQS queue the termination handler reads (the account id must be known)."""
        if not self.account_id:
            raise AddonError("node-termination-handler in queue mode needs the AWS account id for its QUEUE_URL; "
                             "run with AWS credentials (sts:GetCallerIdentity) or set "
                             "spec.cloudProvider.aws.nodeTerminationHandler.enableSQSTerminationDraining: false")
        domain = ".amazonaws.com.cn/" if "cn-" in self.region else ".amazonaws.com/"
        return "https://sqs." + self.region + domain + self.account_id + "/" + cluster_queue_name(self.cluster)

    def refuse(self, addon, field, fix):
        raise AddonError("addon %s: %s is not rendered by kubeops.kops yet; %s (docs/addons.md)" % (addon, field, fix))
