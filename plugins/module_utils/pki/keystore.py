# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""kops' keystore in the state store: pki/private/<keyset>/keyset.yaml.

A keyset holds one or more keypairs (certificate + private key), one of them
primary (the one that signs); the others stay trusted until distrusted.
That is how CA rotation works: add a new keypair (trusted, not yet signing),
roll the nodes, promote it, then distrust the old one.
"""

from __future__ import annotations

import base64
import copy
import datetime

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs
from ansible_collections.kubeops.kops.plugins.module_utils.errors import PkiError

KEYSET_DIR = "pki/private/%s/keyset.yaml"
# The CAs and keys kops keeps for every cluster (upup/pkg/fi/cloudup: PKIModelBuilder), by name -> CN.
CLUSTER_KEYSETS = {
    "kubernetes-ca": "kubernetes-ca",
    "apiserver-aggregator-ca": "apiserver-aggregator-ca",
    "service-account": "service-account",
    "etcd-clients-ca": "etcd-clients-ca",
    "kubernetes-front-proxy-ca": "kubernetes-front-proxy-ca",
}
ETCD_KEYSETS = ("etcd-manager-ca-%s", "etcd-peers-ca-%s")


class KeystoreError(PkiError):
    pass


def keyset_names(completed_cluster):
    names = list(CLUSTER_KEYSETS)
    for etcd in completed_cluster["spec"].get("etcdClusters") or []:
        names.extend(pattern % etcd["name"] for pattern in ETCD_KEYSETS)
    return names


def _b64(data):
    return base64.b64encode(data).decode("ascii")


def new_keyset(name, now=None):
    """A keyset object with one fresh CA keypair, primary."""
    certificate, key = certs.new_ca(name, now=now)
    item = {"id": certs.key_id(certificate), "publicMaterial": _b64(certs.certificate_pem(certificate)),
            "privateMaterial": _b64(certs.key_pem(key))}
    return {"apiVersion": objects.API_VERSION, "kind": "Keyset", "metadata": {"name": name},
            "spec": {"type": "Keypair", "primaryId": item["id"], "keys": [item]}}


def add_keypair(keyset, now=None):
    """A copy of keyset with a new, trusted but not primary, CA keypair (kops create keypair)."""
    keyset = copy.deepcopy(keyset)
    certificate, key = certs.new_ca(keyset["metadata"]["name"], now=now)
    keyset["spec"]["keys"].append({"id": certs.key_id(certificate),
                                   "publicMaterial": _b64(certs.certificate_pem(certificate)),
                                   "privateMaterial": _b64(certs.key_pem(key))})
    return keyset


def promote(keyset):
    """A copy with the newest trusted keypair as primary (kops promote keypair)."""
    keyset = copy.deepcopy(keyset)
    trusted = [k for k in keyset["spec"]["keys"] if not k.get("distrustTimestamp") and k.get("privateMaterial")]
    if not trusted:
        raise KeystoreError("keyset %s has no trusted keypair with a private key to promote"
                            % keyset["metadata"]["name"])
    keyset["spec"]["primaryId"] = trusted[-1]["id"]  # keypairs are appended: the last is the newest
    return keyset


def distrust(keyset, now=None):
    """A copy with every non-primary keypair distrusted (kops distrust keypair)."""
    keyset = copy.deepcopy(keyset)
    stamp = (now or datetime.datetime.now(datetime.timezone.utc)).strftime("%Y-%m-%dT%H:%M:%SZ")
    for item in keyset["spec"]["keys"]:
        if item["id"] != keyset["spec"]["primaryId"] and not item.get("distrustTimestamp"):
            item["distrustTimestamp"] = stamp
    return keyset


def primary(keyset):
    """(certificate, private key) of the keyset's primary keypair."""
    item = next(k for k in keyset["spec"]["keys"] if k["id"] == keyset["spec"]["primaryId"])
    return (certs.load_certificate(base64.b64decode(item["publicMaterial"])),
            certs.load_key(base64.b64decode(item["privateMaterial"])))


def trusted_certificates_pem(keyset):
    """The CA bundle: every certificate not distrusted."""
    return b"".join(base64.b64decode(k["publicMaterial"]) for k in keyset["spec"]["keys"]
                    if not k.get("distrustTimestamp"))


def public_view(keyset):
    """What may be shown: ids, primary, distrust and validity; never private material."""
    keys = []
    for item in keyset["spec"]["keys"]:
        certificate = certs.load_certificate(base64.b64decode(item["publicMaterial"]))
        keys.append({"id": item["id"], "primary": item["id"] == keyset["spec"]["primaryId"],
                     "distrusted": bool(item.get("distrustTimestamp")),
                     "has_private": bool(item.get("privateMaterial")),
                     "issued": certs.not_before(certificate).strftime("%Y-%m-%dT%H:%M:%SZ"),
                     "expires": certs.not_after(certificate).strftime("%Y-%m-%dT%H:%M:%SZ")})
    return {"name": keyset["metadata"]["name"], "primary_id": keyset["spec"]["primaryId"], "keys": keys}


def path(name):
    return KEYSET_DIR % name


def load(cluster_store, name):
    data = cluster_store.read(path(name))
    if data is None:
        return None
    return objects.load_yaml_documents(data.decode("utf-8"), source=path(name))[0]


def dump(keyset):
    return objects.dump_object(keyset).encode("utf-8")


def pending_keypair(keyset):
    """A trusted keypair added after the primary (keypairs are appended): a rotation under way."""
    keys = keyset["spec"]["keys"]
    position = next(i for i, k in enumerate(keys) if k["id"] == keyset["spec"]["primaryId"])
    return next((k for k in keys[position + 1:] if not k.get("distrustTimestamp")), None)


# Each keystore action: keyset -> new keyset, or the same object when there is nothing to do
# (so a second run reports no change).
def rotate_action(keyset):
    return keyset if pending_keypair(keyset) else add_keypair(keyset)


def promote_action(keyset):
    return keyset if pending_keypair(keyset) is None else promote(keyset)


def distrust_action(keyset):
    others = [k for k in keyset["spec"]["keys"] if k["id"] != keyset["spec"]["primaryId"]
              and not k.get("distrustTimestamp")]
    return distrust(keyset) if others else keyset


ACTIONS = {"rotate": rotate_action, "promote": promote_action, "distrust": distrust_action}
