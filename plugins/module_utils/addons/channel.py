# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The bootstrap channel: which addons a cluster gets, their manifests, and kops' Addons file listing them.

What kops' BootstrapChannelBuilder does (upup/pkg/fi/cloudup/bootstrapchannelbuilder):
the addons in its order, each manifest relabelled (every object carries
app.kubernetes.io/managed-by=kops, addon.kops.k8s.io/name and the addon's
selector; pod templates kops.k8s.io/managed-by=kops), trimmed of surrounding
whitespace, hashed (sha256 hex of those bytes: the manifestHash protokube
compares) and, for the addons kops builds prune directives for, the group
kinds to prune.  Files are (store path relative to the cluster, bytes):
addons/bootstrap-channel.yaml and addons/<manifest> for each addon.
"""

from __future__ import annotations

import hashlib

try:
    import yaml
except ImportError:  # objects.require_yaml names the fix when a manifest is dumped
    yaml = None

# What every AWS cluster renders is imported here; an addon only some clusters have (a CNI, cert-manager, the load
# balancer controller, the autoscaler, GCE's controller) is imported when it is rendered (_render_* below): its
# manifests and CRDs are a large share of the module's imports, which Ansible's module payload compiles on each run.
from ansible_collections.kubeops.kops.plugins.module_utils.addons import (
    aws, aws_iam_authenticator, core, external_dns, gcp_pd_csi, kopeio, metrics_server, node_local_dns,
    node_problem_detector, nvidia, pod_identity_webhook, service_accounts, snapshot_controller)
from ansible_collections.kubeops.kops.plugins.module_utils.addons.facts import AddonError, Facts
from ansible_collections.kubeops.kops.plugins.module_utils.api import goyaml_emitter, objects
from ansible_collections.kubeops.kops.plugins.module_utils.completion.components.context import normalize_image

CHANNEL_PATH = "addons/bootstrap-channel.yaml"
ADDON_LABEL = "addon.kops.k8s.io/name"
MANAGED_BY = ("app.kubernetes.io/managed-by", "kops")
POD_MANAGED_BY = ("kops.k8s.io/managed-by", "kops")
# The group kinds kops always prunes (pruning.go), sorted by (group, kind) as it writes them.
PRUNED_GROUP_KINDS = sorted([
    ("", "ConfigMap"), ("", "Service"), ("", "ServiceAccount"),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
    ("apps", "Deployment"), ("apps", "DaemonSet"), ("apps", "StatefulSet"),
    ("rbac.authorization.k8s.io", "ClusterRole"), ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("rbac.authorization.k8s.io", "Role"), ("rbac.authorization.k8s.io", "RoleBinding"),
    ("policy", "PodDisruptionBudget"),
])
# kops prunes Karpenter's node objects too (an instance group no longer managed by Karpenter loses them).
ADDON_PRUNED_GROUP_KINDS = {"karpenter.sh": [("karpenter.k8s.aws", "EC2NodeClass"), ("karpenter.sh", "NodePool")]}
GO_YAML_WIDTH = 80  # go-yaml's best_width
NETWORKING_SELECTOR = {"role.kubernetes.io/networking": "1"}
AUTHENTICATION_SELECTOR = {"role.kubernetes.io/authentication": "1"}
_MANIFEST_DUMPER = {}


class Addon(object):
    """One channel entry: kops' AddonSpec fields, when it applies, and the function that builds its objects."""

    def __init__(self, name, addon_id, applies, build, manifest=None, selector=None, needs_rolling_update=None,
                 prune=False, needs_pki=None):
        self.name = name
        self.id = addon_id
        self.manifest = manifest or "%s/%s.yaml" % (name, addon_id)
        self.selector = {"k8s-addon": name} if selector is None else selector
        self.needs_rolling_update = needs_rolling_update
        self.prune = prune
        self.needs_pki = needs_pki or (lambda facts: False)
        self.applies = applies
        self.build = build

    @property
    def key(self):
        """kops' addonKey (name-id): the ManagedFile name after "<cluster>-addons-"."""
        return "%s-%s" % (self.name, self.id) if self.id else self.name


def _aws(facts):
    return facts.provider == "aws"


def _gce(facts):
    return facts.provider == "gce"


def _nth(facts):
    return _aws(facts) and bool(facts.nth.get("enabled"))


def _ebs_csi(facts):
    return _aws(facts) and (facts.section("cloudConfig").get("awsEBSCSIDriver") or {}).get("managed", True) is not False


