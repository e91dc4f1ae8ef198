# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Kubeconfigs as kops' nodeup writes them (pkg/kubeconfig's KubectlConfig, marshalled by kops.ToRawYaml).

Two shapes: the one nodetasks.KubeConfig writes for a certificate the node issued
itself (the client certificate, its key and the signer's certificate inline; context
service-account-context), and the webhook configs kube-apiserver reads for
authentication.aws / authentication.kopeio (/etc/kubernetes/authn.config).
"""

from __future__ import annotations

import base64

from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import goyaml

# authentication.aws: the authenticator's certificate and key, owned by its user (uid 10000, the user inside its
# container: kops' wellknownusers.AWSAuthenticator; roles/nodeup makes it).
AWS_IAM_AUTHENTICATOR_HOME = "/srv/kubernetes/aws-iam-authenticator"


def _data(pem):
    """A []byte field as encoding/json writes it (base64)."""
    return base64.b64encode(pem if isinstance(pem, bytes) else pem.encode("ascii")).decode("ascii")


def _document(kind, api_version, current_context, cluster_name, cluster, context_name, context, user_name, user):
    # KubectlConfig has no omitempty on kind, apiVersion and current-context; KubectlCluster and KubectlUser do.
    return {"kind": kind, "apiVersion": api_version, "current-context": current_context,
            "clusters": [{"name": cluster_name, "cluster": cluster}],
            "contexts": [{"name": context_name, "context": context}],
            "users": [{"name": user_name, "user": user}]}


def issued(name, server, cert_pem, key_pem, ca_pem):
    """nodetasks.KubeConfig: a client certificate issued on the node, inline (mode 0400 on disk)."""
    cluster = {"server": server} if server else {}
    if ca_pem:
        cluster["certificate-authority-data"] = _data(ca_pem)
    user = {}
    if cert_pem:
        user["client-certificate-data"] = _data(cert_pem)
    if key_pem:
        user["client-key-data"] = _data(key_pem)
    return goyaml.dumps(_document("Config", "v1", "service-account-context", "local", cluster,
                                  "service-account-context", {"cluster": "local", "user": name}, name, user))


def credentials(text):
    """(certificate PEM, key PEM) inline in a kubeconfig written by issued(), or (None, None)."""
    if not text:
        return None, None
    try:
        document = goyaml.load(text)
        user = document["users"][0]["user"]
        return (base64.b64decode(user["client-certificate-data"]), base64.b64decode(user["client-key-data"]))
    except Exception:  # pylint: disable=broad-except  # anything unreadable is issued again
        return None, None


def authn_config(api_server_config, ca_pem):
    """(content, mode) of kube-apiserver's webhook authentication config, or None (kops' writeAuthenticationConfig)."""
    authentication = api_server_config.get("Authentication") or {}
    if authentication.get("kopeio") is not None:
        return goyaml.dumps(_document(
            "Config", "v1", "webhook", "webhook", {"server": "http://127.0.0.1:9001/hooks/authn"},
            "webhook", {"cluster": "webhook", "user": "kube-apiserver"}, "kube-apiserver", {})), 0o644
    if authentication.get("aws") is not None:
        cluster = {"server": "https://127.0.0.1:21362/authenticate"}
        if ca_pem:
            cluster["certificate-authority-data"] = _data(ca_pem)
        return goyaml.dumps(_document(
            "", "", "webhook", "aws-iam-authenticator", cluster, "webhook",
            {"cluster": "aws-iam-authenticator", "user": "kube-apiserver"}, "kube-apiserver", {})), 0o600
    return None
