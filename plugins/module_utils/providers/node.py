# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The node modules' registry: cloudProvider -> providers/<cloud>/node.py (etcd_volume, etcd_peers, api_dns).

Apart from registry.py so that a node module ships the clouds' node functions only (node.py imports cloud/<cloud>.py
and nodeup/), never the controller's layers.  aws and gce are imported by name (AnsiballZ ships them); a cloud
added as a package is found on disk when the module can see the collection (KUBEOPS_COLLECTION_DIR,
provider_names.py).
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils import provider_names
from ansible_collections.kubeops.kops.plugins.module_utils.errors import NodeError


def cloud_options():
    """The argument spec every cloud-neutral node module takes to pick and reach the node's cloud (documented by
    the kubeops.kops.node_cloud doc fragment); the AWS options come from cloud/aws.argument_spec."""
    return dict(provider=dict(type="str", default="aws"), project=dict(type="str"),
                credentials_file=dict(type="path"))


def _aws():
    from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws import node
    return node


def _gce():
    from ansible_collections.kubeops.kops.plugins.module_utils.providers.gce import node
    return node


BUILT_IN = {"aws": _aws, "gce": _gce}


class NodeNotBuilt(NodeError):
    pass


def functions(provider, verb):
    """The node module of cloud provider that has verb (etcd_volume, etcd_peers, api_dns)."""
    module = provider_names.part(provider, "node", BUILT_IN) if isinstance(provider, str) else None
    if module is None:
        built = [c for c in provider_names.names() if c != provider and provider_names.part(c, "node", BUILT_IN)]
        raise NodeNotBuilt("provider: %s is built for %s, not %r" % (verb, ", ".join(built), provider))
    return module


def run(module, verb):
    """Run the node module verb (module.params["provider"]'s) to its exit_json or fail_json."""
    try:
        cloud = functions(module.params["provider"], verb)
    except NodeNotBuilt as exc:
        module.fail_json(msg=str(exc))
    function = getattr(cloud, verb, None)  # a cloud's node.py may build some of the three only
    if function is None:
        module.fail_json(msg="provider: %s is not built for %s" % (verb, module.params["provider"]))
    function(module)
