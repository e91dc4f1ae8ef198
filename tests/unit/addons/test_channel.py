"""The channel's behaviour beyond kops' two fixtures: spec variations, refusals, strict schema validation,
the image table and its generator, and the files update writes."""

from __future__ import annotations

import copy
import hashlib
import os
import pathlib
import re
import subprocess
import sys

import jsonschema
import kubernetes_validate
import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.addons import channel
from ansible_collections.kubeops.kops.plugins.module_utils.addons.generated import cert_manager_crds, image_data
from ansible_collections.kubeops.kops.plugins.module_utils.addons.facts import AddonError
from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.completion import cloudfacts, populate
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import store as nodeup_store
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import layout, vfs

from tests.conformance import kops_fixtures
from tests.unit.addons.test_addons_vs_kops import ACCOUNT, load_case
from tests.unit.addons.test_aws_load_balancer_controller import alb_case

REPO = pathlib.Path(__file__).resolve().parents[3]


def _case(case="minimal-aws", **spec_changes):
    completed, groups = load_case(kops_fixtures.UPDATE_CLUSTER / case)
    completed = copy.deepcopy(completed)
    for dotted, value in spec_changes.items():
        target = completed["spec"]
        *parents, last = dotted.split("__")
        for parent in parents:
            target = target.setdefault(parent, {})
        target[last] = value
    return completed, groups


def _populated(case="minimal-aws", **spec):
    """A fixture's input with spec keys replaced, completed (so the CNI's defaults are kops')."""
    directory = kops_fixtures.UPDATE_CLUSTER / case
    cluster, groups = objects.split_objects([d for d in yaml.safe_load_all((directory / "in-v1alpha2.yaml").read_text())
                                             if d])
    cluster["spec"].update(spec)
    return populate.populate_cluster_spec(cluster, groups, cloudfacts.kops_test_cloud()), groups


def _documents(files, path):
    return [d for d in yaml.safe_load_all(dict(files)[path]) if d]


def _workload(files, path, kind):
    return next(d for d in _documents(files, path) if d["kind"] == kind)