def _enabled(facts, section):
    return bool(facts.section(section).get("enabled"))


def _cert_manager(facts):
    return _enabled(facts, "certManager") and facts.section("certManager").get("managed", True) is not False


def _networking(kind):
    return lambda facts: kind in facts.networking


def _load_balancer_controller(facts):
    return _aws(facts) and _enabled(facts, "awsLoadBalancerController")


def _storage(provider):
    return lambda facts: facts.provider == provider and bool(facts.section("cloudConfig").get("manageStorageClasses"))


# The addons imported when rendered (static imports, so that Ansible's module packaging finds and ships them).
def _render_cluster_autoscaler(facts):
    from ansible_collections.kubeops.kops.plugins.module_utils.addons import cluster_autoscaler
    return cluster_autoscaler.objects(facts)


def _render_cert_manager(facts):
    from ansible_collections.kubeops.kops.plugins.module_utils.addons import cert_manager
    return cert_manager.objects(facts)


def _render_aws_load_balancer_controller(facts):
    from ansible_collections.kubeops.kops.plugins.module_utils.addons import aws_load_balancer_controller
    return aws_load_balancer_controller.objects(facts)


def _render_gce_cloud_controller(facts):
    from ansible_collections.kubeops.kops.plugins.module_utils.addons import gce
    return gce.cloud_controller(facts)


def _render_flannel(facts):
    from ansible_collections.kubeops.kops.plugins.module_utils.addons import flannel
    return flannel.objects(facts)


def _render_calico(facts):
    from ansible_collections.kubeops.kops.plugins.module_utils.addons import calico
    return calico.objects(facts)


def _render_kube_router(facts):
    from ansible_collections.kubeops.kops.plugins.module_utils.addons import kube_router
    return kube_router.objects(facts)


def _render_amazon_vpc(facts):
    from ansible_collections.kubeops.kops.plugins.module_utils.addons import amazon_vpc
    return amazon_vpc.objects(facts)


def _render_kindnet(facts):
    from ansible_collections.kubeops.kops.plugins.module_utils.addons import kindnet
    return kindnet.objects(facts)


def _render_karpenter(facts):
    from ansible_collections.kubeops.kops.plugins.module_utils.addons import karpenter
    return karpenter.objects(facts)


def _karpenter(facts):
    return _aws(facts) and _enabled(facts, "karpenter")


def _render_cilium(facts):
    from ansible_collections.kubeops.kops.plugins.module_utils.addons import cilium
    return cilium.objects(facts)


