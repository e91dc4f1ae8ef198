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
KOPS_VERSION = "kops-version.txt"
ETCD_CLUSTER_SPEC = "backups/etcd/%s/control/etcd-cluster-spec"


def instance_group_path(name):
    return INSTANCE_GROUP_DIR + name


def cluster_changes(cluster):
    """The (relpath, bytes) that stores a user Cluster at <cluster>/config, for ClusterStore.apply."""
    return [(CLUSTER_CONFIG, objects.dump_object(cluster).encode("utf-8"))]


def instance_group_changes(instance_group):
    """The (relpath, bytes) that stores a user InstanceGroup at <cluster>/instancegroup/<name>."""
    name = objects.name_of(instance_group)
    if not name or "/" in name:
        raise StoreError("invalid instance group name %r for the state store" % (name,))
    return [(instance_group_path(name), objects.dump_object(instance_group).encode("utf-8"))]


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
        previous = {}
        for relpath, _data in changes:
            if relpath not in previous:
                previous[relpath] = self.read(relpath)
        done = 0
        try:
            for relpath, data in changes:
                if data is None:
                    self.store.delete(self.path(relpath))
                else:
                    self.store.write(self.path(relpath), data)
                done += 1
        except Exception as exc:
            # The failed call is restored too: a write that timed out may still have landed.
            touched = []
            for relpath, _data in changes[:done + 1]:
                if relpath not in touched:
                    touched.append(relpath)
            failed_restores = self._restore([(p, previous[p]) for p in reversed(touched)])
            if failed_restores:
                note = "; restoring %s failed too, so the store is half-written" % ", ".join(failed_restores)
            else:
                note = "; the %d earlier change(s) were rolled back" % done
            relpath, data = changes[done]
            raise StoreError("state store %s: %s %s failed (%s)%s"
                             % (self.config_base(), "deleting" if data is None else "writing", relpath, exc, note))

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
