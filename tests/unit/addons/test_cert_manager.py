"""cert-manager (certmanager.io k8s-1.16): the spec's options, refusals, the channel entry, the CRD data generator,
and, with KOPS_SOURCE, byte equality with every kops fixture that renders it (strict validation of the manifest:
test_channel.py's cert-manager-options variant)."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.addons import cert_manager, channel
from ansible_collections.kubeops.kops.plugins.module_utils.addons.generated import cert_manager_crds
from ansible_collections.kubeops.kops.plugins.module_utils.addons.facts import AddonError, Facts

from tests.unit.addons.test_addons_vs_kops import load_case
from tests.unit.addons.test_channel import _case

REPO = pathlib.Path(__file__).resolve().parents[3]
ADDON = next(a for a in channel.ADDONS if a.name == "certmanager.io")
KOPS_SOURCE = os.environ.get("KOPS_SOURCE")
NEEDS_KOPS = pytest.mark.skipif(not KOPS_SOURCE, reason="KOPS_SOURCE is not set: point it at a kops checkout")


def _objects(case="minimal-aws", **cert_manager_spec):
    completed, groups = _case(case, certManager=dict({"enabled": True}, **cert_manager_spec))
    return {(d["kind"], d["metadata"]["name"]): d for d in cert_manager.objects(Facts(completed, groups))}


def _controller(objects):
    return objects[("Deployment", "cert-manager")]["spec"]["template"]["spec"]


def test_objects_are_the_charts_with_cert_managers_six_crds():
    objects = _objects()
    kinds = sorted({kind for kind, _name in objects})
    assert kinds == ["ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "Deployment",
                     "MutatingWebhookConfiguration", "Role", "RoleBinding", "Service", "ServiceAccount",
                     "ValidatingWebhookConfiguration"]
    assert len(objects) == 48
    assert sorted(name for kind, name in objects if kind == "CustomResourceDefinition") == sorted(
        ["certificaterequests.cert-manager.io", "certificates.cert-manager.io", "challenges.acme.cert-manager.io",
         "clusterissuers.cert-manager.io", "issuers.cert-manager.io", "orders.acme.cert-manager.io"])
    # Every role bound, every binding's role and service account present.
    for (kind, name), binding in objects.items():
        if kind.endswith("Binding"):
            assert (binding["roleRef"]["kind"], binding["roleRef"]["name"]) in objects
            assert all(("ServiceAccount", s["name"]) in objects for s in binding["subjects"])
    images = {c["image"] for (kind, _n), d in objects.items() if kind == "Deployment"
              for c in d["spec"]["template"]["spec"]["containers"]}
    assert images == {"quay.io/jetstack/cert-manager-%s:v1.19.5" % c for c in ("controller", "cainjector", "webhook")}


def test_defaults_as_kops_renders_them_on_aws():
    pod = _controller(_objects())
    assert "dnsConfig" not in pod and "dnsPolicy" not in pod
    args = pod["containers"][0]["args"]
    assert "--acme-http01-solver-image=quay.io/jetstack/cert-manager-acmesolver:v1.19.5" in args
    assert not [a for a in args if a.startswith(("--default-issuer", "--feature-gates"))]
    assert pod["containers"][0]["env"][1] == {"name": "AWS_REGION", "value": "us-test-1"}


def test_gce_gets_no_aws_region():
    assert [e["name"] for e in _controller(_objects("minimal_gce"))["containers"][0]["env"]] == ["POD_NAMESPACE"]


def test_default_issuer_nameservers_and_feature_gates():
    pod = _controller(_objects(defaultIssuer="letsencrypt", nameservers=["1.1.1.1", "8.8.8.8"],
                               featureGates={"ServerSideApply": False, "AdditionalCertificateOutputFormats": True}))
    assert pod["dnsConfig"] == {"nameservers": ["1.1.1.1", "8.8.8.8"]} and pod["dnsPolicy"] == "None"
    assert pod["containers"][0]["args"][-5:] == [
        "--default-issuer-name=letsencrypt", "--default-issuer-kind=ClusterIssuer",
        "--default-issuer-group=cert-manager.io",
        # kops' template ranges over the map: in key order
        "--feature-gates=AdditionalCertificateOutputFormats=true", "--feature-gates=ServerSideApply=false"]


@pytest.mark.parametrize("spec, selected", [
    ({"enabled": True}, True),
    ({"enabled": True, "managed": True}, True),
    ({"enabled": True, "managed": False}, False),  # the user runs cert-manager: dependents still see it enabled
    ({"enabled": False}, False),
])
def test_rendered_when_enabled_and_managed(spec, selected):
    completed, groups = _case(certManager=spec)
    facts = Facts(completed, groups)
    assert (ADDON in channel.selected(facts)) is selected
    assert "certmanager.io" not in channel.not_rendered(facts)


def test_channel_entry_is_kops_with_null_selector_and_prune():
    completed, groups = _case(certManager={"enabled": True})
    facts = Facts(completed, groups)
    documents = channel.remap(ADDON, ADDON.build(facts))
    entry = channel.channel_entry(ADDON, b"manifest", documents, facts)
    assert entry["selector"] is None and "needsPKI" not in entry and "needsRollingUpdate" not in entry
    namespaced = {k["kind"]: k.get("namespaces") for k in entry["prune"]["kinds"]}
    assert namespaced["Deployment"] == namespaced["Role"] == ["kube-system"] and namespaced["ClusterRole"] is None
    assert all(d["metadata"]["labels"]["addon.kops.k8s.io/name"] == "certmanager.io" for d in documents)


@pytest.mark.parametrize("spec, message", [
    ({"hostedZoneIDs": ["Z1"]}, "spec.certManager.hostedZoneIDs without spec.iam.useServiceAccountExternalPermissions"),
    ({"image": "example.com/cert-manager:v1"}, "spec.certManager.image 'example.com/cert-manager:v1' (kops ignores it"),
])
def test_refusals_name_the_field(spec, message):
    with pytest.raises(AddonError, match="addon certmanager.io: " + message.replace("(", r"\(")):
        _objects(**spec)


def test_hosted_zones_with_service_account_permissions_run_as_cert_managers_own_role():
    completed, groups = _case(certManager={"enabled": True, "hostedZoneIDs": ["Z1"]},
                              iam={"useServiceAccountExternalPermissions": True})
    files = dict(channel.render(completed, groups, account_id="123456789012"))
    documents = [d for d in yaml.safe_load_all(files["addons/certmanager.io/k8s-1.16.yaml"]) if d]
    controller = next(d for d in documents if d["kind"] == "Deployment" and d["metadata"]["name"] == "cert-manager")
    env = {e["name"]: e.get("value") for e in controller["spec"]["template"]["spec"]["containers"][0]["env"]}
    name = completed["metadata"]["name"]
    assert env["AWS_ROLE_ARN"] == "arn:aws:iam::123456789012:role/cert-manager.kube-system.sa.%s" % name
    assert env["AWS_WEB_IDENTITY_TOKEN_FILE"] == "/var/run/secrets/amazonaws.com/token"
    # The other cert-manager pods (cainjector, webhook) call no AWS API: not wired.
    webhook = next(d for d in documents if d["kind"] == "Deployment" and d["metadata"]["name"] == "cert-manager-webhook")
    assert "AWS_ROLE_ARN" not in str(webhook)


def test_the_image_kops_runs_may_be_named():
    assert _controller(_objects(image="quay.io/jetstack/cert-manager-controller:v1.19.5"))


# ---------------------------------------------------------------- the CRD data and its generator


def _generator(kops, *args):
    return subprocess.run([sys.executable, str(REPO / "hack" / "gen_crds.py"), "--addon", "cert-manager", "--kops", str(kops)]
                          + list(args), capture_output=True, text=True, check=False, timeout=300)


SCHEMA = "\n".join(["        openAPIV3Schema:", "          properties:"] + [
    "            f%d:\n              description: %s\n              type: string" % (i, "x" * 120) for i in range(20)])


def _mini_kops(tmp_path, second_crd_extra=""):
    directory = tmp_path / "upup/models/cloudup/resources/addons/certmanager.io"
    directory.mkdir(parents=True)
    crd = ("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: %s\n  labels:\n"
           "    app.kubernetes.io/version: \"v9.9.9\"\nspec:\n  group: example.com%s\n  versions:\n    - name: v1\n"
           "      schema:\n" + SCHEMA + "\n")
    (directory / "k8s-1.16.yaml.template").write_text(
        "---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: {{ .Name }}\n---\n"
        + crd % ("as.example.com", "") + "---\n" + crd % ("bs.example.com", second_crd_extra))
    (tmp_path / "kops-version.go").write_text('const KOPS_RELEASE_VERSION = "1.99.0"\n')
    return tmp_path


def test_generator_writes_the_crds_once_sharing_their_common_schema(tmp_path):
    result = _generator(_mini_kops(tmp_path), "--commit", "abcdef1234")
    assert result.returncode == 0, result.stderr
    assert "cert-manager v9.9.9" in result.stdout and max(len(line) for line in result.stdout.splitlines()) <= 160
    table = {}
    exec(compile(result.stdout, "cert_manager_crds", "exec"), table)  # pylint: disable=exec-used  # our generator's
    crds = {crd["metadata"]["name"]: crd["spec"] for crd in table["CRDS"]}
    assert list(crds) == ["as.example.com", "bs.example.com"]
    assert crds["as.example.com"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["f19"] == {
        "description": "x" * 120, "type": "string"}
    assert crds["as.example.com"]["versions"] == crds["bs.example.com"]["versions"]
    assert result.stdout.count("'f19'") == 1  # the schema both CRDs have is written once, as _S1
    assert "_S1 = " in result.stdout


def test_generator_refuses_a_crd_with_a_template_action(tmp_path):
    result = _generator(_mini_kops(tmp_path, "\n  scope: {{ .Scope }}"), "--commit", "abcdef1234")
    assert result.returncode == 1 and "CustomResourceDefinition bs.example.com holds a template action" in result.stderr


@NEEDS_KOPS
def test_committed_crd_data_is_what_kops_source_generates():
    args = ["--commit", os.environ["KOPS_COMMIT"]] if os.environ.get("KOPS_COMMIT") else []
    result = _generator(KOPS_SOURCE, *args)
    assert result.returncode == 0, result.stderr
    assert result.stdout == pathlib.Path(cert_manager_crds.__file__).read_text()


# ---------------------------------------------------------------- every kops fixture that renders it


def _fixtures():
    if not KOPS_SOURCE:
        return [pytest.param("none", marks=pytest.mark.skip(reason="KOPS_SOURCE is not set: point it at a kops checkout"))]
    root = pathlib.Path(KOPS_SOURCE) / "tests" / "integration" / "update_cluster"
    return sorted(p.parent.parent.name for p in root.glob("*/data/aws_s3_object_*-addons-certmanager.io-k8s-1.16_content"))


@NEEDS_KOPS
def test_kops_has_seven_fixtures_with_cert_manager():
    assert len(_fixtures()) == 7  # what docs/addons.md counts


@pytest.mark.parametrize("case", _fixtures())
def test_manifest_and_channel_entry_equal_kops(case):
    """Rendered alone: three of the seven (aws-lb-controller, many-addons-ccm-irsa, privatecilium2) are refused
    as whole channels for other addons (docs/addons.md), not for cert-manager."""
    directory = pathlib.Path(KOPS_SOURCE) / "tests" / "integration" / "update_cluster" / case
    completed, groups = load_case(directory)
    facts = Facts(completed, groups)
    documents = channel.remap(ADDON, ADDON.build(facts))
    data = channel.dump_manifest(documents)
    theirs = next((directory / "data").glob("*-addons-certmanager.io-k8s-1.16_content")).read_bytes().strip()
    assert data == theirs
    kops_channel = yaml.safe_load(next((directory / "data").glob("*-addons-bootstrap_content")).read_text())
    assert channel.channel_entry(ADDON, data, documents, facts) == next(
        e for e in kops_channel["spec"]["addons"] if e["name"] == "certmanager.io")
