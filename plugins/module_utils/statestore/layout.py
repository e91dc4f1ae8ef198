# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""kops' state store layout for one cluster: ``<store>/<cluster>/...``.

    config                      the user's Cluster (create/replace write it)
    instancegroup/<name>        the user's InstanceGroups
    cluster-completed.spec      the completed Cluster (update writes it)
    pki/, secrets/, igconfig/, manifests/, addons/, backups/   (later layers)
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.statestore.vfs import NotFoundError, StoreError

CLUSTER_CONFIG = "config"
INSTANCE_GROUP_DIR = "instancegroup/"
COMPLETED_SPEC = "cluster-completed.spec"


def instance_group_path(name):
    return INSTANCE_GROUP_DIR + name


def list_clusters(store):
    """Names of the clusters in a store (those with a config)."""
    suffix = "/" + CLUSTER_CONFIG
    return sorted(p[:-len(suffix)] for p in store.list("") if p.endswith(suffix) and p.count("/") == 1)


class ClusterStore(object):
    def __init__(self, store, cluster_name):
        if not cluster_name or "/" in cluster_name:
            raise StoreError("invalid cluster name %r for the state store" % (cluster_name,))
        self.store = store
        self.name = cluster_name

    def path(self, relpath):
        return "%s/%s" % (self.name, relpath)

    def config_base(self):
        return self.store.url(self.name)

    def exists(self):
        return self.store.exists(self.path(CLUSTER_CONFIG))

    def read(self, relpath):
        """Bytes at a cluster-relative path, or None."""
        try:
            return self.store.read(self.path(relpath))
        except NotFoundError:
            return None

    def _read_object(self, relpath):
        data = self.read(relpath)
        if data is None:
            return None
        documents = objects.load_objects(data.decode("utf-8"), source=self.store.url(self.path(relpath)))
        if len(documents) != 1:
            raise StoreError("%s holds %d objects; expected one" % (self.store.url(self.path(relpath)), len(documents)))
        return documents[0]

    def read_cluster(self):
        return self._read_object(CLUSTER_CONFIG)

    def read_completed_spec(self):
        return self._read_object(COMPLETED_SPEC)

    def read_instance_group(self, name):
        return self._read_object(instance_group_path(name))

    def read_instance_groups(self):
        prefix = self.path(INSTANCE_GROUP_DIR)
        names = [p[len(prefix):] for p in self.store.list(prefix)]
        return [self.read_instance_group(n) for n in sorted(names) if n and "/" not in n]

    def apply(self, changes):
        """Write/delete (relpath, bytes-or-None) pairs, all or nothing.

        Object stores have no multi-object transactions, so we keep what each
        path held before and put it back if a later write fails.
        """
        previous = [(change[0], self.read(change[0])) for change in changes]
        done = []
        try:
            for relpath, data in changes:
                if data is None:
                    self.store.delete(self.path(relpath))
                else:
                    self.store.write(self.path(relpath), data)
                done.append(relpath)
        except Exception as exc:
            failed_restores = self._restore([p for p in previous if p[0] in done])
            note = (" and restoring %s failed too" % ", ".join(failed_restores)) if failed_restores else \
                "; the %d earlier write(s) were rolled back" % len(done)
            raise StoreError("state store %s: writing %s failed (%s)%s"
                             % (self.config_base(), changes[len(done)][0], exc, note))

    def _restore(self, previous):
        failed = []
        for relpath, data in previous:
            try:
                if data is None:
                    self.store.delete(self.path(relpath))
                else:
                    self.store.write(self.path(relpath), data)
            except Exception:  # keep restoring the rest; report which ones failed
                failed.append(relpath)
        return failed

    def delete_cluster(self):
        """Remove everything under <cluster>/ (kops delete cluster's last step)."""
        for relpath in self.store.list(self.name + "/"):
            self.store.delete(relpath)
