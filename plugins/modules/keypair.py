#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: keypair
short_description: Manage a kops cluster's CAs and keypairs in the state store
version_added: 0.1.0
description:
  - The keystore kops keeps under C(pki/private/<keyset>/keyset.yaml) in the state store, that is the
    cluster's CAs (kubernetes-ca, apiserver-aggregator-ca, kubernetes-front-proxy-ca, etcd-clients-ca,
    etcd-manager-ca-<etcd>, etcd-peers-ca-<etcd>) and the service-account signing key.
  - O(action=ensure) creates what is missing. CA rotation is three steps, as with kops. O(action=rotate) adds a new
    keypair that is trusted but does not sign yet (C(kops create keypair)), O(action=promote) makes it the one that
    signs (C(kops promote keypair)), O(action=distrust) removes the old ones from the trust bundles
    (C(kops distrust keypair)). Roll the nodes between the steps.
  - The C(service-account) keyset signs the cluster's service-account tokens. With
    C(spec.serviceAccountIssuerDiscovery.discoveryStore), M(kubeops.kops.cluster_update) run after each step publishes
    every trusted key in the issuer's JWKS, so after O(action=rotate) and O(action=promote) tokens signed by the old
    and the new key both verify; after O(action=distrust) only the new key is published.
  - Each action is idempotent; a second run changes nothing.
  - Private keys are written 0600 (C(file://)) or server-side encrypted (C(s3://)) and are never returned.
options:
  cluster_name:
    description: The cluster.
    type: str
    required: true
  keysets:
    description: Keyset names, or V(all) for every keyset of the cluster.
    type: list
    elements: str
    default: [all]
  action:
    description: What to do to the keysets.
    type: str
    choices: [ensure, rotate, promote, distrust]
    default: ensure
extends_documentation_fragment:
  - kubeops.kops.state_store
  - kubeops.kops.aws
  - kubeops.kops.spec_history
attributes:
  check_mode:
    description: Computes the same changes and writes nothing.
    support: full
  diff_mode:
    description: Lists the keysets that change, with key ids, primary and distrust (never key material).
    support: full
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: Create the cluster's CAs
  kubeops.kops.keypair:
    state_store: s3://my-kops-state
    cluster_name: k8s.example.com

- name: Start rotating the Kubernetes CA (then roll the nodes)
  kubeops.kops.keypair:
    state_store: s3://my-kops-state
    cluster_name: k8s.example.com
    keysets: [kubernetes-ca]
    action: rotate
"""

RETURN = r"""
keysets:
  description: Every keyset named, with its key ids, which is primary, which are distrusted, issue and expiry dates.
  returned: always
  type: list
  elements: dict
changed_keysets:
  description: Names of the keysets written (or that would be, in check mode).
  returned: always
  type: list
  elements: str
"""

import difflib

from ansible_collections.kubeops.kops.plugins.module_utils.module import KopsModule, reports_errors


@reports_errors
def run(module):
    from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
    from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs, keystore

    try:
        certs.require_cryptography()
    except ImportError as exc:
        module.fail_json(msg=str(exc))
    params = module.params
    service = module.service()
    cluster, groups = service.read(params["cluster_name"])
    if cluster is None:
        module.fail_json(msg="cluster %r not found in the state store; create it first" % params["cluster_name"])
    store = service.cluster_store(params["cluster_name"])
    known = keystore.keyset_names(service.validate(cluster, groups))
    names = known if "all" in params["keysets"] else params["keysets"]
    unknown = [name for name in names if name not in known and keystore.load(store, name) is None]
    if unknown:
        module.fail_json(msg="keysets: %s %s no keyset of cluster %s; its keysets are %s (or all)" % (
            ", ".join(_with_closest(name, known) for name in unknown), "is" if len(unknown) == 1 else "are",
            params["cluster_name"], ", ".join(known)))

    changes, views, changed = [], [], []
    for name in names:
        current = keystore.load(store, name)
        wanted = current if current is not None else keystore.new_keyset(name)
        if params["action"] != "ensure":
            if current is None:
                module.fail_json(msg="keyset %s does not exist; run action=ensure first" % name)
            wanted = keystore.ACTIONS[params["action"]](current)
        if wanted is not current:
            changes.append((keystore.path(name), keystore.dump(wanted)))
            changed.append(name)
        views.append(keystore.public_view(wanted))
    if changes and not module.check_mode:
        store.apply(changes, operation="keypair", record={"keysets": changed, "action": params["action"]})
    result = dict(changed=bool(changed), changed_keysets=changed, keysets=views)
    if module._diff and changed:
        shown = [v for v in views if v["name"] in changed]
        result["diff"] = {"before": "", "after": objects.dump_object({"keysets": shown})}
    module.exit_json(**result)


def _with_closest(name, known):
    close = difflib.get_close_matches(name, known, n=1)
    return "%s (did you mean %s?)" % (name, close[0]) if close else name


def main():
    module = KopsModule(argument_spec=dict(
        cluster_name=dict(type="str", required=True),
        keysets=dict(type="list", elements="str", default=["all"], no_log=False),  # names, not key material
        action=dict(type="str", choices=["ensure", "rotate", "promote", "distrust"], default="ensure"),
        change_cause=dict(type="str"),
    ))
    run(module)


if __name__ == "__main__":
    main()
