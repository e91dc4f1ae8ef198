# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""AWS: everything cloud-specific about an AWS cluster, reached through PROVIDER.

driver.py (update), groups.py (day-2 reader), rolling.py, deletion.py; the EC2/S3 client and the
cloud facts lookup stay in cloud/aws.py and cloud/aws_facts.py because node-side code and the state store use them
too (nodeup/ must not import providers/).  Options: doc fragment kubeops.kops.aws (plugins/doc_fragments/aws.py).
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.providers.base import Provider


class AwsProvider(Provider):
    name = "aws"
    surges_by_default = True  # kops' rollingupdate settings.go: AWS surges unless Spotinst or Karpenter
    user_data_limit = (16384, "EC2's user data limit")
    node_functions = True  # etcd's peers and volume through EC2, api.internal in Route53
    labels_nodes = True
    completion_builders = ("node_termination_handler", "aws_node_ip_families", "ebs_csi",
                           "aws_cloud_controller_manager")
    verifies_node_identity = True  # the bootstrap service checks a worker's EC2 identity document (STS)
    cloud_config_fields = (("disableSecurityGroupIngress", "disableSecurityGroupIngress", True),
                           ("elbSecurityGroup", "elbSecurityGroup", True),
                           ("nlbSecurityGroupMode", "nlbSecurityGroupMode", True),
                           ("nodeIPFamilies", "nodeIPFamilies", True),
                           ("useIPBasedNodeNames", "useIPBasedNodeNames", False))
    credential_provider_url = ("https://artifacts.k8s.io/binaries/cloud-provider-aws/v1.31.7"
                               "/linux/{arch}/ecr-credential-provider-linux-{arch}")
    store_scheme = "s3://"
    dns_types = ("Public", "Private", "None")
    root_volume_types = ("standard", "gp3", "gp2", "io1", "io2")
    api_server_groups = True
    karpenter = True
    # kops' instance type preferences (awsup DefaultInstanceType), by image architecture.
    machine_type_candidates = {
        "amd64": {"Master": ("t3.medium", "c5.large", "c4.large"), "Node": ("t3.medium", "c5.large", "c4.large"),
                  "APIServer": ("t3.medium", "c5.large", "c4.large"), "Bastion": ("t3.micro", "t2.micro")},
        "arm64": {"Master": ("t4g.medium",), "Node": ("t4g.medium",), "APIServer": ("t4g.medium",),
                  "Bastion": ("t4g.micro",)},
    }

    def driver(self):
        from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws import driver
        return driver.DRIVER

    def reader(self):
        from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws import groups
        return groups

    def rolling(self, cloud):
        from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws.rolling import AwsRolling
        return AwsRolling(cloud)

    def inventory_hosts(self, plugin, service, cluster, groups, region):
        from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws import inventory
        return inventory.hosts(plugin, service, cluster, groups, region)


PROVIDER = AwsProvider()