# kops' buildAddons order (kops-controller and dns-controller are not rendered: docs/addons.md).
ADDONS = (
    Addon("coredns.addons.k8s.io", "k8s-1.12", core.uses_coredns, core.coredns),
    Addon("kubelet-api.rbac.addons.k8s.io", "k8s-1.9", lambda facts: True, core.kubelet_api_rbac),
    Addon("limit-range.addons.k8s.io", None, lambda facts: True, core.limit_range,
          manifest="limit-range.addons.k8s.io/v1.5.0.yaml"),
    Addon("external-dns.addons.k8s.io", "k8s-1.19", external_dns.applies, external_dns.objects),
    Addon("nodelocaldns.addons.k8s.io", "k8s-1.12", node_local_dns.applies, node_local_dns.objects, needs_rolling_update="all"),
    Addon("cluster-autoscaler.addons.k8s.io", "k8s-1.15", lambda facts: (_aws(facts) or _gce(facts)) and _enabled(facts, "clusterAutoscaler"),
          _render_cluster_autoscaler),
    Addon("metrics-server.addons.k8s.io", "k8s-1.11", lambda facts: _enabled(facts, "metricsServer"),
          metrics_server.objects, selector={"k8s-app": "metrics-server"}, needs_pki=metrics_server.needs_pki),
    Addon("certmanager.io", "k8s-1.16", _cert_manager, _render_cert_manager, selector={}, prune=True),
    Addon("node-termination-handler.aws", "k8s-1.11", _nth, aws.node_termination_handler, prune=True),
    Addon("node-problem-detector.addons.k8s.io", "k8s-1.17", lambda facts: _enabled(facts, "nodeProblemDetector"),
          node_problem_detector.objects, prune=True),
    Addon("nvidia.addons.k8s.io", "k8s-1.16", nvidia.applies, nvidia.objects),
    Addon("aws-load-balancer-controller.addons.k8s.io", "k8s-1.19",
          lambda facts: _load_balancer_controller(facts) and not facts.use_service_account_external_permissions,
          _render_aws_load_balancer_controller, prune=True, needs_pki=lambda facts: True),
    Addon("aws-load-balancer-controller.addons.k8s.io", "k8s-1.19-irsa",
          lambda facts: _load_balancer_controller(facts) and facts.use_service_account_external_permissions,
          _render_aws_load_balancer_controller, prune=True, needs_pki=lambda facts: True),
    Addon(pod_identity_webhook.ADDON, "k8s-1.16", pod_identity_webhook.applies, pod_identity_webhook.objects,
          needs_pki=lambda facts: True),
    Addon("storage-aws.addons.k8s.io", "v1.15.0", _storage("aws"), core.storage_aws),
    Addon("storage-gce.addons.k8s.io", "v1.7.0", _storage("gce"), core.storage_gce),
    Addon("gcp-pd-csi-driver.addons.k8s.io", "k8s-1.23", gcp_pd_csi.applies, gcp_pd_csi.objects),
    Addon("gcp-cloud-controller.addons.k8s.io", "k8s-1.23", _gce, _render_gce_cloud_controller, prune=True),
    Addon("networking.kope.io", "k8s-1.12", _networking("kopeio"), kopeio.objects, selector=NETWORKING_SELECTOR, prune=True),
    Addon("networking.flannel", "k8s-1.25", lambda facts: "flannel" in facts.networking, _render_flannel,
          selector=NETWORKING_SELECTOR, prune=True),
    Addon("networking.projectcalico.org", "k8s-1.25", _networking("calico"), _render_calico, selector=NETWORKING_SELECTOR,
          prune=True),
    Addon("networking.kuberouter", "k8s-1.12", lambda facts: "kuberouter" in facts.networking, _render_kube_router,
          selector=NETWORKING_SELECTOR),
    Addon("networking.amazon-vpc-routed-eni", "k8s-1.16", lambda facts: "amazonvpc" in facts.networking,
          _render_amazon_vpc, selector=NETWORKING_SELECTOR, needs_rolling_update="all"),
    Addon("networking.kindnet", "k8s-1.32", lambda facts: "kindnet" in facts.networking, _render_kindnet,
          selector=NETWORKING_SELECTOR, needs_rolling_update="all"),
    Addon("networking.cilium.io", "k8s-1.16", lambda facts: "cilium" in facts.networking, _render_cilium,
          manifest="networking.cilium.io/k8s-1.16-v1.15.yaml", selector=NETWORKING_SELECTOR, needs_rolling_update="all",
          needs_pki=lambda facts: bool(((facts.networking.get("cilium") or {}).get("hubble") or {}).get("enabled"))),
    Addon("authentication.aws", "k8s-1.12", aws_iam_authenticator.applies, aws_iam_authenticator.objects,
          selector=AUTHENTICATION_SELECTOR),
    Addon("aws-cloud-controller.addons.k8s.io", "k8s-1.18", _aws, aws.cloud_controller),
    Addon("aws-ebs-csi-driver.addons.k8s.io", "k8s-1.17", _ebs_csi, aws.ebs_csi_driver),
    Addon("snapshot-controller.addons.k8s.io", "k8s-1.20", lambda facts: _enabled(facts, "snapshotController"),
          snapshot_controller.objects, needs_pki=lambda facts: True),
    Addon("karpenter.sh", "k8s-1.19", _karpenter, _render_karpenter, prune=True),
)

# What kops would add to the channel that this collection does not render yet: (name, applies).
NOT_RENDERED = (
    ("kube-dns.addons.k8s.io", lambda facts: facts.kube_dns.get("provider") == "KubeDNS"),
    ("cluster-autoscaler.addons.k8s.io",
     lambda facts: not (_aws(facts) or _gce(facts)) and _enabled(facts, "clusterAutoscaler")),
    ("authentication.kope.io", lambda facts: "kopeio" in facts.section("authentication")),
)


