"""kops' nodeup golden cases (../shared/conformance/kops/nodeup), and ours beside them.

Each case is one of kops' own nodeup tests (nodeup/pkg/model/*_test.go, kops commit 268927e): a cluster.yaml
(a Cluster and at most one InstanceGroup), completed as kops' BuildNodeupModelContext completes it, the nodeup
config built for the group, and the tasks one kops builder writes for it (tasks*.yaml).  Ours: the same
cluster completed by our populate, our nodeup config for the group, and every file our node side writes from
it (nodeup/files.py), with the certificates a control-plane node issues itself (nodeup/credentials.py).

Entries are compared per path:
- a file: content byte for byte, mode (kops' default 0644), create-only (ifNotExists);
- a certificate or key nodeup issues: signer, subject, SANs and mode (the key material is random);
- a kubeconfig nodeup builds from issued credentials: server and the credential it names;
- a binary installed from an asset: its asset (the file's name in the release) and mode;
- a systemd unit: its text, by unit name.
PEM blocks inside a file are compared by their kind (kops' fixtures use kops' test keys, ours are made here).
"""

from __future__ import annotations

import base64
import collections
import re

import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.completion import populate
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import config as nodeup_config
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import assets, credentials, files, manifests
from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs, keystore

from tests.conformance import kops_fixtures
from tests.unit.completion.test_populate import _cloud

GOLDEN = kops_fixtures.ROOT / "nodeup"
PEM = re.compile(r"-----BEGIN ([A-Z ]+)-----\n.*?-----END \1-----\n?", re.S)
# What a test sets on kops' NodeupModelContext besides the model (the *_test.go files).
Case = collections.namedtuple("Case", "directory tasks arch distribution mode")
Case.__new__.__defaults__ = ("amd64", "ubuntu2604", None)


def _case_id(case):
    return "%s:%s" % (case.directory, case.tasks[:-len(".yaml")])


