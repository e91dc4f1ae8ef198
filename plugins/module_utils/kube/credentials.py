# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Admin credentials and kubeconfigs from the state store's keystore (kops export kubeconfig --admin).

The client certificate is signed by the primary kubernetes-ca keypair, for a user in
system:masters, for a chosen lifetime (kops' default: 18 h).  The kubeconfig trusts every
kubernetes-ca certificate not distrusted, so it keeps working through a CA rotation.
"""

from __future__ import annotations

import base64
import copy
import datetime
import ipaddress
import urllib.parse

from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs, keystore
from ansible_collections.kubeops.kops.plugins.module_utils.errors import KubeError

CA_KEYSET = "kubernetes-ca"
ADMIN_GROUP = "system:masters"
DEFAULT_LIFETIME = datetime.timedelta(hours=18)  # kops export kubeconfig --admin


class CredentialsError(KubeError):
    pass


def cluster_ca(cluster_store, cluster_name):
    keyset = keystore.load(cluster_store, CA_KEYSET)
    if keyset is None:
        raise CredentialsError("cluster %s has no %s keyset in the state store; run update_cluster.yml (or "
                               "kubeops.kops.keypair) first" % (cluster_name, CA_KEYSET))
    return keyset


def admin_credentials(ca_keyset, user="admin", lifetime=DEFAULT_LIFETIME, now=None):
    """(CA bundle PEM, client certificate PEM, client key PEM) for user in system:masters."""
    ca_certificate, ca_key = keystore.primary(ca_keyset)
    certificate, key = certs.issue(ca_certificate, ca_key, user, organizations=(ADMIN_GROUP,), usages=("client",),
                                   now=now, validity=lifetime)
    return keystore.trusted_certificates_pem(ca_keyset), certs.certificate_pem(certificate), certs.key_pem(key)


def _b64(data):
    return base64.b64encode(data).decode("ascii")


def tls_server_name(cluster_name, server):
    """The name to check the API server's certificate against when server names it by an address (an api_server
    given as an IP, e.g. one control-plane node): api.internal.<cluster>, which every kube-apiserver certificate of
    the cluster holds (nodeup's server certificate), where a node's own address is not; None for a name, and for a
    loopback address, which the certificate holds (127.0.0.1: on the node itself, or through a tunnel)."""
    host = urllib.parse.urlsplit(server).hostname or ""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    return None if address.is_loopback else "api.internal.%s" % cluster_name


def kubeconfig(cluster_name, server, ca_pem, certificate_pem, key_pem):
    """A kubeconfig with one cluster, user and context, each named after the cluster (as kops names them); a server
    given by address carries tls-server-name (tls_server_name)."""
    cluster = {"server": server, "certificate-authority-data": _b64(ca_pem)}
    server_name = tls_server_name(cluster_name, server)
    if server_name:
        cluster["tls-server-name"] = server_name
    return {"apiVersion": "v1", "kind": "Config", "preferences": {}, "current-context": cluster_name,
            "clusters": [{"name": cluster_name, "cluster": cluster}],
            "users": [{"name": cluster_name, "user": {"client-certificate-data": _b64(certificate_pem),
                                                      "client-key-data": _b64(key_pem)}}],
            "contexts": [{"name": cluster_name, "context": {"cluster": cluster_name, "user": cluster_name}}]}


def merge(existing, entry):
    """existing kubeconfig (dict or None) with entry's cluster, user and context replacing those of the same
    names and entry's context made current; every other context is kept."""
    merged = copy.deepcopy(existing) if existing else {"apiVersion": "v1", "kind": "Config", "preferences": {}}
    for section in ("clusters", "users", "contexts"):
        items = [i for i in merged.get(section) or [] if i.get("name") not in {e["name"] for e in entry[section]}]
        merged[section] = items + copy.deepcopy(entry[section])
    merged["current-context"] = entry["current-context"]
    return merged


def _entry(document, section, name):
    return next((i.get(section[:-1]) or {} for i in document.get(section) or [] if i.get("name") == name), {})


def still_valid(document, context, server, ca_pem, ca_keyset, margin=datetime.timedelta(hours=1), now=None):
    """Whether document's context already points at server with the cluster's CA bundle and a client certificate
    of the current CA, in system:masters, valid for at least margin more: then nothing needs writing."""
    wanted_context = _entry(document, "contexts", context)
    cluster = _entry(document, "clusters", wanted_context.get("cluster"))
    user = _entry(document, "users", wanted_context.get("user"))
    if not cluster or not user or cluster.get("server") != server or \
            cluster.get("tls-server-name") != tls_server_name(context, server) or \
            cluster.get("certificate-authority-data") != _b64(ca_pem) or not user.get("client-certificate-data"):
        return False
    try:
        certificate = certs.load_certificate(base64.b64decode(user["client-certificate-data"]))
    except ValueError:
        return False
    ca_certificate, _key = keystore.primary(ca_keyset)
    now = now or datetime.datetime.now(datetime.timezone.utc)
    organizations = [a.value for a in certificate.subject if a.oid.dotted_string == "2.5.4.10"]
    return certs.issued_by(certificate, ca_certificate) and ADMIN_GROUP in organizations and \
        certs.not_after(certificate) - now >= margin


def parse_lifetime(text):
    """kops' duration syntax for --admin ('18h', '90m', '1h30m', '3600s'; module_utils/durations.py) -> timedelta."""
    from ansible_collections.kubeops.kops.plugins.module_utils import durations
    seconds = durations.seconds(text, "lifetime")
    if seconds <= 0:
        raise CredentialsError("lifetime: %r must be longer than zero" % text)
    return datetime.timedelta(seconds=seconds)


# Credentials a module mints in memory for its own calls (validate): never written, so short.
SHORT_LIFETIME = datetime.timedelta(hours=1)
