# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The service behind kubeops.kops.node_certificates: a control-plane node's own certificates, issued from the
cluster's CAs in the state store and written to the node (kops' nodeup on a control-plane node).

The module parses its options and reports; this decides what the node needs (node_requests), what is issued again
(node_certs.reissue_reason) and writes it through NodeFiles, which writes nothing in check mode."""

from __future__ import annotations

import datetime
import os
import shutil
import socket

from ansible_collections.kubeops.kops.plugins.module_utils.atomic import atomic_write
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import node_file
from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs, node_certs

PATH_FIELDS = ("cert_path", "key_path", "ca_path")


class NodeFiles(object):
    """The node's files: each written atomically with its mode when it differs (never in check mode); the paths
    that changed, in order."""

    def __init__(self, check_mode):
        self.check_mode = check_mode
        self.changed = []

    def write(self, path, data, mode):
        """True when the file at path differs from data or mode (and, unless in check mode, is now written)."""
        if node_file.read_current(path) == (data, mode):
            return False
        if not self.check_mode:
            atomic_write(path, mode, data)
        self.changed.append(path)
        return True

    def chown(self, paths, owner, group):
        if not self.check_mode:
            for path in paths:
                shutil.chown(path, owner, group)


def _rooted(root, item, fields):
    """item with its path fields under root (unchanged for root /)."""
    return dict(item, **{f: os.path.join(root, item[f].lstrip("/")) for f in fields if item.get(f)})


def node_requests(certificates, nodeup_config, node_name, node_addresses, root):
    """(certificate requests, keypair copies) for the node, every path under root: the certificates asked for, and
    with a nodeup config what kops' nodeup issues and copies on a control-plane node (nothing on a worker)."""
    requests, copies = list(certificates), []
    if nodeup_config:
        from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import credentials
        node_name = node_name or socket.gethostname().lower()  # what the kubelet registers as
        requests += credentials.control_plane_requests(nodeup_config, node_name, node_addresses)
        copies = credentials.control_plane_keypairs(nodeup_config)
    requests = [_rooted(root, r, PATH_FIELDS) for r in requests]
    for request in requests:
        if request.get("kubeconfig"):
            request["kubeconfig"] = _rooted(root, request["kubeconfig"], ("path",))
    return requests, [_rooted(root, c, ("cert_path", "key_path")) for c in copies]


class NodeCertificateIssuer(object):
    """Issues and copies from the cluster's keysets (each signer read once) into NodeFiles; diffs says why each
    file was written (never key material)."""

    def __init__(self, cluster_store, files, now=None):
        self.cluster_store = cluster_store
        self.files = files
        self.now = now or datetime.datetime.now(datetime.timezone.utc)
        self.signers = {}
        self.diffs = []

    def copy_keypair(self, copy):
        """A keyset's primary keypair copied to the node (the controller manager's signer, the service-account key)."""
        certificate, key, _bundle = node_certs.signer_material(self.cluster_store, copy["keyset"], self.signers)
        files = [(copy["key_path"], certs.key_pem(key), 0o600)]
        if copy.get("cert_path"):
            cert_mode = int(copy.get("cert_mode") or "0644", 8)
            files.append((copy["cert_path"], certs.certificate_pem(certificate), cert_mode))
        for path, data, mode in files:
            if self.files.write(path, data, mode):
                self.diffs.append("%s: copy of the %s primary keypair" % (path, copy["keyset"]))

    def issue(self, raw):
        """One certificate: kept when it still says what is wanted, else issued again; its report."""
        spec = node_certs.normalize(raw)
        signer_certificate, signer_key, bundle = node_certs.signer_material(
            self.cluster_store, spec["signer"], self.signers)
        kubeconfig = spec.get("kubeconfig")
        if kubeconfig:
            # kops' nodetasks.KubeConfig: the certificate lives only inline in the kubeconfig.
            from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import kops_kubeconfig
            cert_pem, key_pem = kops_kubeconfig.credentials(node_file.read_current(kubeconfig["path"])[0])
        else:
            cert_pem, key_pem = (node_file.read_current(spec[field])[0] for field in ("cert_path", "key_path"))
        reason = node_certs.reissue_reason(spec, cert_pem, key_pem, signer_certificate, self.now)
        target = kubeconfig["path"] if kubeconfig else spec["cert_path"]
        if reason:
            cert_pem, key_pem = node_certs.issue_files(spec, signer_certificate, signer_key, self.now)
            self.diffs.append("%s: %s" % (target, reason))
        if kubeconfig:
            text = kops_kubeconfig.issued(kubeconfig["name"], kubeconfig["server"], cert_pem, key_pem,
                                          certs.certificate_pem(signer_certificate))
            files = [(kubeconfig["path"], text.encode("utf-8"), 0o400)]
        else:
            if spec.get("include_root"):  # kops: the certificate, an empty line, the signer's certificate
                leaf = cert_pem.split(b"-----END CERTIFICATE-----", 1)[0] + b"-----END CERTIFICATE-----\n"
                cert_pem = leaf + b"\n" + certs.certificate_pem(signer_certificate)
            files = [(spec["cert_path"], cert_pem, int(spec.get("cert_mode") or "0644", 8)),
                     (spec["key_path"], key_pem, 0o600)]
        if spec.get("ca_path"):
            files.append((spec["ca_path"], bundle, 0o644))
        for path, data, mode in files:
            # Written when issued, and whatever differs of a kubeconfig (a new signer certificate changes it too),
            # a bundle, a chain with its root or a key file (its mode).
            if reason or kubeconfig or spec.get("include_root") or path in (spec.get("ca_path"), spec["key_path"]):
                self.files.write(path, data, mode)
        if spec.get("owner"):
            self.files.chown([path for path, _data, _mode in files], spec["owner"], spec.get("group"))
        report = dict(cert_path=target, issued=bool(reason), reason=reason)
        report.update(node_certs.describe(cert_pem))
        return report


def issue_node_certificates(cluster_store, requests, copies, check_mode):
    """Every copy and request for one node -> (changed paths, per-certificate reports, diff lines)."""
    files = NodeFiles(check_mode)
    issuer = NodeCertificateIssuer(cluster_store, files)
    for copy in copies:
        issuer.copy_keypair(copy)
    reports = [issuer.issue(request) for request in requests]
    return files.changed, reports, issuer.diffs
