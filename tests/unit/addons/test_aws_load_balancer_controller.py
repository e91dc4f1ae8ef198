"""The AWS Load Balancer Controller addon beyond kops' fixtures (test_addons_vs_kops.py measures those):
strict schema validation, what the spec changes, the refusals, its channel entry and the CRD generator."""

from __future__ import annotations

import copy
import os
import pathlib
import subprocess
import sys

import jsonschema
import kubernetes_validate
import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.addons import aws_load_balancer_controller as albc
from ansible_collections.kubeops.kops.plugins.module_utils.addons import channel, service_accounts
from ansible_collections.kubeops.kops.plugins.module_utils.addons.facts import AddonError
from ansible_collections.kubeops.kops.plugins.module_utils.api import validation

from tests.conformance import kops_fixtures
from tests.unit.addons.test_addons_vs_kops import ACCOUNT, load_case

REPO = pathlib.Path(__file__).resolve().parents[3]
PATH = "addons/aws-load-balancer-controller.addons.k8s.io/k8s-1.19.yaml"
CRD_DATA = REPO / "plugins/module_utils/addons/generated/aws_load_balancer_controller_crds.py"


def alb_case(**controller):
    """minimal-aws with the controller (and the cert-manager it requires) enabled."""
    completed, groups = load_case(kops_fixtures.UPDATE_CLUSTER / "minimal-aws")
    completed = copy.deepcopy(completed)
    completed["spec"]["awsLoadBalancerController"] = dict({"enabled": True}, **controller)
    completed["spec"]["certManager"] = {"enabled": True}
    return completed, groups


def _render(completed, groups):
    files = dict(channel.render(completed, groups, account_id=ACCOUNT))
    entry = next(e for e in yaml.safe_load(files[channel.CHANNEL_PATH])["spec"]["addons"]
                 if e["name"] == albc.ADDON)
    return [d for d in yaml.safe_load_all(files[PATH]) if d], entry, files


def _deployment(documents):
    return next(d for d in documents if d["kind"] == "Deployment")


def _custom_schemas(files):
    """{(group/version, kind): openAPIV3Schema} of every CRD the channel's manifests carry."""
    schemas = {}
    for path, data in files.items():
        if path == channel.CHANNEL_PATH:
            continue
        for crd in yaml.safe_load_all(data):
            if crd and crd["kind"] == "CustomResourceDefinition":
                for version in crd["spec"]["versions"]:
                    key = ("%s/%s" % (crd["spec"]["group"], version["name"]), crd["spec"]["names"]["kind"])
                    schemas[key] = version["schema"]["openAPIV3Schema"]
    return schemas


def test_every_object_validates_strictly_against_the_api_or_its_crd():
    """Built-in kinds against the cluster version's schemas; custom resources against the CRD the channel ships.
    cert-manager's Certificate and Issuer are checked once the channel carries cert-manager's CRDs; until
    certmanager.io is rendered (channel.not_rendered names it) they are the only objects left unchecked."""
    completed, groups = alb_case()
    documents, _entry, files = _render(completed, groups)
    version = completed["spec"]["kubernetesVersion"].lstrip("v")
    schemas = _custom_schemas(files)
    cert_manager_missing = "certmanager.io" in channel.not_rendered(channel.Facts(completed, groups))
    unchecked = []
    for document in documents:
        key = (document["apiVersion"], document["kind"])
        if key in schemas:
            jsonschema.validate(document, schemas[key])
        elif document["apiVersion"] == "cert-manager.io/v1" and cert_manager_missing:
            unchecked.append(document["kind"])
        else:
            kubernetes_validate.validate(document, version, strict=True)
    assert sorted(unchecked) == (["Certificate", "Issuer"] if cert_manager_missing else [])
    assert len(documents) == 19


def test_crd_schema_check_would_catch_a_wrong_field_type():
    completed, groups = alb_case()
    documents, _entry, files = _render(completed, groups)
    params = next(d for d in documents if d["kind"] == "IngressClassParams")
    params["spec"] = {"scheme": 7}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(params, _custom_schemas(files)[("elbv2.k8s.aws/v1beta1", "IngressClassParams")])


