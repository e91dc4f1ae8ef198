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

from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import kops_kubeconfig, manifests

KAPI = manifests.KAPI
KUBE_ROUTER = "/var/lib/kube-router"
KUBECTL_KUBECONFIG = "/var/lib/kubectl/kubeconfig"
SERVER_CERT = "/srv/kubernetes/kubelet-server.crt"  # kubelet.SERVER_CERT: where the kubelet's config points
SERVER_KEY = "/srv/kubernetes/kubelet-server.key"


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


def kubelet_server_names(node_name, node_addresses=()):
    """(DNS names, IP addresses) of the kubelet's serving certificate: the node's name first (its CommonName), then
    its addresses (kops' kubeletNames: the node name, the instance's host name and addresses)."""
    dns_names, ip_addresses = [], []
    # Only addresses: an inventory's host name (localhost on boot) is no name of the node's.
    for name in [node_name] + [a for a in node_addresses if _is_ip(a)]:
        target = ip_addresses if _is_ip(name) else dns_names
        if name not in target:
            target.append(name)
    return dns_names, ip_addresses


def control_plane_requests(config, node_name, node_addresses=()):
    """[certificate request] for a node of this config; empty for workers and bastions."""
    requests = []
    if config.get("APIServerConfig"):
        dns_names, ip_addresses = apiserver_names(config)
        requests += [
            # kops' IncludeRootCertificate: the file carries the signer's certificate after the server's (clients
            # such as AWS' web identity federation need the chain).
            dict(_request("kubernetes-ca", "kubernetes-master", KAPI + "/server.crt", KAPI + "/server.key",
                          usages=("server",), dns_names=dns_names, ip_addresses=ip_addresses), include_root=True),
            _request("kubernetes-ca", "kubelet-api", KAPI + "/kubelet-api.crt", KAPI + "/kubelet-api.key"),
            # Their CA files (etcd-ca.crt, apiserver-aggregator-ca.crt) come from the config's CAs: node_files.
            _request("apiserver-aggregator-ca", "aggregator", KAPI + "/apiserver-aggregator.crt",
                     KAPI + "/apiserver-aggregator.key"),
            _request("etcd-clients-ca", "kube-apiserver", KAPI + "/etcd-client.crt", KAPI + "/etcd-client.key"),
            _request("kubernetes-ca", "system:node:%s" % node_name, "/var/lib/kubelet/pki/kubelet-client.crt",
                     "/var/lib/kubelet/pki/kubelet-client.key", organizations=("system:nodes",)),
            # kops' KubectlBuilder: an admin kubeconfig for kubectl on the node.
            kubeconfig_request("kubecfg", "kubecfg", KUBECTL_KUBECONFIG, organizations=("system:masters",)),
        ]
        # The kubelet's serving certificate (kops' buildKubeletServingCertificate issues it itself where the API
        # server runs; workers get theirs from the bootstrap service).
        dns_names, ip_addresses = kubelet_server_names(node_name, node_addresses)
        requests.append(_request("kubernetes-ca", node_name, SERVER_CERT, SERVER_KEY, usages=("server",),
                                 dns_names=dns_names, ip_addresses=ip_addresses))
        requests += aws_iam_authenticator_requests(config)
    if config.get("ControlPlaneConfig"):
        for component, directory, user in (
                ("kube-controller-manager", manifests.KCM, "system:kube-controller-manager"),
                ("kube-scheduler", manifests.SCHEDULER, "system:kube-scheduler")):
            requests += [
                _request("kubernetes-ca", component, directory + "/server.crt", directory + "/server.key",
                         usages=("server",), dns_names=("%s.kube-system.svc.cluster.local" % component,)),
                kubeconfig_request(component, user, "/var/lib/%s/kubeconfig" % component),
            ]
        if config.get("KubeProxy"):
            requests.append(kubeconfig_request("kube-proxy", "system:kube-proxy", manifests.PROXY_KUBECONFIG))
        if "kuberouter" in (config.get("Networking") or {}):  # its pods read /var/lib/kube-router/kubeconfig
            requests.append(_request("kubernetes-ca", "system:kube-router", KUBE_ROUTER + "/client.crt",
                                     KUBE_ROUTER + "/client.key"))
        requests += bootstrap_server_request(config)
        requests += node_labeller_request(config)
    return requests


def kubeconfig_request(name, common_name, path, organizations=()):
    """A client certificate that lives inline in a kubeconfig (kops' BuildIssuedKubeconfig on a node with an API
    server: https://127.0.0.1, the certificate, its key and the signer's certificate inline, mode 0400)."""
    request = _request("kubernetes-ca", common_name, None, None, organizations=organizations)
    request["kubeconfig"] = {"path": path, "name": name, "server": "https://127.0.0.1"}
    return request


def aws_iam_authenticator_requests(config):
    """authentication.aws: the authenticator's serving certificate, readable by its user (kops' KubeAPIServerBuilder)."""
    authentication = (config.get("APIServerConfig") or {}).get("Authentication") or {}
    if authentication.get("aws") is None:
        return []
    home = kops_kubeconfig.AWS_IAM_AUTHENTICATOR_HOME
    request = _request("kubernetes-ca", "aws-iam-authenticator", home + "/cert.pem", home + "/key.pem",
                       usages=("server",), dns_names=("localhost",), ip_addresses=("127.0.0.1",))
    request.update(cert_mode="0600", owner="aws-iam-authenticator", group="aws-iam-authenticator")
    return [request]


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
        # kops writes the controller manager's signing certificate 0600, like its key.
        copies += [{"keyset": "kubernetes-ca", "key_path": manifests.KCM + "/ca.key",
                    "cert_path": manifests.KCM + "/ca.crt", "cert_mode": "0600"},
                   {"keyset": "service-account", "key_path": manifests.KCM + "/service-account.key"}]
    return copies