def addon_labels(addon, metadata):
    """kops' addLabels on one object's metadata (refusing a selector label set otherwise in the template).

    kops round-trips the metadata through ObjectMeta, which drops a null creationTimestamp.
    """
    metadata = {key: value for key, value in metadata.items() if not (key == "creationTimestamp" and value is None)}
    labels = dict(metadata.get("labels") or {})
    labels[MANAGED_BY[0]] = MANAGED_BY[1]
    labels[ADDON_LABEL] = addon.name
    for key, value in addon.selector.items():
        if labels.get(key, value) != value:
            raise AddonError("addon %s: label %s is %r in the template but the selector says %r"
                             % (addon.name, key, labels[key], value))
        labels[key] = value
    return dict(metadata, labels=labels)


def remap(addon, documents):
    """Every object labelled as kops labels it; apps/v1 Deployments and DaemonSets' pod templates too."""
    remapped = []
    for document in documents:
        document = dict(document, metadata=addon_labels(addon, document.get("metadata") or {}))
        if document.get("apiVersion") == "apps/v1" and document.get("kind") in ("Deployment", "DaemonSet"):
            template = document["spec"]["template"]
            pod_metadata = dict(template.get("metadata") or {})
            pod_metadata["labels"] = dict(pod_metadata.get("labels") or {}, **{POD_MANAGED_BY[0]: POD_MANAGED_BY[1]})
            document["spec"] = dict(document["spec"], template=dict(template, metadata=pod_metadata))
        remapped.append(document)
    return remapped


def remap_images(assets, value, parent=None):
    """Every containers[].image and initContainers[].image in an object, normalized (kops' RemapManifest)."""
    if isinstance(value, dict):
        return {key: remap_images(assets, item, key) for key, item in value.items()}
    if isinstance(value, list):
        if parent in ("containers", "initContainers"):
            return [dict(c, image=normalize_image(assets, c["image"])) if isinstance(c, dict) and "image" in c
                    else remap_images(assets, c) for c in value]
        return [remap_images(assets, item) for item in value]
    return value


def prune_directives(addon, documents):
    """kops' buildPruneDirectives: every always-pruned group kind, scoped to the namespaces the manifest uses."""
    selector = ",".join("%s=%s" % pair for pair in sorted([(ADDON_LABEL, addon.name), MANAGED_BY]))
    kinds = []
    for group, kind in sorted(PRUNED_GROUP_KINDS + ADDON_PRUNED_GROUP_KINDS.get(addon.name, [])):
        namespaces = sorted({(d.get("metadata") or {}).get("namespace") for d in documents
                             if d.get("kind") == kind and _group(d.get("apiVersion", "")) == group} - {None, ""})
        entry = {"kind": kind, "labelSelector": selector}
        if group:
            entry["group"] = group
        if namespaces:
            entry["namespaces"] = namespaces
        kinds.append(entry)
    return {"kinds": kinds}


def _group(api_version):
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def dump_manifest(documents, pure=False):
    """The manifest bytes kops stores: its YAML (sorted keys, `---` between objects), surrounding whitespace trimmed.

    Unlike the spec files, kops writes manifests through go-yaml's default
    emitter, which folds plain scalars longer than 80 columns at spaces.
    pure: PyYAML's Python emitter even where libyaml's is there (objects._yaml_classes).
    """
    options = {"Dumper": _manifest_dumper(pure), "default_flow_style": False, "sort_keys": True,
               "allow_unicode": True, "width": GO_YAML_WIDTH}
    text = "\n---\n\n".join(goyaml_emitter.without_document_end(yaml.dump(document, **options)) for document in documents)
    return text.strip().encode("utf-8")


def _manifest_dumper(pure=False):
    """The collection's go-yaml-like dumper, folding double-quoted scalars as go-yaml does: libyaml's emitter
    does (go-yaml ports it); PyYAML's Python emitter is taught to (goyaml_emitter.GoDoubleQuoted)."""
    base = objects._yaml_classes(pure)[1]  # pylint: disable=protected-access  # the collection's go-yaml-like dumper
    if objects.is_libyaml(base):
        return base
    if "dumper" not in _MANIFEST_DUMPER:
        _MANIFEST_DUMPER["dumper"] = type("ManifestDumper", (goyaml_emitter.GoDoubleQuoted, base), {})
    return _MANIFEST_DUMPER["dumper"]


def manifest_hash(data):
    return hashlib.sha256(data).hexdigest()


def selected(facts):
    """The addons of ADDONS that apply to this cluster, in channel order."""
    return [addon for addon in ADDONS if addon.applies(facts)]


def not_rendered(facts):
    """Names of the addons kops would render for this cluster that this collection does not."""
    return [name for name, applies in NOT_RENDERED if applies(facts)]


