# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Runs kubeops.kops.cluster_update with the directory of the collection it comes from, printing its notices.

The module puts this collection on the nodes (nodeconfig/boot_artifacts.py).  Where Ansible found it (an
ansible.cfg's relative collections_path, ANSIBLE_COLLECTIONS_PATH, ~/.ansible/collections, a virtualenv) is known
here, on the controller; it is handed over in KUBEOPS_COLLECTION_DIR when the module runs on this controller
(connection local, as the playbooks run it), as every action of the collection does (plugin_utils/notices.py); a
value the user set is kept.  Waits longer than 10 s (an endpoint that does not answer, the nodes' wheels
downloading) are printed as they happen.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.plugin_utils.notices import NoticesAction


class ActionModule(NoticesAction):

    MODULE = "kubeops.kops.cluster_update"
