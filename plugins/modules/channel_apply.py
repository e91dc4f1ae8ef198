#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: channel_apply
short_description: Apply an addons channel to a cluster, like kops' channels apply channel
version_added: 0.1.0
description:
  - "Reads an addons channel (C(kind: Addons), kops' C(addons/bootstrap-channel.yaml)) and applies each addon whose
    recorded version differs, as kops' C(channels apply channel --yes) does from the C(kops-channels) static pod."
  - What was applied is recorded as kops records it, on the addon's namespace (C(kube-system) unless the addon
    names another) as the annotation C(addons.k8s.io/<addon name>), the JSON of C(channel), C(id),
    C(manifestHash) and C(systemGeneration). An addon is applied when it has no record, when its C(id) or
    C(manifestHash) differ from the record, or when the record's C(systemGeneration) is older.
  - Applying an addon server-side applies every object of its manifest (field manager C(kubeops-channels), forced,
    as kops forces), then deletes the objects of the addon's C(prune) kinds, found by their label and field
    selectors, that the manifest no longer has, then, on an update of an addon with C(needsRollingUpdate), annotates
    the nodes it names C(kops.k8s.io/needs-update) (rolling updates replace them), then writes the record.
  - One addon's failure does not stop the others; the task fails at the end naming each failed addon, whose record
    is left as it was so the next run tries again.
  - The API is reached through O(kubeconfig), or else with a short-lived (1 h) admin client certificate
    (C(O=system:masters)) this module issues itself, in memory, from the C(kubernetes-ca) keypair under
    O(config_base), kept for the run only in 0600 files of a private temporary directory that is removed after.
  - Calls go through C(requests); the C(kubernetes) client is needed only to read a O(kubeconfig).
options:
  channel:
    description:
      - Where the channel is, a state-store URL (C(s3://), C(gs://), C(file://)), an C(https://) URL or a path on
        the host. Manifests named relative to it are read beside it.
      - The record's C(channel) field is this string, as kops records its argument.
      - Default, C(<config_base>/addons/bootstrap-channel.yaml).
    type: str
  config_base:
    description:
      - The cluster's location in the state store, C(<state store>/<cluster name>) (the nodeup config's
        C(kubeops.configBase)), for the default O(channel) and for the C(kubernetes-ca) keypair the admin
        credential is issued from.
      - One of O(config_base) and O(kubeconfig) is required; O(config_base) is also required without O(channel).
    type: str
  kubeconfig:
    description: A kubeconfig file to reach the API with, instead of a credential issued from the state store.
    type: path
  context:
    description: The O(kubeconfig) context to use (default, its current context).
    type: str
  api_server:
    description: The API's URL for the issued credential; on a control-plane node the local API server.
    type: str
    default: https://127.0.0.1
  endpoint:
    description: Object-store API endpoint override (an S3-compatible endpoint, or the GCS JSON API root).
    type: str
extends_documentation_fragment:
  - kubeops.kops.aws
requirements:
  - requests
  - cryptography (for the issued credential)
  - kubernetes (the Python client), only with O(kubeconfig)
attributes:
  check_mode:
    description: Plans only, with reads (the channel, the records, the prune candidates, the nodes); no write is
      made to the API.
    support: full
  diff_mode:
    description: The records before and after of each addon to apply, with the objects applied and pruned and the
      nodes annotated (names only, never object contents).
    support: full
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: Apply the bootstrap channel on a control-plane node
  kubeops.kops.channel_apply:
    config_base: s3://my-kops-state/k8s.example.com

- name: Plan a channel on disk against a cluster, from a workstation
  kubeops.kops.channel_apply:
    channel: /srv/addons/bootstrap-channel.yaml
    kubeconfig: ~/.kube/config
  check_mode: true
"""

RETURN = r"""
addons:
  description:
    - Per addon of the channel, C(name), C(namespace), C(action) (C(install), C(update), C(unchanged), or C(pki)
      when only the PKI of a needsPKI addon is missing), C(current) (the record found, or null), C(wanted) (the record written), C(manifest) (its location).
    - For addons installed or updated, C(applied) and C(pruned) (C(Kind namespace/name)) and C(nodes_annotated);
      C(pki), the CA Secret and cert-manager Issuer made for a needsPKI addon (as kops' channels do).
      in check mode what would be; C(error) when the addon failed.
  returned: always
  type: list
  elements: dict
  sample:
    - name: coredns.addons.k8s.io
      namespace: kube-system
      action: install
      current: null
      wanted: {channel: s3://my-kops-state/k8s.example.com/addons/bootstrap-channel.yaml, id: k8s-1.12,
               manifestHash: 0b180b32, systemGeneration: 1}
      manifest: s3://my-kops-state/k8s.example.com/addons/coredns.addons.k8s.io/k8s-1.12.yaml
      applied: [ServiceAccount kube-system/coredns, Deployment kube-system/coredns]
      pruned: []
      nodes_annotated: []
channel:
  description: The channel applied.
  returned: always
  type: str
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.kubeops.kops.plugins.module_utils.errors import reported
from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws


def api_service(params):
    """The API: through the kubeconfig, or with an admin certificate issued from the store's CA."""
    from ansible_collections.kubeops.kops.plugins.module_utils.kube import channels, credentials
    if params["kubeconfig"]:
        return channels.ApiService.from_kubeconfig(params["kubeconfig"], params["context"])
    from ansible_collections.kubeops.kops.plugins.module_utils.statestore import layout
    cluster_store = layout.cluster_store_at(params["config_base"], params["endpoint"])
    cluster_name = cluster_store.name
    ca_pem, certificate_pem, key_pem = credentials.admin_credentials(
        credentials.cluster_ca(cluster_store, cluster_name), user="kubeops-channels",
        lifetime=credentials.SHORT_LIFETIME)
    server = params["api_server"] if "://" in params["api_server"] else "https://" + params["api_server"]
    return channels.ApiService.from_credentials(server, ca_pem, certificate_pem, key_pem)


@reported  # ChannelError, CredentialsError, StoreError, KubeClientError: they name the fix
def run(module):
    from ansible_collections.kubeops.kops.plugins.module_utils.kube import channels
    params = module.params
    if params["kubeconfig"]:
        try:
            __import__("kubernetes")
        except ImportError as exc:
            module.fail_json(msg=missing_required_lib("kubernetes", reason="to read a kubeconfig"), exception=str(exc))
    else:
        from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs
        certs.require_cryptography()
    location = params["channel"] or params["config_base"].rstrip("/") + "/addons/bootstrap-channel.yaml"
    api = api_service(params)
    try:
        runner = channels.ChannelRunner(api, location, read=channels.LocationReader(params["endpoint"]))
        result = runner.run(check_mode=module.check_mode)
    finally:
        api.close()
    for warning in result.pop("warnings"):
        module.warn(warning)
    errors = result.pop("errors")
    result["channel"] = location
    if module._diff:
        result["diff"] = channels.diff(result["addons"])
    if errors:
        module.fail_json(msg="applying channel %s: %s" % (location, "; ".join(errors)), errors=errors, **result)
    module.exit_json(**result)


def main():
    module = AnsibleModule(argument_spec=aws.argument_spec(dict(
        channel=dict(type="str"),
        config_base=dict(type="str"),
        kubeconfig=dict(type="path"),
        context=dict(type="str"),
        api_server=dict(type="str", default="https://127.0.0.1"),
        endpoint=dict(type="str"),
    )), required_one_of=[("config_base", "kubeconfig"), ("config_base", "channel")], supports_check_mode=True)
    aws.configure_module(module)
    run(module)


if __name__ == "__main__":
    main()
