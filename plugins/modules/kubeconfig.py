#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: kubeconfig
short_description: Export an admin kubeconfig for a kops cluster, like kops export kubeconfig --admin
version_added: 0.1.0
description:
  - Mints a client certificate for O(user) in the group C(system:masters), signed by the cluster's kubernetes-ca
    from the state store's keystore, valid for O(lifetime) (kops' default, 18h), and writes a kubeconfig context
    named after the cluster, made the current context.
  - The context is merged into O(path), or the first file of E(KUBECONFIG), or C(~/.kube/config); other clusters,
    users and contexts in that file are kept. The file is written atomically with mode 0600.
  - The API address is O(api_server) when given, else the API load balancer's DNS name for clusters without DNS
    (looked up by the cluster's tags), else C(https://api.<cluster>).
  - While the file already holds a context for this server and CA with a certificate of the current CA valid for
    more than O(renew_before) hours, nothing is written (C(changed=false)).
  - The private key is never returned or shown, not even in diff mode.
options:
  cluster_name:
    description: The cluster.
    type: str
    required: true
  path:
    description: The kubeconfig file to write (relative paths are taken from the current directory).
    type: path
  api_server:
    description: The API's URL or host name, instead of the cluster's own address.
    type: str
  lifetime:
    description: How long the certificate is valid, as kops' C(--admin) takes it (C(18h), C(90m), C(1h30m)).
    type: str
    default: 18h
  user:
    description: The certificate's common name (the Kubernetes user name).
    type: str
    default: admin
  renew_before:
    description:
      - Hours before expiry from which a new certificate is minted.
      - Given in hours or in kops' form (V(30m), V(2h)).
    type: raw
    default: 1
extends_documentation_fragment:
  - kubeops.kops.state_store
  - kubeops.kops.aws
attributes:
  check_mode:
    description: Reports whether the file would change; writes nothing.
    support: full
  diff_mode:
    description: The file's contexts, clusters and servers before and after, with key and certificate data left out.
    support: full
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: Admin access for a working day
  kubeops.kops.kubeconfig:
    state_store: s3://my-kops-state
    cluster_name: k8s.example.com

- name: A separate file, valid one hour
  kubeops.kops.kubeconfig:
    state_store: s3://my-kops-state
    cluster_name: k8s.example.com
    path: ./k8s.kubeconfig
    lifetime: 1h
"""

RETURN = r"""
path:
  description: The kubeconfig file.
  returned: always
  type: str
context:
  description: The context written (the cluster's name).
  returned: always
  type: str
server:
  description: The API address in the context.
  returned: always
  type: str
expires:
  description: When the client certificate in the file expires (UTC, RFC 3339); empty in check mode when a new one
    would be minted.
  returned: always
  type: str
"""

import base64
import datetime
import os
import pathlib

from ansible_collections.kubeops.kops.plugins.module_utils.atomic import atomic_write
from ansible_collections.kubeops.kops.plugins.module_utils.module import KopsModule, reports_errors


def kubeconfig_path(option):
    if option:
        return os.path.abspath(option)
    first = (os.environ.get("KUBECONFIG") or "").split(os.pathsep)[0]
    return os.path.abspath(first) if first else os.path.join(str(pathlib.Path.home()), ".kube", "config")


def _redacted(document):
    """What diff mode shows: names and servers, never certificate or key data."""
    if not document:
        return {}
    return {"current-context": document.get("current-context"),
            "clusters": {c["name"]: (c.get("cluster") or {}).get("server") for c in document.get("clusters") or []},
            "users": sorted(u["name"] for u in document.get("users") or []),
            "contexts": {c["name"]: c.get("context") for c in document.get("contexts") or []}}


def _write(path, document, dump):
    atomic_write(path, 0o600, dump(document), dir_mode=0o700)


@reports_errors
def run(module):
    from ansible_collections.kubeops.kops.plugins.module_utils import durations, updates
    from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
    from ansible_collections.kubeops.kops.plugins.module_utils.providers import registry as providers
    from ansible_collections.kubeops.kops.plugins.module_utils.kube import credentials, endpoint
    from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs

    try:
        certs.require_cryptography()
    except ImportError as exc:
        module.fail_json(msg=str(exc))
    params = module.params
    durations.in_seconds(module, "renew_before", renew_before="h")
    name = params["cluster_name"]
    lifetime = credentials.parse_lifetime(params["lifetime"])
    service = module.service()
    completed, _groups = updates.load_completed(service, name)
    keyset = credentials.cluster_ca(service.cluster_store(name), name)
    cloud = None
    if not params["api_server"]:
        _reader, cloud = providers.cloud_for(completed, params["region"], params["profile"])
    server = endpoint.api_server(completed, cloud, params["api_server"])
    path = kubeconfig_path(params["path"])

    existing = None
    if os.path.exists(path):
        with open(path, encoding="utf-8") as stream:
            existing = objects.yaml.safe_load(stream) or {}
        if not isinstance(existing, dict):
            module.fail_json(msg="%s is not a kubeconfig (a YAML mapping); move it away or choose another path" % path)
    ca_pem = credentials.keystore.trusted_certificates_pem(keyset)
    margin = datetime.timedelta(seconds=params["renew_before"])
    current = existing and existing.get("current-context") == name and \
        credentials.still_valid(existing, name, server, ca_pem, keyset, margin=margin)
    result = dict(path=path, context=name, server=server, changed=not current)
    if current:
        user = next(u["user"] for u in existing["users"] if u["name"] == next(
            c["context"]["user"] for c in existing["contexts"] if c["name"] == name))
        certificate = certs.load_certificate(base64.b64decode(user["client-certificate-data"]))
        result["expires"] = certs.not_after(certificate).strftime("%Y-%m-%dT%H:%M:%SZ")
        module.exit_json(**result)

    ca_bundle, certificate_pem, key_pem = credentials.admin_credentials(keyset, user=params["user"], lifetime=lifetime)
    merged = credentials.merge(existing, credentials.kubeconfig(name, server, ca_bundle, certificate_pem, key_pem))
    result["expires"] = "" if module.check_mode else \
        certs.not_after(certs.load_certificate(certificate_pem)).strftime("%Y-%m-%dT%H:%M:%SZ")
    if module._diff:
        result["diff"] = {"before": objects.dump_object(_redacted(existing)), "after": objects.dump_object(_redacted(merged)),
                          "before_header": path, "after_header": path}
    if not module.check_mode:
        _write(path, merged, lambda document: objects.yaml.safe_dump(document, default_flow_style=False))
    module.exit_json(**result)


def main():
    module = KopsModule(argument_spec=dict(
        cluster_name=dict(type="str", required=True),
        path=dict(type="path"),
        api_server=dict(type="str"),
        lifetime=dict(type="str", default="18h"),
        user=dict(type="str", default="admin"),
        renew_before=dict(type="raw", default=1),
    ))
    run(module)


if __name__ == "__main__":
    main()
