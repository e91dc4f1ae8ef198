# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""What every cloud's inventory rows share (the kubeops.kops.kops inventory plugin; each cloud's package lists its
hosts in <cloud>/inventory.py): the role groups, group names, the jump through the bastion."""

from __future__ import annotations

import re

ROLE_GROUPS = {"Master": "role_control_plane", "ControlPlane": "role_control_plane", "Node": "role_node",
               "APIServer": "role_apiserver", "Bastion": "role_bastion"}
NEEDS_UPDATE_GROUP = "needs_update"


def safe_group(name):
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def through_bastion(hosts, user, jump_host=None):
    """Hosts without a public address SSH through the bastion: jump_host, else the bastion instance's public address."""
    if jump_host is None:
        bastions = [v for _n, v, groups_of in hosts if "role_bastion" in groups_of and v["kops_public_ip"]]
        jump_host = bastions[0]["kops_public_ip"] if bastions else None
    if jump_host:
        for _name, variables, groups_of in hosts:
            if "role_bastion" not in groups_of and not variables["kops_public_ip"]:
                variables["ansible_host"] = variables["kops_private_ip"]
                variables["ansible_ssh_common_args"] = "-o ProxyJump=%s@%s" % (user, jump_host)
    return hosts