def test_defaults_are_kops():
    completed, groups = alb_case()
    documents, entry, _files = _render(completed, groups)
    pod = _deployment(documents)["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["image"] == "public.ecr.aws/eks/aws-load-balancer-controller:v3.3.0"
    assert container["args"] == [
        "--cluster-name=minimal-aws.example.com", "--ingress-class=alb", "--aws-region=us-test-1",
        "--metrics-bind-addr=:9442", "--enable-waf=false", "--enable-wafv2=false", "--enable-shield=false",
        "--default-tags=KubernetesCluster=minimal-aws.example.com"]
    assert container["resources"] == {"limits": {"cpu": "200m", "memory": "500Mi"},
                                      "requests": {"cpu": "100m", "memory": "200Mi"}}
    # On the control plane with its instance role: host network, control-plane tolerations.
    assert pod["hostNetwork"] is True and {t["key"] for t in pod["tolerations"]} == {
        "node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master"}
    assert entry["id"] == "k8s-1.19" and entry["needsPKI"] is True
    assert entry["selector"] == {"k8s-addon": albc.ADDON}
    namespaced = {k["kind"]: k.get("namespaces") for k in entry["prune"]["kinds"]}
    assert namespaced["Deployment"] == ["kube-system"] and namespaced["MutatingWebhookConfiguration"] is None


def test_the_spec_changes_what_kops_changes():
    completed, groups = alb_case(version="v9.9.9", enableWAF=True, enableWAFv2=True, enableShield=True,
                                 cpuRequest="150m", cpuLimit="300m", memoryRequest="300Mi", memoryLimit="600Mi")
    completed["spec"]["cloudLabels"] = {"team": "web"}
    completed["spec"]["assets"] = {"containerProxy": "proxy.example.com"}
    documents, _entry, _files = _render(completed, groups)
    container = _deployment(documents)["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "proxy.example.com/eks/aws-load-balancer-controller:v9.9.9"
    assert container["args"][4:] == ["--enable-waf=true", "--enable-wafv2=true", "--enable-shield=true",
                                     "--default-tags=KubernetesCluster=minimal-aws.example.com,team=web"]
    assert container["resources"] == {"limits": {"cpu": "300m", "memory": "600Mi"},
                                      "requests": {"cpu": "150m", "memory": "300Mi"}}
    # The chart's labels name the chart's version, not the image the spec picks (as kops' do).
    assert _deployment(documents)["metadata"]["labels"]["app.kubernetes.io/version"] == "v3.3.0"


def test_not_rendered_without_the_flag_or_off_aws():
    completed, groups = alb_case()
    completed["spec"]["awsLoadBalancerController"]["enabled"] = False
    assert PATH not in dict(channel.render(completed, groups, account_id=ACCOUNT))
    assert albc.ADDON not in channel.not_rendered(channel.Facts(completed, groups))


def test_cert_manager_is_required_at_validation_and_rendering():
    completed, groups = alb_case()
    completed["spec"]["certManager"] = {"enabled": False}
    problems = [str(p) for p in validation.validate_cluster(completed)]
    assert any("spec.awsLoadBalancerController" in p and "set spec.certManager.enabled: true" in p for p in problems)
    with pytest.raises(AddonError, match="requires cert-manager.*set spec.certManager.enabled: true"):
        channel.render(completed, groups, account_id=ACCOUNT)


def test_per_service_account_permissions_render_kops_irsa_variant():
    """kops' k8s-1.19-irsa: on any node (no host network, control-plane affinity or tolerations, no maxSurge 0),
    as its own role through the projected token; the channel names that manifest."""
    completed, groups = alb_case()
    completed["spec"]["iam"] = {"useServiceAccountExternalPermissions": True}
    files = dict(channel.render(completed, groups, account_id=ACCOUNT))
    assert PATH not in files
    documents = [d for d in yaml.safe_load_all(files[PATH.replace("k8s-1.19", "k8s-1.19-irsa")]) if d]
    deployment = next(d for d in documents if d["kind"] == "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    assert "strategy" not in deployment["spec"] and "hostNetwork" not in pod and "tolerations" not in pod
    assert list(pod["affinity"]) == ["podAntiAffinity"]
    env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
    role = service_accounts.role_name(completed["metadata"]["name"], "kube-system", "aws-load-balancer-controller")
    assert env["AWS_ROLE_ARN"] == "arn:aws:iam::%s:role/%s" % (ACCOUNT, role) and len(role) <= 64
    assert {"name": "token-amazonaws-com", "projected": {"defaultMode": 420, "sources": [{"serviceAccountToken": {
        "audience": "amazonaws.com", "expirationSeconds": 86400, "path": "token"}}]}} in pod["volumes"]
    entries = yaml.safe_load(files[channel.CHANNEL_PATH])["spec"]["addons"]
    assert [e["id"] for e in entries if e["name"] == albc.ADDON] == ["k8s-1.19-irsa"]
    version = completed["spec"]["kubernetesVersion"].lstrip("v")
    kubernetes_validate.validate(deployment, version, strict=True)


# ---------------------------------------------------------------- the CRD generator


def _generator(kops, *args):
    return subprocess.run([sys.executable, str(REPO / "hack" / "gen_crds.py"), "--addon", "aws-load-balancer-controller", "--kops", str(kops)]
                          + list(args), capture_output=True, text=True, check=False, timeout=300)


def _mini_kops(tmp_path, crd_name="widgets.example.com"):
    template = tmp_path / "upup/models/cloudup/resources/addons/aws-load-balancer-controller.addons.k8s.io"
    template.mkdir(parents=True)
    long_text = "a description long enough to be split over several lines of the generated module. " * 4
    (template / "k8s-1.19.yaml.template").write_text(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: %s\n"
        "spec:\n  description: %s\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: {{ ClusterName }}\n"
        % (crd_name, long_text))
    (tmp_path / "kops-version.go").write_text('const KOPS_RELEASE_VERSION = "1.99.0"\n')
    return tmp_path, long_text


def test_generator_keeps_the_crds_only(tmp_path):
    kops, long_text = _mini_kops(tmp_path)
    result = _generator(kops, "--commit", "abcdef1234")
    assert result.returncode == 0, result.stderr
    assert all(len(line) < 160 for line in result.stdout.splitlines())
    table = {}
    exec(compile(result.stdout, "crds", "exec"), table)  # pylint: disable=exec-used  # our generator's output
    assert table["CRDS"] == [{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                              "metadata": {"name": "widgets.example.com"}, "spec": {"description": long_text.strip()}}]


def test_generator_refuses_a_crd_that_depends_on_the_cluster(tmp_path):
    kops, _text = _mini_kops(tmp_path, crd_name="{{ ClusterName }}.example.com")
    result = _generator(kops, "--commit", "abcdef1234")
    assert result.returncode == 1 and "holds a template action" in result.stderr


@pytest.mark.skipif(not os.environ.get("KOPS_SOURCE"),
                    reason="KOPS_SOURCE is not set: point it at a kops checkout to compare the CRDs with kops'")
def test_committed_crds_are_what_kops_source_generates():
    args = ["--commit", os.environ["KOPS_COMMIT"]] if os.environ.get("KOPS_COMMIT") else []
    result = _generator(os.environ["KOPS_SOURCE"], *args)
    assert result.returncode == 0, result.stderr
    assert result.stdout == CRD_DATA.read_text()
