# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The cluster's own record of the service-account IAM objects (IRSA) its runs may have made, kept in the state store
beside kops' files (RECORD; kops ignores it, cluster_delete removes it with the rest), as kops keeps its own state.

IAM cannot be asked for a cluster's objects by tag: ListRoles lists every role of the account (paged: 10,000 roles
are 10 pages) and the Resource Groups Tagging API lists no roles.  So the roles and the OIDC provider the spec no
longer asks for (IRSA turned off, an addon or a serviceAccountExternalPermissions entry removed, the issuer changed)
are looked for among the names this record holds, each asked of IAM by name (tasks/aws/iam.py's orphans: GetRole,
GetOpenIDConnectProvider), and deleted only when they carry this cluster's ownership tags.  A run's requests then
depend on the cluster, never on the account.

- Before a direct run (recall): the record is read, or not even that on s3:// and gs:// when it holds exactly what
  the tasks ask for (the listing's md5 says so: a no-op asks nothing more), and handed to the run's cloud.  A real
  run then records what its tasks ask for as well, before anything is made, so a run cut off after a create
  leaves a record that names what it made.
- After a direct run that succeeded (record): the record is what the tasks ask for; what was deleted, was gone or
  was not this cluster's any more is dropped.
- No record (a cluster last applied by kops or by an earlier kubeops.kops, or a record lost): the account is listed
  once, as before the record (tasks/aws/iam.listed_service_account_iam), and the real run records what it found.
  Check mode writes nothing, so it lists until a real run has recorded.
"""

from __future__ import annotations

import json

from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws import iam

RECORD = ".kubeops-service-account-iam"
# The record's keys: ServiceAccountIAM's fields.
KEYS = {"roles": "roles", "oidcProviders": "oidc_providers"}


def recall(cloud, store, tasks, dry_run):
    """Hand the cloud what the cluster's record says earlier runs made (tasks/aws/iam.RECORDED); a real run records
    what the tasks ask for too.  Returns what the tasks ask for: what record() keeps after a run that succeeded."""
    wanted = iam.wanted_service_account_iam(tasks)
    recorded = read(store, wanted)
    if recorded is None:
        recorded = iam.listed_service_account_iam(cloud, wanted)
    cloud.remember(iam.RECORDED, recorded)
    if not dry_run:
        _write(store, recorded | wanted)
    return wanted


def record(store, wanted, dry_run):
    """After a direct run that succeeded: the record is what its tasks ask for (a run that failed keeps the names
    it had, so the next run looks for them again)."""
    if not dry_run:
        _write(store, wanted)


def encode(names):
    return (json.dumps({key: sorted(getattr(names, field)) for key, field in KEYS.items()}, indent=2, sort_keys=True)
            + "\n").encode("utf-8")


def read(store, expected):
    """The recorded ServiceAccountIAM, or None without a usable record.  expected: what the record most likely holds
    (the tasks' names), whose md5 in the store's listing spares the read."""
    if store.matches(RECORD, encode(expected)):
        return expected
    data = store.read(RECORD)
    if data is None:
        return None
    try:
        document = json.loads(data.decode("utf-8"))
    except ValueError:
        return None  # not ours to trust: the account is listed and the record written again
    if not isinstance(document, dict) or not all(
            isinstance(document.get(key), list) and all(isinstance(n, str) for n in document[key]) for key in KEYS):
        return None
    return iam.ServiceAccountIAM(**{field: frozenset(document[key]) for key, field in KEYS.items()})


def _write(store, names):
    changes = store.differing([(RECORD, encode(names))])
    if changes:
        store.apply(changes)
