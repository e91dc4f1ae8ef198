# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""What a control-plane node issues for itself from the store's CAs, as kops' nodeup does.

Pure data from the nodeup config: the certificate requests (node_certificates'
`certificates` shape) and the keypairs copied as they are (the controller
manager's signing CA, the service-account key), and the bootstrap service's
serving certificate (its settings come from the controller: nodeconfig/credentials.py).  Workers get none
of the store's keys: the bootstrap service signs their kubelet's and
kube-proxy's certificates after checking their cloud identity.
"""

from __future__ import annotations

import ipaddress

from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import manifests

KAPI = manifests.KAPI
KUBE_ROUTER = "/var/lib/kube-router"


def _request(signer, common_name, cert_path, key_path, usages=("client",), organizations=(), dns_names=(),
             ip_addresses=(), ca_path=None):
    request = {"signer": signer, "common_name": common_name, "cert_path": cert_path, "key_path": key_path,
               "usages": list(usages), "organizations": list(organizations), "dns_names": list(dns_names),
               "ip_addresses": list(ip_addresses)}
    if ca_path:
        request["ca_path"] = ca_path
    return request


def apiserver_names(config):
    """(DNS names, IP addresses) of kube-apiserver's serving certificate (kops' writeServerCertificate)."""
    api_config = config["APIServerConfig"]
    api = api_config.get("API") or {}
    domain = api_config.get("ClusterDNSDomain") or "cluster.local"
    names = ["kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc." + domain]
    if api.get("publicName"):
        names.append(api["publicName"])
    names.append(manifests.api_internal_name(config))
    names.extend(api.get("additionalSANs") or [])
    ips = [manifests.service_ip(config["Networking"]["serviceClusterIPRange"], 1), "127.0.0.1"]
    ips.extend(config.get("ApiserverAdditionalIPs") or [])
    # Names that are addresses go in as IP SANs.
    dns_names, ip_addresses = [], list(ips)
    for name in names:
        target = ip_addresses if _is_ip(name) else dns_names
        if name not in target:
            target.append(name)
    return dns_names, ip_addresses


def _is_ip(text):
    try:
        ipaddress.ip_address(text)
        return True
    except ValueError:
        return False


def control_plane_requests(config, node_name):
    """[certificate request] for a node of this config; empty for workers and bastions."""
    requests = []
    if config.get("APIServerConfig"):
        dns_names, ip_addresses = apiserver_names(config)
        requests += [
            _request("kubernetes-ca", "kubernetes-master", KAPI + "/server.crt", KAPI + "/server.key",
                     usages=("server",), dns_names=dns_names, ip_addresses=ip_addresses),
            _request("kubernetes-ca", "kubelet-api", KAPI + "/kubelet-api.crt", KAPI + "/kubelet-api.key"),
            _request("apiserver-aggregator-ca", "aggregator", KAPI + "/apiserver-aggregator.crt",
                     KAPI + "/apiserver-aggregator.key", ca_path=KAPI + "/apiserver-aggregator-ca.crt"),
            _request("etcd-clients-ca", "kube-apiserver", KAPI + "/etcd-client.crt", KAPI + "/etcd-client.key",
                     ca_path=KAPI + "/etcd-ca.crt"),
            _request("kubernetes-ca", "system:node:%s" % node_name, "/var/lib/kubelet/pki/kubelet-client.crt",
                     "/var/lib/kubelet/pki/kubelet-client.key", organizations=("system:nodes",)),
        ]
    if config.get("ControlPlaneConfig"):
        for component, directory, user in (
                ("kube-controller-manager", manifests.KCM, "system:kube-controller-manager"),
                ("kube-scheduler", manifests.SCHEDULER, "system:kube-scheduler")):
            requests += [
                _request("kubernetes-ca", component, directory + "/server.crt", directory + "/server.key",
                         usages=("server",), dns_names=("%s.kube-system.svc.cluster.local" % component,)),
                _request("kubernetes-ca", user, "/var/lib/%s/client.crt" % component,
                         "/var/lib/%s/client.key" % component),
            ]
        if config.get("KubeProxy"):
            requests.append(_request("kubernetes-ca", "system:kube-proxy", "/var/lib/kube-proxy/client.crt",
                                     "/var/lib/kube-proxy/client.key"))
        if "kuberouter" in (config.get("Networking") or {}):  # its pods read /var/lib/kube-router/kubeconfig
            requests.append(_request("kubernetes-ca", "system:kube-router", KUBE_ROUTER + "/client.crt",
                                     KUBE_ROUTER + "/client.key"))
        requests += bootstrap_server_request(config)
        requests += node_labeller_request(config)
    return requests


def bootstrap_server_request(config):
    """The service's serving certificate (kops' kops-controller certificate), on control-plane nodes."""
    settings = (config.get("kubeops") or {}).get("bootstrapService") or {}
    if not settings.get("serverCert"):
        return []
    host = settings["server"].split("://", 1)[1].rsplit(":", 1)[0]
    return [_request("kubernetes-ca", "kops-controller", settings["serverCert"], settings["serverKey"],
                     usages=("server",), dns_names=(host,))]


def node_labeller_request(config):
    """The node labeller's client certificate (kops-controller's identity for its node controller): CN
    kubeops:node-labeller, no group; the node-labeller addon's RBAC lets it get/list/watch/patch nodes only."""
    settings = (config.get("kubeops") or {}).get("nodeLabeller") or {}
    if not settings.get("clientCert"):
        return []
    return [_request("kubernetes-ca", "kubeops:node-labeller", settings["clientCert"], settings["clientKey"],
                     ca_path=settings["caCert"])]


def control_plane_keypairs(config):
    """[{keyset, key_path, cert_path?}]: keys a control-plane node holds as they are in the store."""
    copies = []
    if config.get("APIServerConfig"):
        copies.append({"keyset": "service-account", "key_path": KAPI + "/service-account.key"})
    if config.get("ControlPlaneConfig"):
        copies += [{"keyset": "kubernetes-ca", "key_path": manifests.KCM + "/ca.key",
                    "cert_path": manifests.KCM + "/ca.crt"},
                   {"keyset": "service-account", "key_path": manifests.KCM + "/service-account.key"}]
    return copies
