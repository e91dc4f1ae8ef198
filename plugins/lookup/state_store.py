# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
name: state_store
short_description: Read files of a cluster from the kops state store, on the controller
version_added: 0.1.0
description:
  - Returns the text of each named file under C(<state store>/<cluster name>/), read on the controller with its
    credentials. V(s3://), V(gs://) and V(file://) stores work alike.
  - C(playbooks/nodeup.yml) uses it to hand nodes their nodeup config (and workers their kubelet bootstrap token)
    when the nodes cannot read the store themselves.
  - Files under C(pki/private/) are refused. CA keys stay where they are; a control-plane node reads them itself
    (M(kubeops.kops.node_certificates)).
options:
  _terms:
    description: Paths relative to the cluster's directory, for example V(igconfig/node/nodes/nodeupconfig.yaml).
    required: true
    type: list
    elements: str
  state_store:
    description:
      - The state store (V(s3://bucket/prefix), V(gs://bucket/prefix), V(file:///path)).
      - Give O(state_store) and O(cluster_name), or O(config_base).
    type: str
  cluster_name:
    description: The cluster's name, the directory under the state store.
    type: str
  config_base:
    description: C(<state store>/<cluster name>) in one, as a nodeup config's C(kubeops.configBase) says it.
    type: str
  endpoint:
    description: Object-store API endpoint override (an S3-compatible endpoint, or the GCS JSON API root).
    type: str
requirements:
  - boto3 (for s3:// state stores)
  - google-auth and requests (for gs:// state stores)
"""

EXAMPLES = r"""
- name: A node's nodeup config, read on the controller
  ansible.builtin.set_fact:
    nodeup_config: >-
      {{ lookup('kubeops.kops.state_store', 'igconfig/node/nodes/nodeupconfig.yaml',
                state_store='s3://my-kops-state', cluster_name='k8s.example.com') | from_yaml }}
"""

RETURN = r"""
_raw:
  description: The text of each file, in the order asked.
  type: list
  elements: str
"""

from ansible.errors import AnsibleLookupError
from ansible.module_utils.common.text.converters import to_text
from ansible.plugins.lookup import LookupBase

from ansible_collections.kubeops.kops.plugins.module_utils.statestore import layout, vfs

REFUSED_PREFIX = "pki/private/"


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        try:
            state_store, cluster_name = self.get_option("state_store"), self.get_option("cluster_name")
            if self.get_option("config_base"):
                state_store, cluster_name = layout.split_config_base(self.get_option("config_base"))
            if not state_store or not cluster_name:
                raise AnsibleLookupError("kubeops.kops.state_store: give state_store and cluster_name, or config_base "
                                         "(<state store>/<cluster name>)")
            store = vfs.open_store(state_store, endpoint=self.get_option("endpoint") or None)
            cluster_store = layout.ClusterStore(store, cluster_name)
            results = []
            for term in terms:
                relpath = term.lstrip("/")
                if relpath.startswith(REFUSED_PREFIX) or "/../" in "/%s/" % relpath:
                    raise AnsibleLookupError("kubeops.kops.state_store: %s is not readable through this lookup "
                                             "(private keys stay in the store)" % term)
                data = cluster_store.read(relpath)
                if data is None:
                    raise AnsibleLookupError("kubeops.kops.state_store: %s has no %s; run "
                                             "kubeops.kops.cluster_update first"
                                             % (cluster_store.config_base(), relpath))
                results.append(to_text(data))
            return results
        except vfs.StoreError as exc:
            raise AnsibleLookupError("kubeops.kops.state_store: %s" % exc)