CASES = (
    [Case("kubelet/featuregates", "tasks.yaml"), Case("kubelet/warmpool", "tasks.yaml", mode="Warming")]
    + [Case("containerdbuilder/%s" % name, "tasks.yaml", distribution=distribution) for name, distribution in
       (("simple", "ubuntu2604"), ("flatcar", "flatcar"), ("skipinstall", "ubuntu2604"),
        ("complex", "ubuntu2604"), ("v3", "ubuntu2604"))]
    + [Case("golden/minimal", "tasks-%s.yaml" % key) for key in
       ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy", "secret", "kops-controller")]
    + [Case("golden/minimal", "tasks-kubectl.yaml", distribution="flatcar")]
    + [Case("golden/%s" % name, "tasks-kube-apiserver.yaml") for name in
       ("audit", "oidc", "dedicated-apiserver", "without-etcd-events", "awsiam", "envvars")]
    + [Case("golden/side-loading", "tasks-%s-%s.yaml" % (key, arch), arch=arch) for arch in ("amd64", "arm64")
       for key in ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy")]
    + [Case("golden/hooks-containerd-exec", "tasks-hooks.yaml")]
    + [Case("updateservicebuilder/%s" % name, "tasks-updateservice.yaml") for name in ("automatic", "external")]
    + [Case("channels", "tasks-channels.yaml")]
)
CASE_IDS = [_case_id(case) for case in CASES]


INLINE_PEM = re.compile(r"^(\s*(?:certificate-authority|client-certificate|client-key)-data: )(\S+)$", re.M)


def normalize(text):
    """A file's text with each PEM block (also base64 inside a kubeconfig) replaced by its kind."""
    text = INLINE_PEM.sub(lambda match: match.group(1) + normalize(base64.b64decode(match.group(2)).decode(
        "ascii")).replace("\n", " ").strip(), text)
    return PEM.sub(lambda match: "<%s>\n" % match.group(1), text)


def _mode(value, default):
    return "%04o" % int(str(value), 8) if value not in (None, "") else default


def _issued(task):
    """signer, subject and SANs of one of kops' issueCert tasks."""
    return {"signer": task.get("signer"), "subject": task.get("subject") or {},
            "alternateNames": sorted(task.get("alternateNames") or []),
            "includeRootCertificate": bool(task.get("includeRootCertificate"))}


def kops_entries(case):
    """{path or 'unit <name>': entry} of what kops' builder writes for the case."""
    entries = {}
    for task in yaml.safe_load_all((GOLDEN / case.directory / case.tasks).read_text()):
        if not task:
            continue
        if "definition" in task:
            entries["unit %s" % task["Name"]] = {"kind": "unit", "content": task["definition"],
                                                 "enabled": task.get("enabled")}
        elif task.get("type") == "directory":
            continue  # not compared: the directories of our files are made as needed (0755, as kops' are)
        elif task.get("type") == "file":
            contents = task.get("contents")
            entry = {"mode": _mode(task.get("mode"), "0644"), "if_missing": bool(task.get("ifNotExists"))}
            for owner in ("owner", "group"):
                if task.get(owner):
                    entry[owner] = task[owner]
            inner = contents.get("task") if isinstance(contents, dict) else None
            asset = contents.get("Asset") if isinstance(contents, dict) else None
            if asset is not None:
                # A binary from a downloaded asset (kops' asset key: the file's name in its release).
                entry.update(kind="asset", asset=asset["Key"])
            elif inner is not None and "ServerURL" in inner:
                entry.update(kind="kubeconfig", server=inner["ServerURL"], credential=_issued(inner["Cert"]["task"]))
            elif inner is not None:
                entry.update(kind="key" if task["path"].endswith((".key", "key.pem")) else "certificate",
                             **_issued(inner))
            else:
                entry.update(kind="file", content=normalize(contents or ""))
            entries[task["path"]] = entry
    return entries


def load_case(case):
    """(completed cluster, completed instance group) as kops' BuildNodeupModelContext has them."""
    cluster, groups = objects.split_objects(
        [d for d in yaml.safe_load_all((GOLDEN / case.directory / "cluster.yaml").read_text()) if d])
    completed = populate.populate_cluster_spec(cluster, groups, _cloud(cluster))
    if groups:
        return completed, populate.populate_instance_group_spec(completed, groups[0])
    # kops: no instance group -> an empty one with the cluster's kubelet config.
    return completed, {"apiVersion": "kops.k8s.io/v1alpha2", "kind": "InstanceGroup",
                       "metadata": {"name": "nodes"}, "spec": {"role": objects.ROLE_NODE,
                                                               "kubelet": completed["spec"].get("kubelet") or {}}}


def our_keysets(completed):
    """Keysets as kops' golden tests have them (kubelet_test.go): kubernetes-ca with a second certificate in its
    bundle, service-account with two keys (rotatingPrivateKeyset); the rest as they are made."""
    keysets = {name: keystore.new_keyset(name) for name in keystore.keyset_names(completed)}
    for name in ("kubernetes-ca", "service-account"):
        keysets[name] = keystore.add_keypair(keysets[name])
    return keysets


def our_config(case, keysets=None):
    completed, group = load_case(case)
    keysets = keysets or our_keysets(completed)
    document = nodeup_config.build_config(completed, group, keysets, completed["spec"]["configBase"])
    # kops' BuildNodeupModelContext sets CAs to kubernetes-ca alone and runs no cloudup asset builder, so its
    # config has no static files (the scheduler's config: nodeup then writes its own).
    document["CAs"] = {"kubernetes-ca": document["CAs"]["kubernetes-ca"]}
    document["FileAssets"] = [asset for asset in document.get("FileAssets") or []
                              if asset["path"] != manifests.SCHEDULER_CONFIG] or None
    if not document["FileAssets"]:
        del document["FileAssets"]
    return document, keysets


NODE = {"name": "i-0123456789abcdef0", "address": None}


# The assets kops' ContainerdBuilder test puts in its asset store (containerd_test.go): the release tarball's files,
# and runc (which the cases' configs, giving containerd.version without containerd.runc, leave out).
TEST_ARCHIVE_MEMBERS = {"containerd": ["bin/containerd", "bin/containerd-shim", "bin/containerd-shim-runc-v1",
                                       "bin/containerd-shim-runc-v2", "bin/containerd-stress", "bin/ctr"]}
TEST_RUNC = "https://github.com/opencontainers/runc/releases/download/v1.1.0/runc.%s"


def asset_installs(case, document):
    """Our asset plan for the case's node, with the archives' members as kops' test has them."""
    config = dict(document, Assets={arch: list(urls) for arch, urls in (document.get("Assets") or {}).items()})
    if case.directory.startswith("containerdbuilder/") and not any("/runc." in url for url in config["Assets"].get(
            case.arch, [])):
        config["Assets"].setdefault(case.arch, []).append(TEST_RUNC % case.arch)
    planned = assets.downloads(config, case.arch)
    members = {d.file: TEST_ARCHIVE_MEMBERS.get(d.name, []) for d in planned if d.archive}
    return assets.installs(config, planned, members, case.distribution)


def our_entries(case):
    """{path or 'unit <name>': entry} of what our node side writes for the case."""
    completed, _group = load_case(case)
    document, keysets = our_config(case, our_keysets(completed))
    entries = {}
    for install in asset_installs(case, document):
        entries[install.path] = {"kind": "asset", "asset": install.key, "mode": "%04o" % install.mode,
                                 "if_missing": False}
    node = dict(NODE, distribution=case.distribution, arch=case.arch)
    for node_file in files.node_files(document, node, bootstrap_token="abcdef.0123456789abcdef"):
        content = node_file.content.decode("utf-8")
        if node_file.path.startswith(("/etc/systemd/system/", "/lib/systemd/system/")) and \
                node_file.path.count("/") == 4:
            entries["unit %s" % node_file.path.rsplit("/", 1)[1]] = {"kind": "unit", "content": content}
            continue
        entries[node_file.path] = {"kind": "file", "content": normalize(content), "mode": "%04o" % node_file.mode,
                                   "if_missing": node_file.if_missing}
    for request in credentials.control_plane_requests(document, NODE["name"]):
        subject = {"CommonName": request["common_name"]}
        if request["organizations"]:
            subject["Organization"] = request["organizations"]
        issued = {"signer": request["signer"], "subject": subject,
                  "alternateNames": sorted(request["dns_names"] + request["ip_addresses"]),
                  "includeRootCertificate": bool(request.get("include_root"))}
        if request.get("kubeconfig"):  # node_certificates writes it, the certificate inline (mode 0400)
            kubeconfig = request["kubeconfig"]
            entries[kubeconfig["path"]] = {"kind": "kubeconfig", "server": kubeconfig["server"], "credential": issued,
                                           "mode": "0400", "if_missing": False}
            continue
        owner = {k: request[k] for k in ("owner", "group") if request.get(k)}
        entries[request["cert_path"]] = dict(issued, kind="certificate", mode=request.get("cert_mode") or "0644",
                                             if_missing=False, **owner)
        entries[request["key_path"]] = dict(issued, kind="key", mode="0600", if_missing=False, **owner)
    for copy in credentials.control_plane_keypairs(document):  # node_certificates copies them from the store
        certificate, key = keystore.primary(keysets[copy["keyset"]])
        entries[copy["key_path"]] = {"kind": "file", "content": normalize(certs.key_pem(key).decode("ascii")),
                                     "mode": "0600", "if_missing": False}
        if copy.get("cert_path"):
            entries[copy["cert_path"]] = {"kind": "file", "content": normalize(
                certs.certificate_pem(certificate).decode("ascii")), "mode": copy.get("cert_mode") or "0644",
                "if_missing": False}
    return entries


Comparison = collections.namedtuple("Comparison", "equal different kops_only ours_only")


KUBE_APISERVER_MANIFEST = "/etc/kubernetes/manifests/kube-apiserver.manifest"


def with_health_authentication(manifest):
    """kops' kube-apiserver manifest as ours differs from it by design (nodeup/manifests.py HEALTH_AUTHN_CONFIG):
    --anonymous-auth=false replaced by --authentication-config (anonymous for the health paths only), in the sorted
    flags.  kops instead merges its healthcheck sidecar into the pod on the node (not in its goldens)."""
    lines = [line for line in manifest.split("\n") if line.strip() != "- --anonymous-auth=false"]
    flag = "- --authentication-config=%s" % manifests.HEALTH_AUTHN_CONFIG
    binary = next(i for i, line in enumerate(lines) if line.strip() == "- /usr/local/bin/kube-apiserver")
    indent = lines[binary][:len(lines[binary]) - len(lines[binary].lstrip())]
    at = binary + 1
    while lines[at].startswith(indent + "- --") and lines[at].strip() < flag:
        at += 1
    return "\n".join(lines[:at] + [indent + flag] + lines[at:])


def compare(case):
    """Per path: equal, different {path: (kops, ours)}, kops-only, ours-only (the last over kops' paths only)."""
    kops, ours = kops_entries(case), our_entries(case)
    if manifests.HEALTH_AUTHN_CONFIG in ours and KUBE_APISERVER_MANIFEST in kops:
        kops[KUBE_APISERVER_MANIFEST] = dict(kops[KUBE_APISERVER_MANIFEST], content=with_health_authentication(
            kops[KUBE_APISERVER_MANIFEST]["content"]))
    equal, different, kops_only = [], {}, []
    for path, entry in sorted(kops.items()):
        if path not in ours:
            kops_only.append(path)
        elif _same(entry, ours[path]):
            equal.append(path)
        else:
            different[path] = (entry, ours[path])
    return Comparison(equal, different, kops_only, sorted(set(ours) - set(kops)))


def _same(kops, ours):
    if kops["kind"] == "unit":
        return ours["kind"] == "unit" and kops["content"] == ours["content"]
    keys = [k for k in kops if k != "kind"]
    return kops["kind"] == ours["kind"] and all(kops[k] == ours.get(k) for k in keys)
