# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""A Kubernetes API client: the official `kubernetes` Python client (what kubernetes.core uses),
imported only when a module needs it, over a kubeconfig file or a kubeconfig document.

Reads return plain JSON dicts (the API's own field names), not the client's model objects,
so the layers above work on the same data a kubectl -o json shows.
"""

from __future__ import annotations

import json

from ansible_collections.kubeops.kops.plugins.module_utils.errors import KubeError, unreachable

KUBERNETES_LIBRARY = "kubernetes"
PAGE_SIZE = 500


class KubeClientError(KubeError):
    pass


def import_kubernetes():
    """The kubernetes package, or ImportError (modules turn it into missing_required_lib('kubernetes'))."""
    import kubernetes  # pylint: disable=import-outside-toplevel
    return kubernetes


class KubeClient(object):
    """Listing what validation needs, page by page."""

    def __init__(self, api_client):
        self.api_client = api_client
        self.core = import_kubernetes().client.CoreV1Api(api_client)

    @classmethod
    def from_kubeconfig(cls, path=None, context=None, document=None):
        """From a kubeconfig file (path; None: KUBECONFIG or ~/.kube/config) or an in-memory document."""
        kubernetes = import_kubernetes()
        try:
            if document is not None:
                api_client = kubernetes.config.new_client_from_config_dict(document, context=context)
            else:
                api_client = kubernetes.config.new_client_from_config(config_file=path, context=context)
        except (kubernetes.config.ConfigException, OSError, ValueError) as exc:
            raise KubeClientError("kubeconfig %s: %s" % (path or "(from the state store)", exc))
        return cls(api_client)

    def _call(self, method, what, **kwargs):
        kubernetes = import_kubernetes()
        import urllib3  # pylint: disable=import-outside-toplevel  # the kubernetes client's transport
        try:
            response = method(_preload_content=False, _request_timeout=30, **kwargs)
        except kubernetes.client.ApiException as exc:
            raise KubeClientError("listing %s: HTTP %s %s %s" % (what, exc.status, exc.reason, _message(exc.body)))
        except (urllib3.exceptions.HTTPError, OSError) as exc:  # connection and TLS errors: name the server
            raise KubeClientError("cannot reach the Kubernetes API at %s to list %s: %s"
                                  % (self.api_client.configuration.host, what, unreachable(exc)))
        return json.loads(response.data)

    def _list(self, method, what, **kwargs):
        items, token = [], None
        while True:
            page = self._call(method, what, limit=PAGE_SIZE, _continue=token, **kwargs)
            items.extend(page.get("items") or [])
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                return items

    def nodes(self):
        return self._list(self.core.list_node, "nodes")

    def pods(self):
        return self._list(self.core.list_pod_for_all_namespaces, "pods")


def _message(body):
    try:
        return json.loads(body).get("message", "")
    except (TypeError, ValueError):
        return str(body or "")[:200]


def cluster_client(service, completed, cloud, kubeconfig=None, context=None, api_server=None):
    """The cluster's API client for a day-2 module: from a kubeconfig file when given, else short-lived admin
    credentials minted from the store's CA, for the API address (api_server, else the load balancer or DNS name)."""
    from ansible_collections.kubeops.kops.plugins.module_utils.kube import credentials, endpoint
    if kubeconfig:
        return KubeClient.from_kubeconfig(kubeconfig, context)
    name = completed["metadata"]["name"]
    keyset = credentials.cluster_ca(service.cluster_store(name), name)
    ca_pem, certificate_pem, key_pem = credentials.admin_credentials(keyset, lifetime=credentials.SHORT_LIFETIME)
    document = credentials.kubeconfig(name, endpoint.api_server(completed, cloud, api_server), ca_pem,
                                      certificate_pem, key_pem)
    return KubeClient.from_kubeconfig(document=document)
