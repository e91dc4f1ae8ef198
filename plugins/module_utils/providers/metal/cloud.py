# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The metal cloud: kops' metal.Cloud, which holds nothing.  The machines are the user's own (the hosts of an
Ansible inventory), so there is nothing to look up, own or delete in any API; the engine still gets a Cloud to
run an empty plan against, as every other cloud's."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.base import Cloud


class MetalCloud(Cloud):
    provider = "metal"

    def ownership_tags(self):
        """No object carries the cluster's tags: there are no cloud objects."""
        return {}


def api_public_name(spec):
    """kops' metal GetApiIngressStatus: the API's address is spec.api.publicName (v1alpha2 masterPublicName)."""
    return (spec or {}).get("masterPublicName") or None
