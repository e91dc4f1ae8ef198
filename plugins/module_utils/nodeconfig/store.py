# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""What `update cluster` writes to the state store for the nodes.

The keysets the nodes need (created when missing, as kops' PKI model does on
update) and one nodeup config per instance group.  On AWS workers get their
credentials from the bootstrap service (docs/bootstrap-service.md); only where
it cannot verify a worker (other clouds) is there a kubelet bootstrap token (a
kops-format secret) and the addon that lets the API server accept it and
approve the kubelets' CSRs for this cluster only.  All are returned as
(path, bytes) changes for one all-or-nothing store write.
"""

from __future__ import annotations

import base64
import concurrent.futures
import hashlib
import json
import os
import secrets
import string

from ansible_collections.kubeops.kops.plugins.module_utils.addons import node_labeller as node_labeller_addon
from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import config as nodeup_config, node_labels
from ansible_collections.kubeops.kops.plugins.module_utils.pki import keystore
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import layout
from ansible_collections.kubeops.kops.plugins.module_utils.statestore.vfs import ABSENT

SECRET_PATH = "secrets/%s"
BOOTSTRAP_ADDON_PATH = "addons/kubelet-bootstrap.kubeops.io/k8s-1.20.yaml"
TOKEN_ALPHABET = string.ascii_lowercase + string.digits


def new_bootstrap_token():
    """A Kubernetes bootstrap token: [a-z0-9]{6}.[a-z0-9]{16}."""
    def pick(count):
        return "".join(secrets.choice(TOKEN_ALPHABET) for index in range(count))
    return "%s.%s" % (pick(6), pick(16))


def secret_bytes(value):
    """kops' secret file format: JSON with the value base64-encoded under Data."""
    return json.dumps({"Data": base64.b64encode(value.encode("utf-8")).decode("ascii")}).encode("utf-8")


def secret_value(data):
    return base64.b64decode(json.loads(data.decode("utf-8"))["Data"]).decode("utf-8")


def bootstrap_addon(cluster_name, token):
    """The bootstrap-token Secret and the RBAC that lets only this cluster's token group bootstrap kubelets."""
    token_id, token_secret = token.split(".")
    group = nodeup_config.bootstrap_group(cluster_name)
    documents = [
        {"apiVersion": "v1", "kind": "Secret", "type": "bootstrap.kubernetes.io/token",
         "metadata": {"name": "bootstrap-token-%s" % token_id, "namespace": "kube-system",
                      "labels": {"addon.kops.k8s.io/name": "kubelet-bootstrap.kubeops.io"}},
         "stringData": {"token-id": token_id, "token-secret": token_secret, "auth-extra-groups": group,
                        "usage-bootstrap-authentication": "true", "usage-bootstrap-signing": "true",
                        "description": "kubelet TLS bootstrapping for %s (kubeops.kops)" % cluster_name}},
    ]
    bindings = (("kubeops:kubelet-bootstrap", "system:node-bootstrapper", group),
                ("kubeops:node-autoapprove-bootstrap",
                 "system:certificates.k8s.io:certificatesigningrequests:nodeclient", group),
                ("kubeops:node-autoapprove-certificate-rotation",
                 "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", "system:nodes"),
                ("kubeops:node-proxier", "system:node-proxier", "system:nodes"))
    for name, role, subject in bindings:
        documents.append({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": name, "labels": {"addon.kops.k8s.io/name": "kubelet-bootstrap.kubeops.io"}},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": subject}]})
    return objects.dump_objects(documents).encode("utf-8")


def public_keyset(keyset):
    """What the nodeup configs use of a keyset: its name, primary id and each keypair's id, certificate and
    distrust time; never the private material (only these fields are copied)."""
    keys = [{field: item[field] for field in ("id", "publicMaterial", "distrustTimestamp") if field in item}
            for item in keyset["spec"]["keys"]]
    return {"apiVersion": keyset.get("apiVersion"), "kind": keyset.get("kind"),
            "metadata": {"name": keyset["metadata"]["name"]},
            "spec": {"type": keyset["spec"].get("type"), "primaryId": keyset["spec"]["primaryId"], "keys": keys}}


def _unchanged(entry, fingerprint):
    """Whether a keyset object, as this run's listing shows it, is the one a bundle entry was made from."""
    version, md5 = fingerprint
    return (md5 is not None and md5 == entry.get("md5")) or (entry.get("version") is not None
                                                             and version == entry["version"])


def bundled_keysets(cluster_store, names):
    """{name: public keyset} from the store's keyset bundle (layout.KEYSET_BUNDLE) when every named keyset
    is there and unchanged since the bundle was made (its listed version or md5); else None (read them)."""
    fingerprints = {name: cluster_store.fingerprint(keystore.path(name)) for name in names}
    if any(f is None or f[0] is ABSENT for f in fingerprints.values()):
        return None  # a keyset to create, or one an unfinished journal is writing: no bundle can be current
    data = cluster_store.read(layout.KEYSET_BUNDLE)
    if data is None:
        return None
    try:
        entries = json.loads(data.decode("utf-8"))["keysets"]
        if all(_unchanged(entries[name], fingerprints[name]) for name in names):
            return {name: public_keyset(entries[name]["keyset"]) for name in names}
    except (ValueError, KeyError, TypeError, AttributeError):
        pass  # not a bundle this version wrote: the keysets are read and the bundle written again
    return None