NTH = "addons/node-termination-handler.aws/k8s-1.11.yaml"
EBS = "addons/aws-ebs-csi-driver.addons.k8s.io/k8s-1.17.yaml"
COREDNS = "addons/coredns.addons.k8s.io/k8s-1.12.yaml"
CCM = "addons/aws-cloud-controller.addons.k8s.io/k8s-1.18.yaml"
VARIANTS = {
    "minimal-aws": _case,
    "minimal_gce": lambda: _case("minimal_gce"),
    "imds-nth": lambda: _case(nodeTerminationHandler__enableSQSTerminationDraining=False),
    "snapshot-ipv6-selinux": lambda: _case(snapshotController={"enabled": True}, nonMasqueradeCIDR="::/0",
                                           containerd__seLinuxEnabled=True),
    "dns-none-proxy": lambda: _case(topology={"dns": {"type": "None"}},
                                    assets={"containerProxy": "proxy.example.com/mirror"}),
    "cilium": lambda: _populated(networking={"cilium": {}}),
    "cilium-eni-etcd": lambda: _populated(networking={"cilium": {"ipam": "eni", "etcdManaged": True}}),
    "flannel": lambda: _populated(networking={"flannel": {"backend": "vxlan"}}),
    "amazon-vpc-ipv6": lambda: _populated(networking={"amazonvpc": {"env": [{"name": "ANNOTATE_POD_IP", "value": "true"}]}},
                                          nonMasqueradeCIDR="::/0"),
    "kindnet-ipv6": lambda: _populated(networking={"kindnet": {}}, nonMasqueradeCIDR="::/0"),
    "calico-typha": lambda: _populated(networking={"calico": {"typhaReplicas": 2}}),
    "autoscaler-priority-metrics": lambda: _populated(clusterAutoscaler={"enabled": True, "expander": "priority"},
                                                      metricsServer={"enabled": True}),
    "kube-router-node-local-dns": lambda: _populated(networking={"kuberouter": {}}, kubeProxy={"enabled": False},
                                                     kubeDNS={"nodeLocalDNS": {"enabled": True}}),
    "gce-pd-csi-balanced-storage": lambda: _populated("minimal_gce", cloudConfig={
        "gceServiceAccount": "default", "gcpPDCSIDriver": {"enabled": True, "defaultStorageClassName": "balanced-storage"}}),
    "external-dns-gce": lambda: _populated("minimal_gce", externalDns={"provider": "external-dns", "watchIngress": False}),
    "aws-iam-authenticator-crd": lambda: _case(authentication={"aws": {"backendMode": "CRD", "identityMappings": [
        {"arn": "arn:aws:iam::123456789012:role/dev", "username": "dev", "groups": ["dev"]}]}}),
    "kopeio": lambda: _populated(networking={"kopeio": {}}),
    "nvidia-dcgm": lambda: _populated(containerd={"nvidiaGPU": {"enabled": True, "dcgmExporter": {"enabled": True}}}),
    "cert-manager-options": lambda: _case(certManager={"enabled": True, "defaultIssuer": "letsencrypt",
                                                       "nameservers": ["1.1.1.1"], "featureGates": {"B": False, "A": True}}),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_manifest_validates_strictly(variant):
    completed, groups = VARIANTS[variant]()
    version = completed["spec"]["kubernetesVersion"].lstrip("v")
    files = channel.render(completed, groups, account_id=ACCOUNT)
    documents = [document for path, data in files if path != channel.CHANNEL_PATH for document in yaml.safe_load_all(data)]
    # Kinds a CRD defines (the addon's own, or cert-manager's that a needsPKI addon's Certificate uses) have no
    # Kubernetes schema: they are checked against the CRD's served version schema instead.
    crd_schemas = {}
    for crd in [d for d in documents if d["kind"] == "CustomResourceDefinition"] + cert_manager_crds_objects():
        for served in crd["spec"]["versions"]:
            crd_schemas["%s/%s" % (crd["spec"]["group"], served["name"]), crd["spec"]["names"]["kind"]] = \
                served["schema"]["openAPIV3Schema"]
    for document in documents:
        schema = crd_schemas.get((document["apiVersion"], document["kind"]))
        if schema is not None:
            jsonschema.validate(document, schema)
        else:
            kubernetes_validate.validate(document, version, strict=True)
    assert len(documents) > 10


def cert_manager_crds_objects():
    return [{"kind": "CustomResourceDefinition", "spec": crd["spec"]} for crd in cert_manager_crds.CRDS]


def test_validation_would_catch_a_misspelt_field():
    completed, groups = _case()
    document = _workload(channel.render(completed, groups, account_id=ACCOUNT), CCM, "DaemonSet")
    document["spec"]["template"]["spec"]["tolerations"][0]["operater"] = "Exists"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(document, "1.34.0", strict=True)


def test_channel_hashes_are_the_sha256_of_the_stored_manifests():
    completed, groups = _case()
    files = dict(channel.render(completed, groups, account_id=ACCOUNT))
    entries = yaml.safe_load(files[channel.CHANNEL_PATH])["spec"]["addons"]
    assert len(entries) == 7
    for entry in entries:
        data = files["addons/" + entry["manifest"]]
        assert entry["manifestHash"] == hashlib.sha256(data).hexdigest()
        assert data == data.strip()
        for document in yaml.safe_load_all(data):
            labels = document["metadata"]["labels"]
            assert labels["addon.kops.k8s.io/name"] == entry["name"]
            assert labels["app.kubernetes.io/managed-by"] == "kops"
            assert all(labels[k] == v for k, v in entry["selector"].items())


def test_imds_mode_runs_the_handler_on_every_node():
    completed, groups = VARIANTS["imds-nth"]()
    files = channel.render(completed, groups)  # no account id needed without the queue
    daemonset = _workload(files, NTH, "DaemonSet")
    env = {e["name"]: e.get("value") for e in daemonset["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["ENABLE_SQS_TERMINATION_DRAINING"] == "false" and "QUEUE_URL" not in env
    assert not [d for d in _documents(files, NTH) if d["kind"] == "Deployment"]


def test_queue_mode_needs_the_account_and_says_how_to_give_it():
    completed, groups = _case()
    assert channel.needs_account_id(completed)
    with pytest.raises(AddonError, match="needs the AWS account id.*sts:GetCallerIdentity"):
        channel.render(completed, groups)
    deployment = _workload(channel.render(completed, groups, account_id="210987654321"), NTH, "Deployment")
    queue = {e["name"]: e.get("value") for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert queue["QUEUE_URL"] == "https://sqs.us-test-1.amazonaws.com/210987654321/minimal-aws-example-com-nth"


def test_variants_change_what_kops_changes():
    completed, groups = VARIANTS["snapshot-ipv6-selinux"]()
    files = channel.render(completed, groups, account_id=ACCOUNT)
    controller = _workload(files, EBS, "Deployment")["spec"]["template"]["spec"]
    assert [c["name"] for c in controller["containers"]] == [
        "ebs-plugin", "csi-provisioner", "csi-attacher", "csi-snapshotter", "csi-resizer", "liveness-probe"]
    assert controller["containers"][0]["env"][0] == {"name": "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE", "value": "IPv6"}
    corefile = _documents(files, COREDNS)[3]["data"]["Corefile"]
    assert corefile.splitlines()[-2].strip() == "dns64"
    ccm = _workload(files, CCM, "DaemonSet")["spec"]["template"]["spec"]
    assert ccm["securityContext"] == {"seLinuxOptions": {"level": "s0", "type": "spc_t"}}

    completed, groups = VARIANTS["dns-none-proxy"]()
    files = channel.render(completed, groups, account_id=ACCOUNT)
    coredns = _workload(files, COREDNS, "Deployment")["spec"]["template"]["spec"]
    assert coredns["containers"][0]["image"] == "proxy.example.com/mirror/coredns/coredns:v1.14.2"
    assert {"hostPath": {"path": "/etc/hosts", "type": "File"}, "name": "etc-hosts"} in coredns["volumes"]
    assert "hosts /rootfs/etc/hosts minimal-aws.example.com {" in _documents(files, COREDNS)[3]["data"]["Corefile"]


def test_normalize_image_is_kops():
    proxy, registry = {"containerProxy": "proxy.example.com/"}, {"containerRegistry": "mirror.example.com"}
    assert channel.normalize_image(proxy, "registry.k8s.io/coredns/coredns:v1") == "proxy.example.com/coredns/coredns:v1"
    assert channel.normalize_image(proxy, "nginx") == "proxy.example.com/nginx"
    assert channel.normalize_image(proxy, "weaveworks/weave-kube:2") == "proxy.example.com/weaveworks/weave-kube:2"
    assert channel.normalize_image(registry, "registry.k8s.io/sig-storage/csi-resizer:v2") == \
        "mirror.example.com/sig-storage-csi-resizer:v2"
    assert channel.normalize_image(registry, "mirror.example.com/x:1") == "mirror.example.com/x:1"


def test_cilium_is_kops_default_cni_with_its_selector_and_rolling_update():
    completed, groups = VARIANTS["cilium"]()
    files = dict(channel.render(completed, groups, account_id=ACCOUNT))
    entry = next(e for e in yaml.safe_load(files[channel.CHANNEL_PATH])["spec"]["addons"]
                 if e["name"] == "networking.cilium.io")
    assert entry["manifest"] == "networking.cilium.io/k8s-1.16-v1.15.yaml" and entry["id"] == "k8s-1.16"
    assert entry["selector"] == {"role.kubernetes.io/networking": "1"} and entry["needsRollingUpdate"] == "all"
    config = _documents(files.items(), "addons/" + entry["manifest"])[3]["data"]
    assert config["routing-mode"] == "tunnel" and config["tunnel-protocol"] == "vxlan" and "kvstore" not in config
    completed, groups = VARIANTS["cilium-eni-etcd"]()
    files = dict(channel.render(completed, groups, account_id=ACCOUNT))
    config = _documents(files.items(), "addons/" + entry["manifest"])[3]["data"]
    assert config["ipam"] == "eni" and config["eni-tags"] == "KubernetesCluster=minimal-aws.example.com"
    assert config["kvstore"] == "etcd" and "https://api.internal.minimal-aws.example.com:4003" in config["etcd-config"]


@pytest.mark.parametrize("field, value", [("gatewayAPI", {"enabled": True}), ("enablePrometheusMetrics", True)])
def test_cilium_features_not_rendered_are_refused(field, value):
    completed, groups = _populated(networking={"cilium": {field: value}})
    with pytest.raises(AddonError, match="spec.networking.cilium.%s" % field):
        channel.render(completed, groups, account_id=ACCOUNT)


def test_cilium_hubble_and_shared_ingress():
    completed, groups = _populated(networking={"cilium": {"hubble": {"enabled": True, "metrics": ["drop", "flow"]},
                                                          "ingress": {"enabled": True,
                                                                      "sharedLoadBalancerServiceName": "shared"}}})
    files = dict(channel.render(completed, groups, account_id=ACCOUNT))
    entry = next(e for e in yaml.safe_load(files[channel.CHANNEL_PATH])["spec"]["addons"]
                 if e["name"] == "networking.cilium.io")
    assert entry["needsPKI"] is True  # hubble's certificates come from the addon's Issuer
    documents = _documents(files.items(), "addons/" + entry["manifest"])
    found = {(d["kind"], d["metadata"]["name"]): d for d in documents}
    config = found[("ConfigMap", "cilium-config")]["data"]
    assert config["enable-hubble"] == "true" and config["hubble-metrics"] == "drop flow"
    assert config["enable-ingress-controller"] == "true" and config["ingress-shared-lb-service-name"] == "shared"
    assert "enforce-ingress-https" not in config  # unset in the spec: kops writes it only when set
    assert found[("Service", "shared")]["spec"]["type"] == "LoadBalancer"
    relay = found[("Deployment", "hubble-relay")]["spec"]["template"]["spec"]
    assert relay["containers"][0]["image"].endswith("/cilium/hubble-relay:" + completed["spec"]["networking"]["cilium"]
                                                    ["version"])
    agent = found[("DaemonSet", "cilium")]["spec"]["template"]["spec"]
    assert [p["name"] for p in agent["containers"][0]["ports"]] == ["peer-service", "hubble-metrics"]
    assert found[("Certificate", "hubble-server-certs")]["spec"]["commonName"] == "*.default.hubble-grpc.cilium.io"
    for key in (("Service", "hubble-metrics"), ("Service", "hubble-peer"), ("IngressClass", "cilium"),
                ("Role", "cilium-operator-ingress-secrets"), ("Certificate", "hubble-relay-client-certs")):
        assert key in found, key
    # Without metrics: no metrics port, Service or settings.
    completed, groups = _populated(networking={"cilium": {"hubble": {"enabled": True}}})
    files = dict(channel.render(completed, groups, account_id=ACCOUNT))
    documents = _documents(files.items(), "addons/" + entry["manifest"])
    assert not any(d["metadata"]["name"] == "hubble-metrics" for d in documents)
    assert "hubble-metrics" not in next(d for d in documents if d["metadata"]["name"] == "cilium-config")["data"]


def test_cluster_autoscaler_scales_the_node_groups_asgs_by_priority():
    completed, groups = VARIANTS["autoscaler-priority-metrics"]()
    files = dict(channel.render(completed, groups, account_id=ACCOUNT))
    path = "addons/cluster-autoscaler.addons.k8s.io/k8s-1.15.yaml"
    command = _workload(files.items(), path, "Deployment")["spec"]["template"]["spec"]["containers"][0]["command"]
    assert "--nodes=2:2:nodes.minimal-aws.example.com" in command and "--expander=priority" in command
    priorities = next(d for d in _documents(files.items(), path) if d["kind"] == "ConfigMap")["data"]["priorities"]
    assert priorities == ""  # minimal-aws' groups do not set autoscale, so no group has a priority
    entries = {e["name"]: e for e in yaml.safe_load(files[channel.CHANNEL_PATH])["spec"]["addons"]}
    assert entries["metrics-server.addons.k8s.io"]["needsPKI"] is True
    assert entries["metrics-server.addons.k8s.io"]["selector"] == {"k8s-app": "metrics-server"}


def test_cluster_autoscaler_on_gce_scales_each_zones_instance_group_manager():
    completed, groups = load_case(kops_fixtures.UPDATE_CLUSTER / "ha_gce")
    path = "addons/cluster-autoscaler.addons.k8s.io/k8s-1.15.yaml"
    url = "https://www.googleapis.com/compute/v1/projects/%s/zones/us-test1-%%s/instanceGroups/%%s-nodes-ha-gce-example-com" % (
        completed["spec"]["project"])

    def nodes_flags(groups):
        files = channel.render(completed, groups, account_id=ACCOUNT)
        container = _workload(files, path, "Deployment")["spec"]["template"]["spec"]["containers"][0]
        assert "env" not in container and "--cloud-provider=gce" in container["command"]
        assert not [arg for arg in container["command"] if arg.startswith("--aws-")]
        return [arg for arg in container["command"] if arg.startswith("--nodes=")]

    # 2 nodes over 3 zones: the third zone's manager can hold none, so the autoscaler is not told of it.
    assert nodes_flags(groups) == ["--nodes=1:1:" + url % ("a", "a"), "--nodes=1:1:" + url % ("b", "b")]
    groups = copy.deepcopy(groups)
    nodes = next(g for g in groups if g["metadata"]["name"] == "nodes")
    nodes["spec"].update(minSize=1, maxSize=4)
    assert nodes_flags(groups) == ["--nodes=1:2:" + url % ("a", "a"), "--nodes=0:1:" + url % ("b", "b"),
                                   "--nodes=0:1:" + url % ("c", "c")]
    nodes["spec"]["zones"] = ["us-test1-b"]
    assert nodes_flags(groups) == ["--nodes=1:4:" + url % ("b", "b")]
    nodes["spec"]["autoscale"] = False
    assert nodes_flags(groups) == []


def test_amazon_vpc_env_is_kops_defaults_then_the_spec_then_the_cluster():
    completed, groups = VARIANTS["amazon-vpc-ipv6"]()
    files = channel.render(completed, groups, account_id=ACCOUNT)
    path = "addons/networking.amazon-vpc-routed-eni/k8s-1.16.yaml"
    env = _workload(files, path, "DaemonSet")["spec"]["template"]["spec"]["containers"][0]["env"]
    values = {e["name"]: e.get("value") for e in env}
    assert values["ANNOTATE_POD_IP"] == "true" and values["ENABLE_IPv6"] == "true" and values["ENABLE_IPv4"] == "false"
    assert values["ENABLE_PREFIX_DELEGATION"] == "true"
    assert [e["name"] for e in env[:21]] == sorted(e["name"] for e in env[:21])
    role = next(d for d in _documents(files, path) if d["kind"] == "ClusterRole")
    assert {"apiGroups": [""], "resources": ["pods"], "verbs": ["list", "watch", "get", "patch"]} in role["rules"]


def test_service_account_permissions_wire_every_aws_addon_to_its_role():
    completed, groups = _case(iam={"useServiceAccountExternalPermissions": True})
    files = dict(channel.render(completed, groups, account_id=ACCOUNT))
    wired = {}
    for path, data in files.items():
        for document in yaml.safe_load_all(data) if path != channel.CHANNEL_PATH else []:
            pod = ((document or {}).get("spec") or {}).get("template", {}).get("spec") or {}
            for container in pod.get("containers") or []:
                arn = next((e["value"] for e in container.get("env") or [] if e["name"] == "AWS_ROLE_ARN"), None)
                if arn:
                    wired[pod["serviceAccountName"]] = arn.rsplit("/", 1)[1].split(".")[0]
    assert wired == {name: name for name in ("aws-cloud-controller-manager", "aws-node-termination-handler",
                                             "ebs-csi-controller-sa")}
    # The addons' accounts need the AWS account; without it the run says so instead of writing a wrong ARN.
    with pytest.raises(AddonError, match="AWS account"):
        channel.render(completed, groups, account_id=None)


def test_addons_kops_would_add_are_named_when_not_rendered():
    completed, groups = _case(authentication={"kopeio": {}}, kubeDNS={"provider": "KubeDNS"})
    assert channel.not_rendered(channel.Facts(completed, groups)) == ["kube-dns.addons.k8s.io", "authentication.kope.io"]


def test_store_files_list_the_kubelet_bootstrap_addon_last():
    """On GCE, where kubelets still bootstrap with a token (the bootstrap service verifies AWS identities only);
    an AWS cluster has neither the token nor its addon."""
    aws_completed, aws_groups = _case()
    vfs.reset_memfs()
    aws_store = layout.ClusterStore(vfs.open_store("memfs://addons"), aws_completed["metadata"]["name"])
    aws_changes, _hashes = nodeup_store.node_files(aws_store, aws_completed, aws_groups)
    aws_files = dict(channel.store_files(aws_completed, aws_groups, aws_changes, account_id=ACCOUNT))
    assert nodeup_store.BOOTSTRAP_ADDON_PATH not in dict(aws_changes)
    assert "kubelet-bootstrap" not in aws_files[channel.CHANNEL_PATH].decode()
    completed, groups = _case("minimal_gce")
    vfs.reset_memfs()
    cluster_store = layout.ClusterStore(vfs.open_store("memfs://addons"), completed["metadata"]["name"])
    node_changes, _hashes = nodeup_store.node_files(cluster_store, completed, groups)
    files = dict(channel.store_files(completed, groups, node_changes, account_id=ACCOUNT))
    last = yaml.safe_load(files[channel.CHANNEL_PATH])["spec"]["addons"][-1]
    bootstrap = dict(node_changes)[nodeup_store.BOOTSTRAP_ADDON_PATH]
    assert last == {"name": "kubelet-bootstrap.kubeops.io", "id": "k8s-1.20",
                    "manifest": "kubelet-bootstrap.kubeops.io/k8s-1.20.yaml",
                    "manifestHash": hashlib.sha256(bootstrap).hexdigest(),
                    "selector": {"addon.kops.k8s.io/name": "kubelet-bootstrap.kubeops.io"}}
    assert nodeup_store.BOOTSTRAP_ADDON_PATH not in files  # written by nodeconfig.store, never a Terraform object


# ---------------------------------------------------------------- the image table


def test_image_table_pins_every_image_the_templates_ask_for():
    images = set()
    cases = [VARIANTS[v]() for v in ("autoscaler-priority-metrics", "snapshot-ipv6-selinux", "flannel", "amazon-vpc-ipv6",
                                     "kube-router-node-local-dns", "cert-manager-options", "calico-typha", "nvidia-dcgm",
                                     "gce-pd-csi-balanced-storage", "external-dns-gce", "aws-iam-authenticator-crd")]
    for completed, groups in cases + [alb_case()]:
        for path, data in channel.render(completed, groups, account_id=ACCOUNT):
            if path != channel.CHANNEL_PATH:
                containers = [c for d in yaml.load_all(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
                              if d.get("kind") in ("Deployment", "DaemonSet")
                              for c in d["spec"]["template"]["spec"]["containers"] + d["spec"]["template"]["spec"].get(
                                  "initContainers", [])]
                images |= {c["image"] for c in containers}
                # and images a controller starts itself, named by a flag (cert-manager's ACME solver)
                images |= {arg.partition("=")[2] for c in containers for arg in c.get("args", []) if "-image=" in arg}
    pinned = {"%s:%s" % item for table in image_data.IMAGES.values() for item in table.items()}
    assert pinned <= images
    # Version tags (the DCGM exporter's are <DCGM version>-<exporter version>-<base image>, without a v).
    assert all(re.match(r"v?[0-9]+\.[0-9]+", tag) for table in image_data.IMAGES.values() for tag in table.values())


def _generator(kops, *args):
    return subprocess.run([sys.executable, str(REPO / "hack" / "gen_addon_images.py"), "--kops", str(kops)] + list(args),
                          capture_output=True, text=True, check=False, timeout=120)


def _mini_kops(tmp_path, coredns_line="        image: {{ if X }}{{ X }}{{ else }}registry.k8s.io/coredns/coredns:v9.9.9{{ end }}"):
    root = tmp_path / "upup/models/cloudup/resources/addons"
    (root / "coredns.addons.k8s.io").mkdir(parents=True)
    (root / "coredns.addons.k8s.io/k8s-1.12.yaml.template").write_text(
        "containers:\n" + coredns_line + "\n        image: registry.k8s.io/cpa/cluster-proportional-autoscaler:v1.2.3\n")
    (root / "metrics-server.addons.k8s.io").mkdir()
    (root / "metrics-server.addons.k8s.io/k8s-1.11.yaml.template").write_text(
        '        image: {{ or .MetricsServer.Image "registry.k8s.io/metrics-server/metrics-server:v0.0.7" }}\n')
    (root / "networking.flannel").mkdir()
    (root / "networking.flannel/k8s-1.25.yaml.template").write_text("        image: ghcr.io/flannel-io/flannel:v0.0.1\n")
    (root / "networking.amazon-vpc-routed-eni").mkdir()
    (root / "networking.amazon-vpc-routed-eni/k8s-1.16.yaml.template").write_text(
        '          image: "{{- or .Networking.AmazonVPC.Image "1234.dkr.ecr.us-west-2.amazonaws.com/cni:v0.0.2" }}"\n')
    (root / "networking.kuberouter").mkdir()
    (root / "networking.kuberouter/k8s-1.12.yaml.template").write_text(
        "        image: docker.io/cloudnativelabs/kube-router:v0.0.3\n")
    (root / "networking.projectcalico.org").mkdir()
    (root / "networking.projectcalico.org/k8s-1.25.yaml.template").write_text(
        '          image: {{ or .Networking.Calico.Registry "docker.io" }}/calico/cni:{{ or .Networking.Calico.Version "v0.0.3" }}\n')
    (root / "aws-ebs-csi-driver.addons.k8s.io").mkdir()
    (root / "aws-ebs-csi-driver.addons.k8s.io/k8s-1.17.yaml.template").write_text(
        "  image: registry.k8s.io/provider-aws/aws-ebs-csi-driver:{{ .Version }}\n"
        "  image: registry.k8s.io/sig-storage/livenessprobe:v2.0.0\n")
    (root / "aws-load-balancer-controller.addons.k8s.io").mkdir()
    (root / "aws-load-balancer-controller.addons.k8s.io/k8s-1.19.yaml.template").write_text(
        "        image: public.ecr.aws/eks/aws-load-balancer-controller:{{ or .CloudProvider.AWS.LoadBalancerController.Version\n"
        "          `v0.0.3` }}\n")
    (root / "certmanager.io").mkdir()
    (root / "certmanager.io/k8s-1.16.yaml.template").write_text(
        '          image: "quay.io/jetstack/cert-manager-controller:v0.0.3"\n'
        "          - --acme-http01-solver-image=quay.io/jetstack/cert-manager-acmesolver:v0.0.3\n")
    (root / "nvidia.addons.k8s.io").mkdir()
    (root / "nvidia.addons.k8s.io/k8s-1.16.yaml.template").write_text(
        "      - image: {{ $.Containerd.NvidiaGPU.DevicePluginImage }}\n"
        '        image: "nvcr.io/nvidia/k8s/dcgm-exporter:1.2.3-4.5.6-ubuntu"\n')
    (root / "gcp-pd-csi-driver.addons.k8s.io").mkdir()
    (root / "gcp-pd-csi-driver.addons.k8s.io/k8s-1.23.yaml.template").write_text(
        "        image: registry.k8s.io/cloud-provider-gcp/gcp-compute-persistent-disk-csi-driver:{{ .Version }}\n"
        "        image: registry.k8s.io/sig-storage/csi-resizer:v0.0.5\n")
    (root / "external-dns.addons.k8s.io").mkdir()
    (root / "external-dns.addons.k8s.io/k8s-1.19.yaml.template").write_text(
        "        image: registry.k8s.io/external-dns/external-dns:v0.0.6\n")
    (root / "authentication.aws").mkdir()
    (root / "authentication.aws/k8s-1.12.yaml.template").write_text(
        '        image: {{ or .Authentication.AWS.Image "public.ecr.aws/eks-distro/kubernetes-sigs/aws-iam-authenticator:v0.0.7" }}\n')
    (root / "snapshot-controller.addons.k8s.io").mkdir()
    (root / "snapshot-controller.addons.k8s.io/k8s-1.20.yaml.template").write_text(
        "        image: registry.k8s.io/sig-storage/snapshot-controller:v0.0.4\n")
    (tmp_path / "kops-version.go").write_text('const KOPS_RELEASE_VERSION = "1.99.0"\n')
    return tmp_path


def test_generator_reads_pins_and_skips_templated_tags(tmp_path):
    result = _generator(_mini_kops(tmp_path), "--commit", "abcdef1234")
    assert result.returncode == 0, result.stderr
    table = {}
    exec(compile(result.stdout, "image_data", "exec"), table)  # pylint: disable=exec-used  # our generator's output
    assert table["IMAGES"] == {
        "coredns.addons.k8s.io": {"registry.k8s.io/coredns/coredns": "v9.9.9",
                                  "registry.k8s.io/cpa/cluster-proportional-autoscaler": "v1.2.3"},
        "aws-ebs-csi-driver.addons.k8s.io": {"registry.k8s.io/sig-storage/livenessprobe": "v2.0.0"},
        "metrics-server.addons.k8s.io": {"registry.k8s.io/metrics-server/metrics-server": "v0.0.7"},
        "networking.flannel": {"ghcr.io/flannel-io/flannel": "v0.0.1"},
        "networking.amazon-vpc-routed-eni": {"1234.dkr.ecr.us-west-2.amazonaws.com/cni": "v0.0.2"},
        "networking.kuberouter": {"docker.io/cloudnativelabs/kube-router": "v0.0.3"},
        "aws-load-balancer-controller.addons.k8s.io": {"public.ecr.aws/eks/aws-load-balancer-controller": "v0.0.3"},
        "certmanager.io": {"quay.io/jetstack/cert-manager-controller": "v0.0.3",
                           "quay.io/jetstack/cert-manager-acmesolver": "v0.0.3"},
        "networking.projectcalico.org": {"docker.io/calico/cni": "v0.0.3"},
        "snapshot-controller.addons.k8s.io": {"registry.k8s.io/sig-storage/snapshot-controller": "v0.0.4"},
        "nvidia.addons.k8s.io": {"nvcr.io/nvidia/k8s/dcgm-exporter": "1.2.3-4.5.6-ubuntu"},
        "gcp-pd-csi-driver.addons.k8s.io": {"registry.k8s.io/sig-storage/csi-resizer": "v0.0.5"},
        "external-dns.addons.k8s.io": {"registry.k8s.io/external-dns/external-dns": "v0.0.6"},
        "authentication.aws": {"public.ecr.aws/eks-distro/kubernetes-sigs/aws-iam-authenticator": "v0.0.7"},
    }


def test_generator_refuses_a_repository_pinned_twice(tmp_path):
    kops = _mini_kops(tmp_path, "        image: registry.k8s.io/cpa/cluster-proportional-autoscaler:v0.0.1")
    result = _generator(kops, "--commit", "abcdef1234")
    assert result.returncode == 1 and "cluster-proportional-autoscaler is pinned at both v0.0.1 and v1.2.3" in result.stderr


@pytest.mark.skipif(not os.environ.get("KOPS_SOURCE"),
                    reason="KOPS_SOURCE is not set: point it at a kops checkout to compare the image table with kops")
def test_committed_image_table_is_what_kops_source_generates():
    args = ["--commit", os.environ["KOPS_COMMIT"]] if os.environ.get("KOPS_COMMIT") else []
    result = _generator(os.environ["KOPS_SOURCE"], *args)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (REPO / "plugins/module_utils/addons/generated/image_data.py").read_text()
