# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The cluster's SSH key pair (kops' SSHKeyModelBuilder).

Named kubernetes.<cluster>-<MD5 fingerprint of the key>, from the public key kept
in the state store (pki/ssh/public/admin/<fingerprint>).  spec.sshKeyName names
an existing EC2 key pair instead ("" = no key at all): then nothing is built.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names.aws import cluster_tags
from ansible_collections.kubeops.kops.plugins.module_utils.pki.sshkey import fingerprint
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws import ec2


def build_ssh_key(cluster, public_keys, tasks):
    """Add the key pair task for the (first) stored public key, unless spec.sshKeyName decides otherwise."""
    if "sshKeyName" in cluster["spec"] or not public_keys:
        return None
    name = cluster["metadata"]["name"]
    key = public_keys[0].strip()
    digest = fingerprint(key)
    colons = ":".join(digest[i:i + 2] for i in range(0, len(digest), 2))
    task = ec2.KeyPair("kubernetes.%s-%s" % (name, digest), key_name="kubernetes.%s-%s" % (name, colons),
                       public_key=key, tags=cluster_tags(name, name))
    tasks[task.key] = task
    return task