def keyset_bundle(cluster_store, names):
    """The bundle's bytes for the named keysets as this run read or wrote them, or None when one is not in
    the store (a dry run that would create it)."""
    entries = {}
    for name in names:
        keyset = keystore.load(cluster_store, name)  # read (or written) earlier in the run: no request
        fingerprint = cluster_store.fingerprint(keystore.path(name))
        if keyset is None or fingerprint is None or fingerprint[0] is ABSENT:
            return None
        entries[name] = {"version": fingerprint[0], "md5": fingerprint[1], "keyset": public_keyset(keyset)}
    return json.dumps({"kind": "KubeopsPublicKeysets", "note": "public parts of pki/private/*/keyset.yaml for "
                       "kubeops.kops' nodeup configs; kops ignores this file", "keysets": entries},
                      indent=1, sort_keys=True).encode("utf-8")


def refresh_keyset_bundle(cluster_store, completed):
    """After a run's writes (under its lease): write the keyset bundle when it is missing or stale, so the
    next run reads it instead of each keyset.  A cache of what the keysets hold, not reported as a change."""
    names = keystore.keyset_names(completed)
    if bundled_keysets(cluster_store, names) is not None:
        return False
    data = keyset_bundle(cluster_store, names)
    if data is None:
        return False
    cluster_store.apply([(layout.KEYSET_BUNDLE, data)])
    return True


def ensure_keysets(cluster_store, completed):
    """({name: keyset}, [(path, bytes)] for the keysets that had to be created).

    With a current keyset bundle, its public parts (all the nodeup configs use) in one read."""
    names = keystore.keyset_names(completed)
    bundled = bundled_keysets(cluster_store, names)
    if bundled is not None:
        return bundled, []
    keysets = {name: keystore.load(cluster_store, name) for name in names}
    missing = [name for name in names if keysets[name] is None]
    if missing:
        # A new cluster makes nine CAs, each an RSA key: OpenSSL generates them without holding the GIL, so side by
        # side they take a core each instead of half a second in a row.
        with concurrent.futures.ThreadPoolExecutor(max_workers=min(len(missing), os.cpu_count() or 1)) as pool:
            keysets.update(zip(missing, pool.map(keystore.new_keyset, missing)))
    return keysets, [(keystore.path(name), keystore.dump(keysets[name])) for name in missing]


def ensure_bootstrap_token(cluster_store):
    """(token, [(path, bytes)] when it had to be created)."""
    path = SECRET_PATH % nodeup_config.KUBELET_BOOTSTRAP_SECRET
    data = cluster_store.read(path)
    if data is not None:
        return secret_value(data), []
    token = new_bootstrap_token()
    return token, [(path, secret_bytes(token))]


def dump_config(document):
    return objects.dump_object(document)


def additional_objects(cluster_store):
    """The cluster's additional objects as kops stores them (clusteraddons/default), [] when it has none."""
    data = cluster_store.read(objects.ADDITIONAL_OBJECTS_PATH)
    return objects.load_additional_objects(data.decode("utf-8"), objects.ADDITIONAL_OBJECTS_PATH) if data else []


def node_files(cluster_store, completed, groups, etcd_sha256=None, warn=None):
    """([(cluster-relative path, bytes)] to write, {instance group: sha256 of its nodeup config}).

    Keysets and the token are only in the list when they are new; every
    nodeup config and the bootstrap addon are always listed (callers write
    the ones that differ from the store).
    """
    keysets, changes = ensure_keysets(cluster_store, completed)
    name = completed["metadata"]["name"]
    config_base = cluster_store.config_base()
    hashes, documents = {}, {}
    additional = additional_objects(cluster_store)
    unapplied = sorted({"%s/%s" % (o.get("apiVersion"), o.get("kind")) for o in additional
                        if objects.group_kind(o) != objects.KUBE_SCHEDULER_CONFIGURATION})
    if unapplied and warn:
        warn("the cluster's additional objects %s are stored (%s) but not applied to the cluster: kops applies them as "
             "its cluster-addons.kops.k8s.io addon, which kubeops.kops does not render yet; apply them yourself"
             % (", ".join(unapplied), objects.ADDITIONAL_OBJECTS_PATH))
    for group in groups:
        if (group.get("spec") or {}).get("role") == objects.ROLE_BASTION:
            continue  # kops' bastions boot without nodeup: no config, and no user data pinning one
        documents[objects.name_of(group)] = nodeup_config.build_config(completed, group, keysets, config_base,
                                                                       etcd_sha256, additional)
    said = set()
    for document in documents.values():  # how the hashes of an etcd version asset_data does not pin were obtained
        for etcd in (document.get("kubeops") or {}).get("etcdClusters") or []:
            source = etcd["install"].get("sha256Source")
            if source and warn and (etcd["install"]["version"], source) not in said:
                said.add((etcd["install"]["version"], source))
                warn("etcd %s is not among the versions kubeops.kops pins; the sha256 of its tarballs was %s"
                     % (etcd["install"]["version"], source))
    # Workers the bootstrap service cannot verify (clouds other than AWS) bootstrap with a token.
    token_workers = any("kubeletBootstrap" in (d.get("kubeops") or {}) for d in documents.values())
    for group in groups:
        document = documents.get(objects.name_of(group))
        if document is None:
            continue
        if token_workers and "APIServerConfig" in document:
            # kops leaves this off because kops-controller signs node certificates instead.
            document["APIServerConfig"]["KubeAPIServer"] = dict(document["APIServerConfig"]["KubeAPIServer"],
                                                                enableBootstrapTokenAuth=True)
        data = dump_config(document).encode("utf-8")
        hashes[objects.name_of(group)] = hashlib.sha256(data).hexdigest()
        changes.append((nodeup_config.config_path(group), data))
    if node_labels.labels_nodes(completed):
        changes.append((node_labeller_addon.PATH, node_labeller_addon.manifest()))
    if token_workers:
        token, token_changes = ensure_bootstrap_token(cluster_store)
        changes += token_changes
        changes.append((BOOTSTRAP_ADDON_PATH, bootstrap_addon(name, token)))
    return changes, hashes
