"""The addons a spec switches on beyond kops' defaults: snapshot-controller, node-problem-detector, the NVIDIA
device plugin, the GCE PD CSI driver, external-dns, aws-iam-authenticator (authentication.aws) and kopeio networking.
(cluster-autoscaler on GCE: test_channel.py.)

In CI (our own specs): the objects each renders, what the spec changes, the channel entry as kops' builder
writes it (bootstrapchannelbuilder.go), strict schema validation, refusals, and the data generators.
With KOPS_SOURCE: byte equality with kops' rendered files in the fixtures that enable them (many-addons,
many-addons-ccm, nvidia, external_dns, complex, privatekopeio, the 10 GCE fixtures with the PD CSI driver),
kopeio's objects equal to kops' static manifest, and the committed CRD and DCGM metrics tables equal to what
kops' templates generate.
"""

from __future__ import annotations

import copy
import os
import pathlib
import subprocess
import sys

import kubernetes_validate
import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.addons import channel
from ansible_collections.kubeops.kops.plugins.module_utils.addons.generated import image_data
from ansible_collections.kubeops.kops.plugins.module_utils.addons.facts import AddonError
from ansible_collections.kubeops.kops.plugins.module_utils.addons.generated.nvidia_data import DCGM_METRICS
from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.completion import cloudfacts, populate

from tests.conformance import kops_fixtures
from tests.unit.addons.test_addons_vs_kops import ACCOUNT, kops_files, load_case

REPO = pathlib.Path(__file__).resolve().parents[3]
KOPS = os.environ.get("KOPS_SOURCE")
NEEDS_KOPS = pytest.mark.skipif(not KOPS, reason="KOPS_SOURCE is not set: point it at a kops checkout to compare "
                                "with kops' rendered files")
SNAPSHOT = "addons/snapshot-controller.addons.k8s.io/k8s-1.20.yaml"
NPD = "addons/node-problem-detector.addons.k8s.io/k8s-1.17.yaml"
CRD_DATA = REPO / "plugins/module_utils/addons/generated/snapshot_controller_crds.py"
NVIDIA = "addons/nvidia.addons.k8s.io/k8s-1.16.yaml"
NVIDIA_DATA = REPO / "plugins/module_utils/addons/generated/nvidia_data.py"
KOPEIO = "addons/networking.kope.io/k8s-1.12.yaml"
AUTHENTICATOR = "addons/authentication.aws/k8s-1.12.yaml"
EXTERNAL_DNS = "addons/external-dns.addons.k8s.io/k8s-1.19.yaml"
GCP_PD = "addons/gcp-pd-csi-driver.addons.k8s.io/k8s-1.23.yaml"
GCE_PD_FIXTURES = ("ha_gce", "many-addons-gce", "minimal_gce_dns-none", "minimal_gce_ilb", "minimal_gce_ilb_cilium_etcd",
                   "minimal_gce_ilb_longclustername", "minimal_gce_longclustername", "minimal_gce_plb",
                   "minimal_gce_plb_apiserver", "minimal_gce_private")


def _case(**spec):
    completed, groups = load_case(kops_fixtures.UPDATE_CLUSTER / "minimal-aws")
    completed = copy.deepcopy(completed)
    completed["spec"].update(spec)
    return completed, groups


def _render(completed, groups):
    files = dict(channel.render(completed, groups, account_id=ACCOUNT))
    entries = {e["name"]: e for e in yaml.safe_load(files[channel.CHANNEL_PATH])["spec"]["addons"]}
    return files, entries


