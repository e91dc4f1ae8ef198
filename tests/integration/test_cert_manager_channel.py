"""The channel we render with cert-manager and metrics-server (needsPKI) applied to a real kube-apiserver
(tests/realk8s/apiserver.py) by the collection's channel applier (kops' semantics): cert-manager's CRDs make the
cert-manager.io/v1 Issuer kind the needsPKI step uses; the Issuer it makes is valid under cert-manager's own schema;
objects are listed back with the kubernetes Python client."""

from __future__ import annotations

import pathlib

import jsonschema
import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.addons import channel
from ansible_collections.kubeops.kops.plugins.module_utils.addons.generated import cert_manager_crds
from ansible_collections.kubeops.kops.plugins.module_utils.kube import channels
from tests.unit.addons.test_addons_vs_kops import ACCOUNT
from tests.unit.addons.test_channel import _case

kubernetes = pytest.importorskip("kubernetes", reason="the kubernetes Python client is in requirements.txt")


def _render(root):
    completed, groups = _case(certManager={"enabled": True}, metricsServer={"enabled": True})
    for path, data in channel.render(completed, groups, account_id=ACCOUNT):
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return str(root / channel.CHANNEL_PATH)


def _issuer_schema():
    issuers = next(c for c in cert_manager_crds.CRDS if c["metadata"]["name"] == "issuers.cert-manager.io")
    version = next(v for v in issuers["spec"]["versions"] if v["storage"])
    return version["schema"]["openAPIV3Schema"]


def test_cert_manager_serves_the_issuer_needs_pki_makes(real_kube_api, tmp_path):
    location = _render(pathlib.Path(tmp_path))
    api = channels.ApiService.from_kubeconfig(real_kube_api.kubeconfig_path)

    def run():
        api.forget_discovery()
        return channels.ChannelRunner(api, location).run()

    # kops' order lists metrics-server before cert-manager: on the first pass its PKI cannot be made yet
    # (no Issuer kind), the rest is applied; the next pass (protokube applies the channel again) makes it.
    first = run()
    assert [e for e in first["errors"] if "metrics-server" not in e] == [], first["errors"]
    assert len(first["errors"]) == 1 and "install cert-manager" in first["errors"][0]
    # cert-manager's validating webhook answers for every cert-manager.io object, and no pod runs here: the API
    # refuses the Issuer (as a real cluster does until cert-manager's webhook is up), the addon stays to do.
    waiting = run()
    assert len(waiting["errors"]) == 1 and 'no endpoints available for service "cert-manager-webhook"' in \
        waiting["errors"][0], waiting["errors"]
    assert [a["name"] for a in waiting["addons"] if a["action"] != "unchanged"] == ["metrics-server.addons.k8s.io"]
    # cert-manager's own switch (its webhook's namespaceSelector) stands in for the webhook being up.
    real_kube_api.request("PATCH", "/api/v1/namespaces/kube-system",
                          {"metadata": {"labels": {"cert-manager.io/disable-validation": "true"}}},
                          content_type="application/merge-patch+json")
    second = run()
    assert second["errors"] == [], second["errors"]
    assert [a["name"] for a in second["addons"] if a["action"] != "unchanged"] == ["metrics-server.addons.k8s.io"]
    assert run()["changed"] is False

    client = kubernetes.config.new_client_from_config(config_file=real_kube_api.kubeconfig_path)
    crds = kubernetes.client.ApiextensionsV1Api(client).list_custom_resource_definition(
        label_selector="addon.kops.k8s.io/name=certmanager.io").items
    assert sorted(c.metadata.name for c in crds) == sorted(c["metadata"]["name"] for c in cert_manager_crds.CRDS)
    deployments = kubernetes.client.AppsV1Api(client).list_namespaced_deployment(
        "kube-system", label_selector="addon.kops.k8s.io/name=certmanager.io").items
    assert sorted(d.metadata.name for d in deployments) == ["cert-manager", "cert-manager-cainjector",
                                                            "cert-manager-webhook"]
    issuer = kubernetes.client.CustomObjectsApi(client).get_namespaced_custom_object(
        "cert-manager.io", "v1", "kube-system", "issuers", "metrics-server.addons.k8s.io")
    assert issuer["spec"] == {"ca": {"secretName": "metrics-server.addons.k8s.io-ca"}}
    jsonschema.validate({k: issuer[k] for k in ("apiVersion", "kind", "spec")}, _issuer_schema())


def test_the_schema_check_would_catch_a_wrong_issuer():
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"apiVersion": "cert-manager.io/v1", "kind": "Issuer", "spec": {"ca": {"secret": "x"}}},
                            _issuer_schema())
