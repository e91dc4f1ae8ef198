# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The bootstrap service's settings in the nodeup config (kops-controller's job: docs/bootstrap-service.md).

What a node then issues for itself from them is the node side's (nodeup/credentials.py).
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils import provider_names, truncate, zones
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import manifests

BOOTSTRAP_PORT = 3988  # kops-controller's port (bootstrap_service.PORT; the load balancer's 3988 listener)
BOOTSTRAP_DIR = "/etc/kubernetes/kubeops-bootstrap"
# What a worker gets from the service, where it goes (kops' nodeup asks kops-controller for these): the kubelet's
# client and serving certificates and kube-proxy's client certificate always, kube-router's when it is the CNI (its pods read its kubeconfig).
WORKER_CERTIFICATES = (
    ("kubelet", "/var/lib/kubelet/pki/kubelet-client.crt", "/var/lib/kubelet/pki/kubelet-client.key"),
    # The kubelet's serving certificate, where its KubeletConfiguration (tlsCertFile) points, as kops' nodeup asks
    # kops-controller for it (GetBootstrapCert("kubelet-server")).
    ("kubelet-server", "/srv/kubernetes/kubelet-server.crt", "/srv/kubernetes/kubelet-server.key"),
    ("kube-proxy", "/var/lib/kube-proxy/client.crt", "/var/lib/kube-proxy/client.key"),
)
KUBE_ROUTER_CERTIFICATE = ("kube-router", "/var/lib/kube-router/client.crt", "/var/lib/kube-router/client.key")


def bootstrap_server_name(cluster_name):
    """kops' kops-controller.internal.<cluster>: the name workers reach the service by."""
    return "kops-controller.internal.%s" % cluster_name


def bootstrap_settings(completed_cluster, instance_group):
    """The kubeops.bootstrapService section of a nodeup config: a worker's client side, the control plane's
    service side; None for other roles, and for clouds whose instance identities the service cannot verify
    (Provider.verifies_node_identity: AWS's)."""
    spec = completed_cluster["spec"]
    if not provider_names.declared_value(spec.get("cloudProvider"), "verifies_node_identity", False):
        return None
    name = completed_cluster["metadata"]["name"]
    role = (instance_group.get("spec") or {}).get("role")
    region = zones.region_of(spec)
    server = "https://%s:%d" % (bootstrap_server_name(name), BOOTSTRAP_PORT)
    extra = _extra_certificates(spec)
    if role == "Node":
        settings = {"server": server, "region": region}
        if extra:  # otherwise the node_bootstrap module's default list, kept out of every config
            settings["certificates"] = [{"name": n, "cert_path": c, "key_path": k}
                                        for n, c, k in WORKER_CERTIFICATES + extra]
        return settings
    if role not in ("Master", "ControlPlane"):
        return None
    settings = {"server": server, "region": region, "listen": ":%d" % BOOTSTRAP_PORT, "clusterName": name,
                "configBase": spec.get("configBase"),
                # kops' NodesRoles: the instance role every worker group shares (the IAM model's nodes.<c>).
                "nodeRoles": [truncate.truncate("nodes.%s" % name, 64)],
                "caCert": manifests.KCM + "/ca.crt", "caKey": manifests.KCM + "/ca.key",
                "serverCert": BOOTSTRAP_DIR + "/server.crt", "serverKey": BOOTSTRAP_DIR + "/server.key"}
    if extra:  # what the service issues beyond its default (bootstrap_service.DEFAULT_CERT_NAMES)
        settings["certNames"] = [n for n, _c, _k in WORKER_CERTIFICATES + extra]
    return settings


def _extra_certificates(spec):
    """Certificates beyond the kubelet's and kube-proxy's that the cluster's workers need from the service."""
    return (KUBE_ROUTER_CERTIFICATE,) if "kuberouter" in (spec.get("networking") or {}) else ()