def _objects(data):
    return {(d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"]): d for d in yaml.safe_load_all(data)}


def _npd_spec(**fields):
    return dict({"enabled": True, "image": "registry.k8s.io/node-problem-detector/node-problem-detector:v0.8.18",
                 "cpuRequest": "20m", "memoryRequest": "100Mi", "memoryLimit": "100Mi"}, **fields)


# ---------------------------------------------------------------- snapshot-controller


def test_snapshot_controller_objects_and_channel_entry():
    completed, groups = _case(snapshotController={"enabled": True})
    files, entries = _render(completed, groups)
    found = _objects(files[SNAPSHOT])
    assert sorted(found) == sorted([
        ("CustomResourceDefinition", "", "volumesnapshotclasses.snapshot.storage.k8s.io"),
        ("CustomResourceDefinition", "", "volumesnapshotcontents.snapshot.storage.k8s.io"),
        ("CustomResourceDefinition", "", "volumesnapshots.snapshot.storage.k8s.io"),
        ("ServiceAccount", "kube-system", "snapshot-controller"),
        ("Role", "kube-system", "snapshot-controller-leaderelection"),
        ("ClusterRole", "", "snapshot-controller-runner"),
        ("RoleBinding", "kube-system", "snapshot-controller-leaderelection"),
        ("ClusterRoleBinding", "", "snapshot-controller-role"),
        ("Deployment", "kube-system", "snapshot-controller"),
        ("Deployment", "kube-system", "snapshot-validation-deployment"),
        ("Service", "kube-system", "snapshot-validation-service"),
        ("ValidatingWebhookConfiguration", "", "validation-webhook.snapshot.storage.k8s.io"),
        ("Certificate", "kube-system", "snapshot-validation-service"),
    ])
    certificate = found["Certificate", "kube-system", "snapshot-validation-service"]
    assert certificate["spec"]["dnsNames"][1] == "snapshot-validation-service.kube-system.svc.minimal-aws.example.com"
    assert certificate["spec"]["issuerRef"] == {"kind": "Issuer", "name": "snapshot-controller.addons.k8s.io"}
    pinned = image_data.IMAGES["snapshot-controller.addons.k8s.io"]
    images = {c["image"] for key, d in found.items() if key[0] == "Deployment"
              for c in d["spec"]["template"]["spec"]["containers"]}
    assert images == {"%s:%s" % item for item in pinned.items()} and len(images) == 2
    for document in found.values():
        assert document["metadata"]["labels"]["k8s-addon"] == "snapshot-controller.addons.k8s.io"
    entry = entries["snapshot-controller.addons.k8s.io"]
    assert entry["needsPKI"] is True and "prune" not in entry and entry["id"] == "k8s-1.20"
    # kops lists it after the EBS CSI driver, the last of the addons before it.
    assert list(entries).index("snapshot-controller.addons.k8s.io") == list(entries).index(
        "aws-ebs-csi-driver.addons.k8s.io") + 1


def test_snapshot_controller_default_class_is_the_ebs_drivers():
    completed, groups = _case(snapshotController={"enabled": True, "installDefaultClass": True})
    files, _entries = _render(completed, groups)
    snapshot_class = _objects(files[SNAPSHOT])["VolumeSnapshotClass", "", "csi-hostpath-snapclass"]
    assert snapshot_class["driver"] == "ebs.csi.aws.com" and snapshot_class["deletionPolicy"] == "Delete"
    assert snapshot_class["metadata"]["annotations"] == {"snapshot.storage.kubernetes.io/is-default-class": "true"}
    completed, groups = _case(snapshotController={"enabled": False})
    assert SNAPSHOT not in _render(completed, groups)[0]


# ---------------------------------------------------------------- node-problem-detector


def test_node_problem_detector_takes_image_and_resources_from_the_spec():
    completed, groups = _case(nodeProblemDetector=_npd_spec(image="example.com/npd:v1", cpuLimit="200m",
                                                            memoryLimit="1Gi", cpuRequest="1"))
    files, entries = _render(completed, groups)
    found = _objects(files[NPD])
    assert sorted(found) == [("ClusterRoleBinding", "", "node-problem-detector"),
                             ("DaemonSet", "kube-system", "node-problem-detector"),
                             ("ServiceAccount", "kube-system", "node-problem-detector")]
    container = found["DaemonSet", "kube-system", "node-problem-detector"]["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "example.com/npd:v1"
    assert container["resources"] == {"limits": {"cpu": "200m", "memory": "1Gi"}, "requests": {"cpu": 1, "memory": "100Mi"}}
    assert "--config.system-stats-monitor=/config/system-stats-monitor.json" in container["command"]
    entry = entries["node-problem-detector.addons.k8s.io"]
    assert [k for k in entry["prune"]["kinds"] if k["kind"] == "DaemonSet"][0]["namespaces"] == ["kube-system"]
    assert "needsPKI" not in entry
    completed, groups = _case(nodeProblemDetector=_npd_spec())
    files, _entries = _render(completed, groups)
    container = _objects(files[NPD])["DaemonSet", "kube-system", "node-problem-detector"]["spec"]["template"]["spec"][
        "containers"][0]
    assert container["resources"]["limits"] == {"memory": "100Mi"}  # no CPU limit unless the spec sets one


def test_node_problem_detector_needs_a_completed_spec():
    completed, groups = _case(nodeProblemDetector={"enabled": True})
    with pytest.raises(AddonError, match=r"spec.nodeProblemDetector.image is missing from the completed spec"):
        channel.render(completed, groups, account_id=ACCOUNT)


def test_manifests_validate_strictly():
    completed, groups = _case(nodeProblemDetector=_npd_spec(cpuLimit="1"), snapshotController={"enabled": True})
    files, _entries = _render(completed, groups)
    version = completed["spec"]["kubernetesVersion"].lstrip("v")
    checked = 0
    for path in (NPD, SNAPSHOT):
        for document in yaml.safe_load_all(files[path]):
            if document["kind"] in ("Certificate",):  # a cert-manager kind: test_channel checks it against its CRD
                continue
            kubernetes_validate.validate(document, version, strict=True)
            checked += 1
    assert checked == 15


# ---------------------------------------------------------------- nvidia


def _nvidia_case(cluster_gpu, group_gpu=None):
    """minimal-aws completed with the NVIDIA runtime on the cluster and/or on the nodes group."""
    directory = kops_fixtures.UPDATE_CLUSTER / "minimal-aws"
    cluster, groups = objects.split_objects([d for d in yaml.safe_load_all((directory / "in-v1alpha2.yaml").read_text())
                                             if d])
    if cluster_gpu is not None:
        cluster["spec"]["containerd"] = {"nvidiaGPU": cluster_gpu}
    if group_gpu is not None:
        for group in groups:
            if group["spec"]["role"] == "Node":
                group["spec"]["containerd"] = {"nvidiaGPU": group_gpu}
    return populate.populate_cluster_spec(cluster, groups, cloudfacts.kops_test_cloud()), groups


def test_nvidia_device_plugin_runs_on_gpu_nodes():
    completed, groups = _nvidia_case({"enabled": True})
    files, entries = _render(completed, groups)
    found = _objects(files[NVIDIA])
    assert sorted(found) == [("DaemonSet", "kube-system", "nvidia-device-plugin-daemonset"), ("RuntimeClass", "", "nvidia")]
    pod = found["DaemonSet", "kube-system", "nvidia-device-plugin-daemonset"]["spec"]["template"]["spec"]
    assert pod["containers"][0]["image"] == "nvcr.io/nvidia/k8s-device-plugin:v0.17.3"  # completion's default
    assert pod["nodeSelector"] == {"kops.k8s.io/gpu": "1"} and pod["runtimeClassName"] == "nvidia"
    assert found["RuntimeClass", "", "nvidia"]["scheduling"]["tolerations"] == [
        {"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}]
    assert entries["nvidia.addons.k8s.io"] == {
        "name": "nvidia.addons.k8s.io", "id": "k8s-1.16", "manifest": "nvidia.addons.k8s.io/k8s-1.16.yaml",
        "manifestHash": entries["nvidia.addons.k8s.io"]["manifestHash"], "selector": {"k8s-addon": "nvidia.addons.k8s.io"}}
    assert "nvidia.addons.k8s.io" not in channel.not_rendered(channel.Facts(completed, groups))


def test_nvidia_dcgm_exporter_and_selinux():
    completed, groups = _nvidia_case({"enabled": True, "image": "example.com/plugin:v1", "dcgmExporter": {"enabled": True}})
    completed["spec"]["containerd"]["seLinuxEnabled"] = True
    found = _objects(_render(completed, groups)[0][NVIDIA])
    assert {key[2] for key in found} == {"nvidia-device-plugin-daemonset", "nvidia", "dcgm-exporter",
                                         "exporter-metrics-config-map", "dcgm-exporter-read-cm"}
    assert found["ConfigMap", "kube-system", "exporter-metrics-config-map"]["data"]["metrics"] == DCGM_METRICS
    exporter = found["DaemonSet", "kube-system", "dcgm-exporter"]
    assert exporter["metadata"]["labels"]["app.kubernetes.io/version"] == "2.6.10"
    container = exporter["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "nvcr.io/nvidia/k8s/dcgm-exporter:2.4.6-2.6.10-ubuntu20.04"
    assert container["securityContext"]["seLinuxOptions"] == {"level": "s0", "type": "spc_t"}
    plugin = found["DaemonSet", "kube-system", "nvidia-device-plugin-daemonset"]["spec"]["template"]["spec"]["containers"][0]
    assert plugin["image"] == "example.com/plugin:v1" and plugin["securityContext"]["seLinuxOptions"]["type"] == "spc_t"


def test_nvidia_on_a_group_alone_names_the_missing_image():
    """kops adds the addon for a group's runtime too, but its template reads the cluster's image."""
    completed, groups = _nvidia_case(None, {"enabled": True})
    assert channel.ADDONS[[a.name for a in channel.ADDONS].index("nvidia.addons.k8s.io")].applies(
        channel.Facts(completed, groups))
    with pytest.raises(AddonError, match=r"spec.containerd.nvidiaGPU.image is missing"):
        channel.render(completed, groups, account_id=ACCOUNT)
    completed["spec"]["containerd"]["nvidiaGPU"] = {"image": "example.com/plugin:v1"}
    assert _objects(_render(completed, groups)[0][NVIDIA])


def _nvidia_generator(kops, *args):
    return subprocess.run([sys.executable, str(REPO / "hack" / "gen_nvidia_data.py"), "--kops", str(kops)] + list(args),
                          capture_output=True, text=True, check=False, timeout=120)


def test_nvidia_generator_copies_the_metrics_config_map(tmp_path):
    template = tmp_path / "upup/models/cloudup/resources/addons/nvidia.addons.k8s.io"
    template.mkdir(parents=True)
    (template / "k8s-1.16.yaml.template").write_text(
        "kind: RuntimeClass\n{{ with .X }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n"
        "  name: exporter-metrics-config-map\ndata:\n  metrics: |\n      # Format\n      A, gauge, it's a\n---\n{{ end }}\n")
    (tmp_path / "kops-version.go").write_text('const KOPS_RELEASE_VERSION = "1.99.0"\n')
    result = _nvidia_generator(tmp_path, "--commit", "abcdef1234")
    assert result.returncode == 0, result.stderr
    table = {}
    exec(compile(result.stdout, "nvidia_data", "exec"), table)  # pylint: disable=exec-used  # our generator's output
    assert table["DCGM_METRICS"] == "# Format\nA, gauge, it's a\n"
    (template / "k8s-1.16.yaml.template").write_text("kind: RuntimeClass\n")
    result = _nvidia_generator(tmp_path, "--commit", "abcdef1234")
    assert result.returncode == 1 and "no ConfigMap exporter-metrics-config-map" in result.stderr


@NEEDS_KOPS
def test_committed_dcgm_metrics_are_what_kops_source_generates():
    args = ["--commit", os.environ["KOPS_COMMIT"]] if os.environ.get("KOPS_COMMIT") else []
    result = _nvidia_generator(KOPS, *args)
    assert result.returncode == 0, result.stderr
    assert result.stdout == NVIDIA_DATA.read_text()


# ---------------------------------------------------------------- gcp-pd-csi-driver


def _gce_case(**driver):
    """ha_gce (the conformance fixture that enables the driver), completed, its driver settings changed."""
    completed, groups = load_case(kops_fixtures.UPDATE_CLUSTER / "ha_gce")
    completed = copy.deepcopy(completed)
    completed["spec"]["cloudConfig"]["gcpPDCSIDriver"].update(driver)
    return completed, groups


def test_gcp_pd_csi_driver_objects_and_default_class():
    completed, groups = _gce_case()
    files, entries = _render(completed, groups)
    found = _objects(files[GCP_PD])
    assert len(found) == 25
    assert {key[2] for key in found if key[0] == "StorageClass"} == {"standard-csi", "balanced-csi", "balanced-storage",
                                                                     "ssd-csi"}
    defaults = {key[2]: (d["metadata"].get("annotations") or {}).get("storageclass.kubernetes.io/is-default-class")
                for key, d in found.items() if key[0] == "StorageClass"}
    assert defaults == {"standard-csi": "false", "balanced-csi": "true", "balanced-storage": None, "ssd-csi": None}
    controller = found["Deployment", "gce-pd-csi-driver", "csi-gce-pd-controller"]["spec"]["template"]["spec"]
    driver = next(c for c in controller["containers"] if c["name"] == "gce-pd-driver")
    assert driver["image"] == ("registry.k8s.io/cloud-provider-gcp/gcp-compute-persistent-disk-csi-driver:%s"
                               % completed["spec"]["cloudConfig"]["gcpPDCSIDriver"]["version"])
    assert "--extra-labels=k8s-io-cluster-name=%s" % completed["metadata"]["name"].replace(".", "-") in driver["args"]
    sidecars = {c["image"] for c in controller["containers"] if c["name"] != "gce-pd-driver"}
    pinned = image_data.IMAGES["gcp-pd-csi-driver.addons.k8s.io"]
    assert sidecars <= {"%s:%s" % item for item in pinned.items()} and len(sidecars) == 4
    assert entries["gcp-pd-csi-driver.addons.k8s.io"] == {
        "name": "gcp-pd-csi-driver.addons.k8s.io", "id": "k8s-1.23", "manifest": "gcp-pd-csi-driver.addons.k8s.io/k8s-1.23.yaml",
        "manifestHash": entries["gcp-pd-csi-driver.addons.k8s.io"]["manifestHash"],
        "selector": {"k8s-addon": "gcp-pd-csi-driver.addons.k8s.io"}}
    names = list(entries)
    assert names.index("storage-gce.addons.k8s.io") < names.index("gcp-pd-csi-driver.addons.k8s.io") < names.index(
        "gcp-cloud-controller.addons.k8s.io")


def test_gcp_pd_csi_driver_follows_the_spec():
    completed, groups = _gce_case(defaultStorageClassName="balanced-storage", version="v9.9.9")
    found = _objects(_render(completed, groups)[0][GCP_PD])
    assert found["StorageClass", "", "balanced-storage"]["metadata"]["annotations"] == {
        "storageclass.kubernetes.io/is-default-class": "true"}
    assert "annotations" not in found["StorageClass", "", "balanced-csi"]["metadata"]
    node = found["DaemonSet", "gce-pd-csi-driver", "csi-gce-pd-node"]["spec"]["template"]["spec"]
    assert next(c for c in node["containers"] if c["name"] == "gce-pd-driver")["image"].endswith(":v9.9.9")
    completed["spec"]["cloudConfig"]["manageStorageClasses"] = False
    found = _objects(_render(completed, groups)[0][GCP_PD])
    assert not [key for key in found if key[0] == "StorageClass"] and len(found) == 21
    completed, groups = _gce_case(enabled=False)
    assert GCP_PD not in _render(completed, groups)[0]
    completed, groups = _gce_case(version=None)
    with pytest.raises(AddonError, match=r"spec.cloudConfig.gcpPDCSIDriver.version is missing"):
        channel.render(completed, groups, account_id=ACCOUNT)


@NEEDS_KOPS
@pytest.mark.parametrize("fixture", GCE_PD_FIXTURES)
def test_gcp_pd_csi_driver_byte_equal_to_kops(fixture):
    directory = pathlib.Path(KOPS) / "tests/integration/update_cluster" / fixture
    completed, groups = load_case(directory)
    theirs = kops_files(directory, completed["metadata"]["name"])
    files, entries = _render(completed, groups)
    assert files[GCP_PD] == theirs["gcp-pd-csi-driver.addons.k8s.io-k8s-1.23"]
    their_entries = {e["name"]: e for e in yaml.safe_load(theirs["bootstrap"])["spec"]["addons"]}
    assert entries["gcp-pd-csi-driver.addons.k8s.io"] == their_entries["gcp-pd-csi-driver.addons.k8s.io"]


# ---------------------------------------------------------------- external-dns


def _external_dns_args(files):
    deployment = _objects(files[EXTERNAL_DNS])["Deployment", "kube-system", "external-dns"]
    return deployment["spec"]["template"]["spec"]["containers"][0]["args"]


def test_external_dns_replaces_dns_controller_on_aws_and_gce():
    completed, groups = _case(externalDns={"provider": "external-dns"}, dnsZone="Z1EXAMPLE")
    files, entries = _render(completed, groups)
    assert sorted(_objects(files[EXTERNAL_DNS])) == [
        ("ClusterRole", "", "kops:external-dns"), ("ClusterRoleBinding", "", "kops:external-dns"),
        ("Deployment", "kube-system", "external-dns"), ("Service", "kube-system", "external-dns"),
        ("ServiceAccount", "kube-system", "external-dns")]
    assert _external_dns_args(files) == [
        "--provider=aws", "--events", "--source=ingress", "--source=pod", "--source=service",
        "--compatibility=kops-dns-controller", "--registry=txt", "--txt-owner-id=kops-minimal-aws.example.com",
        "--zone-id-filter=Z1EXAMPLE"]
    assert entries["external-dns.addons.k8s.io"]["id"] == "k8s-1.19" and "prune" not in entries["external-dns.addons.k8s.io"]
    names = list(entries)
    assert names.index("limit-range.addons.k8s.io") < names.index("external-dns.addons.k8s.io")
    completed, groups = load_case(kops_fixtures.UPDATE_CLUSTER / "minimal_gce")
    completed = copy.deepcopy(completed)
    completed["spec"]["externalDns"] = {"provider": "external-dns", "watchIngress": False, "watchNamespace": "web"}
    args = _external_dns_args(_render(completed, groups)[0])
    assert args[:3] == ["--provider=google", "--google-project=%s" % completed["spec"]["project"], "--events"]
    assert "--source=ingress" not in args and args[-1] == "--namespace=web"


def test_external_dns_needs_published_records():
    completed, groups = _case(externalDns={"provider": "external-dns"}, topology={"dns": {"type": "None"}})
    assert EXTERNAL_DNS not in _render(completed, groups)[0]
    completed, groups = _case(externalDns={"provider": "dns-controller"})
    assert EXTERNAL_DNS not in _render(completed, groups)[0]


@NEEDS_KOPS
def test_external_dns_byte_equal_to_kops():
    directory = pathlib.Path(KOPS) / "tests/integration/update_cluster/external_dns"
    completed, groups = load_case(directory)
    theirs = kops_files(directory, completed["metadata"]["name"])
    files, entries = _render(completed, groups)
    assert files[EXTERNAL_DNS] == theirs["external-dns.addons.k8s.io-k8s-1.19"]
    their_entries = {e["name"]: e for e in yaml.safe_load(theirs["bootstrap"])["spec"]["addons"]}
    assert entries["external-dns.addons.k8s.io"] == their_entries["external-dns.addons.k8s.io"]


# ---------------------------------------------------------------- aws-iam-authenticator


def _authenticator(files):
    found = _objects(files[AUTHENTICATOR])
    return found, found["DaemonSet", "kube-system", "aws-iam-authenticator"]["spec"]["template"]["spec"]


def test_aws_iam_authenticator_with_crd_mappings():
    mapping = {"arn": "arn:aws:iam::123456789012:role/dev", "username": "dev:{{SessionName}}", "groups": ["dev"]}
    completed, groups = _case(authentication={"aws": {"backendMode": "CRD", "identityMappings": [mapping],
                                                      "cpuLimit": "100m"}})
    files, entries = _render(completed, groups)
    found, pod = _authenticator(files)
    assert sorted(found) == [
        ("ClusterRole", "", "aws-iam-authenticator"), ("ClusterRoleBinding", "", "aws-iam-authenticator"),
        ("CustomResourceDefinition", "", "iamidentitymappings.iamauthenticator.k8s.aws"),
        ("DaemonSet", "kube-system", "aws-iam-authenticator"), ("IAMIdentityMapping", "", "iam-identity-mapping-0"),
        ("ServiceAccount", "kube-system", "aws-iam-authenticator")]
    assert found["IAMIdentityMapping", "", "iam-identity-mapping-0"]["spec"] == mapping
    container = pod["containers"][0]
    # a CRD backend without a cluster id: the cluster's name; no mounted config file
    assert container["args"] == ["server", "--cluster-id=minimal-aws.example.com", "--state-dir=/var/aws-iam-authenticator",
                                 "--kubeconfig-pregenerated=true", "--backend-mode=CRD"]
    assert container["resources"]["limits"] == {"cpu": "100m", "memory": "20Mi"}
    assert [v["name"] for v in pod["volumes"]] == ["output", "state"]
    assert pod["nodeSelector"] == {"node-role.kubernetes.io/control-plane": ""} and pod["hostNetwork"] is True
    assert container["image"] == "%s:%s" % next(iter(image_data.IMAGES["authentication.aws"].items()))
    entry = entries["authentication.aws"]
    assert entry["selector"] == {"role.kubernetes.io/authentication": "1"} and entry["id"] == "k8s-1.12"
    names = list(entries)
    assert names.index("authentication.aws") + 1 == names.index("aws-cloud-controller.addons.k8s.io")
    for document in found.values():
        assert document["metadata"]["labels"]["role.kubernetes.io/authentication"] == "1"


def test_aws_iam_authenticator_mounted_file_mode():
    completed, groups = _case(authentication={"aws": {"image": "example.com/authenticator:v1", "memoryRequest": "64Mi"}},
                              containerd={"seLinuxEnabled": True})
    found, pod = _authenticator(_render(completed, groups)[0])
    container = pod["containers"][0]
    assert container["args"][:2] == ["server", "--config=/etc/aws-iam-authenticator/config.yaml"]
    assert not [arg for arg in container["args"] if arg.startswith(("--cluster-id", "--backend-mode"))]
    assert pod["volumes"][0] == {"configMap": {"name": "aws-iam-authenticator"}, "name": "config"}
    assert container["image"] == "example.com/authenticator:v1" and container["resources"]["requests"]["memory"] == "64Mi"
    assert pod["securityContext"] == {"seLinuxOptions": {"level": "s0", "type": "spc_t"}}
    assert not [key for key in found if key[0] == "IAMIdentityMapping"]


@NEEDS_KOPS
def test_aws_iam_authenticator_byte_equal_to_kops():
    directory = pathlib.Path(KOPS) / "tests/integration/update_cluster/complex"
    completed, groups = load_case(directory)
    theirs = kops_files(directory, completed["metadata"]["name"])
    files, entries = _render(completed, groups)
    assert files[AUTHENTICATOR] == theirs["authentication.aws-k8s-1.12"]
    their_entries = {e["name"]: e for e in yaml.safe_load(theirs["bootstrap"])["spec"]["addons"]}
    assert entries["authentication.aws"] == their_entries["authentication.aws"]


# ---------------------------------------------------------------- kopeio networking


def test_kopeio_networking_agent_on_every_node():
    completed, groups = _case(networking={"kopeio": {}})
    files, entries = _render(completed, groups)
    found = _objects(files[KOPEIO])
    assert sorted(found) == [("ClusterRole", "", "kopeio:networking-agent"),
                             ("ClusterRoleBinding", "", "kopeio:networking-agent"),
                             ("DaemonSet", "kube-system", "kopeio-networking-agent"),
                             ("ServiceAccount", "kube-system", "kopeio-networking-agent")]
    pod = found["DaemonSet", "kube-system", "kopeio-networking-agent"]["spec"]["template"]["spec"]
    assert pod["hostNetwork"] and pod["hostPID"] and pod["tolerations"][0] == {"effect": "NoSchedule", "operator": "Exists"}
    for document in found.values():
        assert document["metadata"]["labels"]["role.kubernetes.io/networking"] == "1"
    entry = entries["networking.kope.io"]
    assert entry["selector"] == {"role.kubernetes.io/networking": "1"} and entry["prune"]["kinds"]
    assert "networking.kope.io" not in channel.not_rendered(channel.Facts(completed, groups))


@NEEDS_KOPS
def test_kopeio_objects_are_kops_static_manifest():
    """kops' manifest is a plain file (no template): every object, relabelled, equals ours field by field."""
    manifest = pathlib.Path(KOPS) / "upup/models/cloudup/resources/addons/networking.kope.io/k8s-1.12.yaml"
    addon = next(a for a in channel.ADDONS if a.name == "networking.kope.io")
    theirs = channel.remap(addon, [d for d in yaml.safe_load_all(manifest.read_text()) if d])
    completed, groups = _case(networking={"kopeio": {}})
    assert list(yaml.safe_load_all(_render(completed, groups)[0][KOPEIO])) == theirs


@NEEDS_KOPS
def test_kopeio_byte_equal_to_kops():
    directory = pathlib.Path(KOPS) / "tests/integration/update_cluster/privatekopeio"
    completed, groups = load_case(directory)
    theirs = kops_files(directory, completed["metadata"]["name"])
    files, entries = _render(completed, groups)
    assert files[KOPEIO] == theirs["networking.kope.io-k8s-1.12"]
    their_entries = {e["name"]: e for e in yaml.safe_load(theirs["bootstrap"])["spec"]["addons"]}
    assert entries["networking.kope.io"] == their_entries["networking.kope.io"]


# ---------------------------------------------------------------- the CRD generator


def _generator(kops, *args):
    return subprocess.run([sys.executable, str(REPO / "hack" / "gen_crds.py"), "--addon", "snapshot-controller", "--kops", str(kops)]
                          + list(args), capture_output=True, text=True, check=False, timeout=300)


def _mini_kops(tmp_path, crd_name="widgets.example.com"):
    template = tmp_path / "upup/models/cloudup/resources/addons/snapshot-controller.addons.k8s.io"
    template.mkdir(parents=True)
    (template / "k8s-1.20.yaml.template").write_text(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: %s\n"
        "spec:\n  group: example.com\n---\napiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata:\n"
        "  name: {{ ClusterName }}\n" % crd_name)
    (tmp_path / "kops-version.go").write_text('const KOPS_RELEASE_VERSION = "1.99.0"\n')
    return tmp_path


def test_generator_keeps_the_crds_only(tmp_path):
    result = _generator(_mini_kops(tmp_path), "--commit", "abcdef1234")
    assert result.returncode == 0, result.stderr
    table = {}
    exec(compile(result.stdout, "crds", "exec"), table)  # pylint: disable=exec-used  # our generator's output
    assert table["CRDS"] == [{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                              "metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com"}}]


def test_generator_refuses_a_crd_that_depends_on_the_cluster(tmp_path):
    result = _generator(_mini_kops(tmp_path, crd_name="{{ ClusterName }}.example.com"), "--commit", "abcdef1234")
    assert result.returncode == 1 and "holds a template action" in result.stderr


@NEEDS_KOPS
def test_committed_crds_are_what_kops_source_generates():
    args = ["--commit", os.environ["KOPS_COMMIT"]] if os.environ.get("KOPS_COMMIT") else []
    result = _generator(KOPS, *args)
    assert result.returncode == 0, result.stderr
    assert result.stdout == CRD_DATA.read_text()


# ---------------------------------------------------------------- kops' rendered files


@NEEDS_KOPS
@pytest.mark.parametrize("fixture, addons", [
    ("many-addons", ("snapshot-controller.addons.k8s.io-k8s-1.20", "node-problem-detector.addons.k8s.io-k8s-1.17")),
    ("many-addons-ccm", ("snapshot-controller.addons.k8s.io-k8s-1.20",)),
    ("nvidia", ("nvidia.addons.k8s.io-k8s-1.16",)),
])
def test_byte_equal_to_kops(fixture, addons):
    directory = pathlib.Path(KOPS) / "tests/integration/update_cluster" / fixture
    completed, groups = load_case(directory)
    theirs = kops_files(directory, completed["metadata"]["name"])
    files, entries = _render(completed, groups)
    their_entries = {e["name"]: e for e in yaml.safe_load(theirs["bootstrap"])["spec"]["addons"]}
    for key in addons:
        name, _sep, addon_id = key.partition("-k8s-")
        assert files["addons/%s/k8s-%s.yaml" % (name, addon_id)] == theirs[key], key
        assert entries[name] == their_entries[name]
