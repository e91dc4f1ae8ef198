"""user spec -> completed spec, against kops' own completed specs."""

from __future__ import annotations

import copy

import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects, validation
from ansible_collections.kubeops.kops.plugins.module_utils.completion import cloudfacts, populate

from tests.conformance import kops_fixtures


def _case(name):
    directory = kops_fixtures.UPDATE_CLUSTER / name
    cluster, groups = objects.split_objects([d for d in yaml.safe_load_all((directory / "in-v1alpha2.yaml").read_text())
                                            if d])
    return cluster, groups


def _complete(name):
    cluster, groups = _case(name)
    return populate.populate_cluster_spec(cluster, groups, cloudfacts.kops_test_cloud(cluster["spec"]["cloudProvider"]))


@pytest.mark.parametrize("name", ["minimal-aws", "minimal_gce"])
def test_completed_spec_matches_kops_exactly(name):
    directory = kops_fixtures.UPDATE_CLUSTER / name / "data"
    expected = yaml.safe_load(next(directory.glob("*cluster-completed.spec_content")).read_text())
    assert _complete(name) == expected


def test_input_is_not_modified():
    cluster, groups = _case("minimal-aws")
    before = copy.deepcopy((cluster, groups))
    populate.populate_cluster_spec(cluster, groups, cloudfacts.kops_test_cloud())
    assert (cluster, groups) == before


def test_completion_is_idempotent():
    once = _complete("minimal-aws")
    cluster, groups = _case("minimal-aws")
    assert populate.populate_cluster_spec(once, groups, cloudfacts.kops_test_cloud()) == once


def test_user_overrides_win():
    cluster, groups = _case("minimal-aws")
    cluster["spec"]["kubeAPIServer"] = {"apiServerCount": 5, "serviceAccountIssuer": "https://issuer.example.com"}
    cluster["spec"]["kubelet"] = {"maxPods": 200, "shutdownGracePeriod": "60s"}
    cluster["spec"]["containerd"] = {"version": "2.2.0"}
    completed = populate.populate_cluster_spec(cluster, groups, cloudfacts.kops_test_cloud())["spec"]
    assert completed["kubeAPIServer"]["apiServerCount"] == 5
    assert completed["kubeAPIServer"]["serviceAccountJWKSURI"] == "https://issuer.example.com/openid/v1/jwks"
    assert completed["kubelet"]["maxPods"] == 200 and completed["kubelet"]["shutdownGracePeriod"] == "60s"
    assert completed["masterKubelet"]["maxPods"] == 200  # the control-plane kubelet starts from the cluster's
    assert completed["containerd"]["version"] == "2.2.0" and "runc" not in completed["containerd"]


@pytest.mark.parametrize("name", ["ha", "complex", "privatecalico", "minimal-dns-none", "shared_vpc", "existing_iam",
                                  "ha_gce"])
def test_other_fixtures_complete_to_valid_specs(name):
    completed = _complete(name)
    assert [str(p) for p in validation.validate_cluster(completed, strict=True)] == []


def test_rules_by_topology_networking_and_version():
    ha = _complete("ha")["spec"]
    assert ha["kubeAPIServer"]["apiServerCount"] == 3
    assert ha["etcdClusters"][0]["version"] == "3.5.31"  # the ha fixture runs Kubernetes 1.32
    calico = _complete("privatecalico")["spec"]
    assert calico["networking"]["calico"]["encapsulationMode"] == "ipip"
    assert calico["api"]["loadBalancer"]["type"] == "Public"
    dns_none = _complete("minimal-dns-none")["spec"]
    assert "dnsZone" not in dns_none and "externalDns" not in dns_none
    gce = _complete("ha_gce")["spec"]
    assert gce["cloudControllerManager"]["clusterName"] == "ha-gce-example-com"
    assert "nodeTerminationHandler" not in gce


def test_cilium_defaults_and_etcd_version_by_kubernetes_version():
    cluster, groups = _case("minimal-aws")
    cluster["spec"]["networking"] = {"cilium": {"enableNodePort": True}}
    cluster["spec"]["kubeProxy"] = {"enabled": False}
    cluster["spec"]["kubernetesVersion"] = "v1.33.4"
    completed = populate.populate_cluster_spec(cluster, groups, cloudfacts.kops_test_cloud())["spec"]
    assert completed["networking"]["cilium"]["tunnel"] == "vxlan"
    assert completed["networking"]["cilium"]["version"] == "v1.18.12"
    assert completed["etcdClusters"][0]["version"] == "3.5.31"
    assert completed["kubelet"]["registerSchedulable"] is True
    assert completed["kubeProxy"]["enabled"] is False
