#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: etcd_backup
short_description: Take, list, fetch and prune etcd backups in a kops backup store
version_added: 0.1.0
description:
  - The backups etcd-manager keeps, in its layout. A backup is C(<backup_store>/<RFC 3339 UTC time>-<sequence>/)
    holding C(etcd.backup.gz) (a gzipped C(etcdctl snapshot save)) and C(_etcd_backup.meta) (etcd version and
    member count, as JSON).
  - O(action=save) snapshots the member at O(endpoint), on the leader only when O(only_if_leader=true), then prunes.
  - O(action=prune) removes what etcd-manager's cleanup removes. Everything younger than an hour is kept, then the
    first backup of each hour for 7 days, then the first of each day for O(retention_days).
  - O(action=list) lists the backups. O(action=fetch) writes one (O(name), or the newest) to O(dest), unzipped,
    ready for C(etcdctl snapshot restore).
  - The store may be C(file://), C(s3://) or C(gs://), as for the state store.
options:
  backup_store:
    description: The etcd cluster's backup store, C(kubeops.etcdClusters[].backupStore) of the nodeup config.
    type: str
    required: true
  action:
    description: What to do.
    type: str
    choices: [save, list, fetch, prune]
    default: save
  endpoint:
    description: Client URL of the local member, for O(action=save).
    type: str
  cacert:
    description: CA bundle that signs the member's serving certificate.
    type: path
  cert:
    description: Client certificate (signed by C(etcd-clients-ca)).
    type: path
  key:
    description: Key of O(cert).
    type: path
  etcdctl:
    description: The etcdctl binary.
    type: path
    default: etcdctl
  only_if_leader:
    description: With O(action=save), do nothing unless the member at O(endpoint) is the leader (as etcd-manager).
    type: bool
    default: true
  retention_days:
    description: Daily backups are kept this long (C(ETCD_MANAGER_DAILY_BACKUPS_RETENTION)).
    type: int
    default: 90
  name:
    description: The backup to fetch; V(latest) or unset means the newest.
    type: str
  dest:
    description: Where O(action=fetch) writes the snapshot (mode 0600).
    type: path
  store_endpoint:
    description: Object-store API endpoint override (S3-compatible endpoint, or the GCS JSON API root).
    type: str
extends_documentation_fragment:
  - kubeops.kops.aws
attributes:
  check_mode:
    description: Says which backup would be taken, fetched or removed and changes nothing.
    support: full
  diff_mode:
    description: Lists the backups that would be added or removed.
    support: full
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: Back up etcd main now (on the leader)
  kubeops.kops.etcd_backup:
    backup_store: s3://my-kops-state/k8s.example.com/backups/etcd/main
    endpoint: https://127.0.0.1:4001
    cacert: /etc/kubernetes/pki/etcd-main/server-ca.crt
    cert: /etc/kubernetes/pki/etcd-main/etcdctl.crt
    key: /etc/kubernetes/pki/etcd-main/etcdctl.key

- name: Fetch the newest backup for a restore
  kubeops.kops.etcd_backup:
    backup_store: s3://my-kops-state/k8s.example.com/backups/etcd/main
    action: fetch
    name: latest
    dest: /var/lib/kubeops/etcd-restore/main/snapshot.db
"""

RETURN = r"""
name:
  description: The backup taken or fetched (none when this member is not the leader).
  returned: O(action=save) or O(action=fetch)
  type: str
  sample: 2026-11-22T16:00:00Z-000042
backups:
  description: Backup names, oldest first.
  returned: O(action=list)
  type: list
  elements: str
removed:
  description: Backups removed by the retention rules (or that would be, in check mode).
  returned: O(action=save) or O(action=prune)
  type: list
  elements: str
skipped_reason:
  description: Why no backup was taken.
  returned: when O(action=save) ran on a follower
  type: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws


def main():
    module = AnsibleModule(argument_spec=aws.argument_spec(dict(
        backup_store=dict(type="str", required=True),
        action=dict(type="str", choices=["save", "list", "fetch", "prune"], default="save"),
        endpoint=dict(type="str"),
        cacert=dict(type="path"),
        cert=dict(type="path"),
        key=dict(type="path", no_log=False),  # a file path, not key material
        etcdctl=dict(type="path", default="etcdctl"),
        only_if_leader=dict(type="bool", default=True),
        retention_days=dict(type="int", default=90),
        name=dict(type="str"),
        dest=dict(type="path"),
        store_endpoint=dict(type="str"),
    )), required_if=[("action", "save", ("endpoint", "cacert", "cert", "key")), ("action", "fetch", ("dest",))],
        supports_check_mode=True)
    aws.configure_module(module)
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import etcd_node
    try:
        result = etcd_node.run_action(module.params, check_mode=module.check_mode)
    except (ValueError, OSError) as exc:
        module.fail_json(msg=str(exc))
    if module._diff and result.get("changed"):
        added = [result["name"]] if result.get("name") and module.params["action"] == "save" else []
        result["diff"] = {"before": "", "after": "".join("+ %s\n" % n for n in added)
                          + "".join("- %s\n" % n for n in result.get("removed") or [])}
    module.exit_json(**result)


if __name__ == "__main__":
    main()