def not_rendered_for(completed, groups):
    """not_rendered() of a completed cluster: what a run must warn about (the channel goes without them)."""
    return not_rendered(Facts(completed, groups))


# Rendered, but what the addon's pods read on a worker needs a credential only the bootstrap service issues, and it
# verifies AWS identities only: (addon, what is missing, applies).
WORKERS_WITHOUT = (
    ("networking.kuberouter", "/var/lib/kube-router/kubeconfig (its certificate, CN system:kube-router)",
     lambda facts: "kuberouter" in facts.networking and not _aws(facts)),
)


def workers_without_for(completed, groups):
    """[(addon, what its pods miss on workers)] for a completed cluster: what a run must warn about."""
    facts = Facts(completed, groups)
    return [(name, missing) for name, missing, applies in WORKERS_WITHOUT if applies(facts)]


def channel_entry(addon, data, documents, facts):
    entry = {"name": addon.name, "manifest": addon.manifest, "manifestHash": manifest_hash(data),
             "selector": addon.selector or None}  # kops writes an addon without one as null
    if addon.id:
        entry["id"] = addon.id
    if addon.needs_rolling_update:
        entry["needsRollingUpdate"] = addon.needs_rolling_update
    if addon.needs_pki(facts):
        entry["needsPKI"] = True
    if addon.prune:
        entry["prune"] = prune_directives(addon, documents)
    return entry


def render(completed, groups, account_id=None, extra_entries=(), karpenter_nodes=None):
    """[(cluster-relative store path, bytes)]: every applicable addon's manifest, then the channel listing them.

    extra_entries: channel entries (dicts in kops' AddonSpec shape) of addons
    stored elsewhere, listed after kops' own (the kubelet bootstrap addon).
    karpenter_nodes: what each Karpenter group's EC2NodeClass and NodePool take from the AWS model and its boot
    script (model/aws/karpenter.node_inputs, through the driver).
    """
    facts = Facts(completed, groups, account_id=account_id, karpenter_nodes=karpenter_nodes)
    files, entries = [], []
    for addon in selected(facts):
        documents = remap(addon, service_accounts.wire(facts, addon.build(facts)))
        if facts.section("assets"):
            documents = [remap_images(facts.section("assets"), document) for document in documents]
        data = dump_manifest(documents)
        files.append(("addons/" + addon.manifest, data))
        entries.append(channel_entry(addon, data, documents, facts))
    channel = {"kind": "Addons", "metadata": {"name": "bootstrap"}, "spec": {"addons": entries + list(extra_entries)}}
    files.append((CHANNEL_PATH, objects.dump_object(channel).encode("utf-8")))
    return files


def manifest_keys():
    """{store path: kops' ManagedFile key} for the manifests whose file name is not their id (limit-range)."""
    return {"addons/" + addon.manifest: addon.key for addon in ADDONS
            if addon.manifest != "%s/%s.yaml" % (addon.name, addon.id)}


def needs_account_id(completed):
    """Whether rendering needs the AWS account id (node-termination-handler's queue URL, the service-account roles'
    ARNs)."""
    facts = Facts(completed, ())
    spec = completed["spec"]
    return ((_nth(facts) and aws.uses_queue(facts)) or bool(service_accounts.wanted(spec))
            or (_aws(facts) and bool((spec.get("iam") or {}).get("serviceAccountExternalPermissions"))))


def store_files(completed, groups, node_changes, account_id=None, karpenter_nodes=None):
    """The channel and manifests update writes, the kubelet bootstrap addon (written by nodeconfig.store, among
    node_changes) listed last so protokube applies it with the rest."""
    extra = [{"name": name, "id": addon_id, "manifest": "%s/%s.yaml" % (name, addon_id),
              "manifestHash": manifest_hash(data), "selector": {ADDON_LABEL: name}}
             for path, data in node_changes for name, addon_id in [_own_addon(path)] if name]
    return render(completed, groups, account_id=account_id, extra_entries=extra, karpenter_nodes=karpenter_nodes)


def _own_addon(path):
    """(name, id) of an addon of the collection's own under addons/<name>/<id>.yaml; (None, None) otherwise."""
    parts = path.split("/")
    if len(parts) == 3 and parts[0] == "addons" and parts[2].endswith(".yaml") and parts[1].endswith(".kubeops.io"):
        return parts[1], parts[2][:-len(".yaml")]
    return None, None
