# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Where a cluster's API answers, as kops' kubeconfig export decides it: the API load balancer's
DNS name for clusters without DNS (dns: None), else https://<spec.api.publicName>, which
defaults to api.<cluster>; an explicit api_server wins."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.errors import KubeError


class EndpointError(KubeError):
    pass


def _uses_dns(spec):
    return ((spec.get("topology") or {}).get("dns") or {}).get("type", "Public") != "None"


def api_server(completed, cloud=None, explicit=None):
    """https URL of the cluster's API; cloud: the provider's cloud (for the load balancer lookup)."""
    if explicit:
        return explicit if "://" in explicit else "https://" + explicit
    spec, name = completed["spec"], completed["metadata"]["name"]
    if _uses_dns(spec):
        return "https://" + ((spec.get("api") or {}).get("publicName") or spec.get("masterPublicName") or "api." + name)
    if not (spec.get("api") or {}).get("loadBalancer"):
        raise EndpointError("cluster %s has neither DNS nor an API load balancer: pass api_server" % name)
    if cloud is None:
        raise EndpointError("the API load balancer of cluster %s is looked up in its cloud: pass api_server" % name)
    # readers.py, not registry.py: channel_apply runs this on a control-plane node and must not ship the drivers.
    from ansible_collections.kubeops.kops.plugins.module_utils.providers import readers
    found = readers.reader_for(spec).api_endpoint(cloud)
    if not found:
        raise EndpointError("no API load balancer tagged for cluster %s (Name=api.%s); run update_cluster.yml first, "
                            "or pass api_server" % (name, name))
    return "https://" + found
