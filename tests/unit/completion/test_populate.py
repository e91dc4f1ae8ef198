"""user spec -> completed spec (and completed instance groups), against kops' own fixtures and rules."""

from __future__ import annotations

import copy
import re

import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.api import errors, objects, validation
from ansible_collections.kubeops.kops.plugins.module_utils.completion import cloudfacts, populate
from ansible_collections.kubeops.kops.plugins.module_utils.completion.components import discovery, versions

from tests.conformance import kops_fixtures

OTHER_FIXTURES = ["ha", "complex", "privatecalico", "minimal-dns-none", "shared_vpc", "existing_iam", "ha_gce"]


class FakeCloud(object):
    """The cloud facts completion needs: hosted zones (longest suffix wins), and an empty GCE network."""

    def __init__(self, zones):
        self.zones = zones

    def find_hosted_zone(self, name):
        matches = [z for z in self.zones if name == z or name.endswith("." + z)]
        return self.zones[max(matches, key=len)] if matches else None

    def used_gce_cidrs(self, network_name):
        return []

    def docker_tag(self, url):
        """A dl.k8s.io release's <component>.docker_tag file holds the release's version."""
        return re.search(r"/release/(v[^/]+)/bin/linux/", url).group(1) + "\n"


# kops' mock clouds: AWS names its zone Z1AFAKE1ZON3YO, GCE's managed zone is "1".
FAKE_CLOUDS = {"aws": {"example.com": "Z1AFAKE1ZON3YO"}, "gce": {"example.com": "1"}}


def _cloud(cluster):
    return FakeCloud(FAKE_CLOUDS[cluster["spec"]["cloudProvider"]])


def _case(name):
    text = (kops_fixtures.UPDATE_CLUSTER / name / "in-v1alpha2.yaml").read_text()
    return objects.split_objects([d for d in yaml.safe_load_all(text) if d])


def _complete(name):
    cluster, groups = _case(name)
    return populate.populate_cluster_spec(cluster, groups, _cloud(cluster))


def _group(groups, name):
    return next(g for g in groups if objects.name_of(g) == name)


def _as_stored(directory, facts):
    """The completed spec of a fixture's objects (loaded as the cluster module loads them), as the store holds it."""
    documents = objects.load_objects((directory / "in-v1alpha2.yaml").read_text(), additional=[])
    cluster, groups = objects.split_objects(documents)
    return yaml.safe_load(objects.dump_object(populate.populate_cluster_spec(cluster, groups, facts)))


@pytest.mark.parametrize("name", sorted(p.parent.parent.name for p in kops_fixtures.UPDATE_CLUSTER.glob(
    "*/data/*cluster-completed.spec_content")))
def test_completed_spec_matches_kops_exactly(name):
    assert _complete(name) == kops_fixtures.completed_spec(kops_fixtures.UPDATE_CLUSTER / name)


SOURCE = kops_fixtures.source_update_cluster()


@pytest.mark.skipif(SOURCE is None, reason=kops_fixtures.SKIP_WITHOUT_SOURCE)
def test_completed_spec_matches_kops_on_all_its_fixtures():
    """Opt-in: every AWS and GCE fixture of a kops checkout that keeps a completed spec, in kops' harness world."""
    differ, compared = [], 0
    for directory in sorted(SOURCE.iterdir()):
        expected = kops_fixtures.completed_spec(directory) if (directory / "in-v1alpha2.yaml").is_file() else None
        cloud = (kops_fixtures.fixture_cluster(directory).get("spec") or {}).get("cloudProvider") if expected else None
        if cloud not in ("aws", "gce"):
            continue
        facts = cloudfacts.StaticCloudFacts(kops_fixtures.HARNESS_FACTS if cloud == "aws" else
                                            kops_fixtures.GCE_HARNESS_FACTS)
        compared += 1
        try:
            if _as_stored(directory, facts) != expected:
                differ.append(directory.name)
        except errors.ValidationError as error:
            differ.append("%s (%s)" % (directory.name, error))
    assert compared >= 70 and differ == []


def test_completed_spec_leaves_out_what_kops_never_writes():
    """Fields kops reads and never writes back into the completed spec; quantities as kops writes them."""
    cluster, groups = _case("minimal-aws")
    spec = cluster["spec"]
    spec.update(masterInternalName="api.internal.elsewhere.example.com", containerRuntime="containerd",
                serviceOIDCProvider={"issuerURL": "https://oidc.example.com"})
    spec.setdefault("cloudConfig", {})["awsEBSCSIDriver"] = {"enabled": True}
    spec["kubeAPIServer"] = {"auditWebhookBatchThrottleQps": 3.14}
    completed = populate.populate_cluster_spec(cluster, groups, _cloud(cluster))["spec"]
    assert not {"masterInternalName", "containerRuntime", "serviceOIDCProvider"} & set(completed)
    assert "enabled" not in completed["cloudConfig"]["awsEBSCSIDriver"]
    assert completed["cloudConfig"]["awsEBSCSIDriver"]["version"] == versions.AWS_EBS_CSI_DRIVER_VERSION
    assert completed["kubeAPIServer"]["auditWebhookBatchThrottleQps"] == "3140m"
    assert cluster["spec"]["masterInternalName"] == "api.internal.elsewhere.example.com"  # the user's spec keeps it


@pytest.mark.parametrize("networking, disabled", [({"cilium": {}}, False), ({"cilium": {"disableMasquerade": True}}, True)])
def test_cilium_masquerade_is_v1alpha2s_disable_masquerade(networking, disabled):
    cluster, groups = _case("minimal-aws")
    cluster["spec"]["networking"] = networking
    cilium = populate.populate_cluster_spec(cluster, groups, _cloud(cluster))["spec"]["networking"]["cilium"]
    assert cilium["disableMasquerade"] is disabled and "masquerade" not in cilium


def test_container_proxy_moves_the_control_plane_images():
    cluster, groups = _case("minimal-aws")
    cluster["spec"]["assets"] = {"containerProxy": "proxy.example.com/"}
    spec = populate.populate_cluster_spec(cluster, groups, _cloud(cluster))["spec"]
    assert spec["kubeAPIServer"]["image"].startswith("proxy.example.com/kube-apiserver:v")
    assert spec["containerd"]["sandboxImage"].startswith("proxy.example.com/pause:")


@pytest.mark.parametrize("name, group, config", [
    ("minimal-aws", "master-us-test-1a", "master-us-test-1a"),
    ("minimal-aws", "nodes", "nodes"),
    ("minimal_gce", "master-us-test1-a", "master-us-test1-a"),
    ("minimal_gce", "nodes", "nodes"),
])
def test_completed_group_kubelet_matches_kops_nodeup_config(name, group, config):
    cluster, groups = _case(name)
    completed = populate.populate_cluster_spec(cluster, groups, _cloud(cluster))
    ig = populate.populate_instance_group_spec(completed, _group(groups, group))
    expected = yaml.safe_load((kops_fixtures.UPDATE_CLUSTER / name / "data"
                               / ("aws_s3_object_nodeupconfig-%s_content" % config)).read_text())
    assert ig["spec"]["kubelet"] == expected["KubeletConfig"]
    assert ig["spec"]["manager"] == "CloudGroup"


def test_completed_groups_keep_user_values_and_fill_the_rest():
    cluster, groups = _case("minimal-aws")
    completed = populate.populate_cluster_spec(cluster, groups, _cloud(cluster))
    node = copy.deepcopy(_group(groups, "nodes"))
    for key in ("minSize", "maxSize", "subnets"):
        node["spec"].pop(key)
    node["spec"]["nodeLabels"] = {objects.IG_LABEL: "nodes"}
    node["spec"]["taints"] = ["dedicated=web:NoSchedule"]
    node["spec"]["kubelet"] = {"maxPods": 50, "taints": ["spot=true:PreferNoSchedule"]}
    ig = populate.populate_instance_group_spec(completed, node)["spec"]
    assert (ig["minSize"], ig["maxSize"], ig["subnets"]) == (2, 2, ["us-test-1a"])
    assert ig["kubelet"]["maxPods"] == 50
    assert ig["kubelet"]["nodeLabels"] == {"node-role.kubernetes.io/node": "", objects.IG_LABEL: "nodes"}
    assert ig["kubelet"]["taints"] == ["dedicated=web:NoSchedule", "spot=true:PreferNoSchedule"]
    assert ig["kubelet"]["clusterDNS"] == "100.64.0.10"  # from the cluster kubelet
    master = copy.deepcopy(_group(groups, "master-us-test-1a"))
    del master["spec"]["minSize"], master["spec"]["maxSize"]
    ig = populate.populate_instance_group_spec(completed, master)["spec"]
    assert (ig["minSize"], ig["maxSize"]) == (1, 1)
    assert ig["kubelet"]["featureGates"] == {"ImageVolume": "true"}  # masterKubelet, not kubelet
    assert _group(groups, "nodes")["spec"]["minSize"] == 2  # input untouched


def test_completed_groups_per_role_and_cloud():
    cluster, groups = _case("minimal_gce")
    completed = populate.populate_cluster_spec(cluster, groups, _cloud(cluster))
    bastion = objects.new_instance_group("minimal-gce.example.com", "bastions")
    bastion["spec"] = {"role": "Bastion", "image": "ubuntu"}
    ig = populate.populate_instance_group_spec(completed, bastion)["spec"]
    assert (ig["machineType"], ig["minSize"], ig["subnets"]) == ("e2-micro", 1, ["us-test1"])
    assert "nodeLabels" not in ig["kubelet"] and "taints" not in ig["kubelet"]
    master = copy.deepcopy(_group(groups, "master-us-test1-a"))
    del master["spec"]["subnets"]
    with pytest.raises(errors.ValidationError, match="spec.subnets"):
        populate.populate_instance_group_spec(completed, master)


def test_input_is_not_modified():
    cluster, groups = _case("minimal-aws")
    before = copy.deepcopy((cluster, groups))
    populate.populate_cluster_spec(cluster, groups, _cloud(cluster))
    assert (cluster, groups) == before


@pytest.mark.parametrize("name", ["minimal-aws", "minimal_gce"] + OTHER_FIXTURES)
def test_completion_is_idempotent(name):
    cluster, groups = _case(name)
    once = populate.populate_cluster_spec(cluster, groups, _cloud(cluster))
    assert populate.populate_cluster_spec(once, groups, _cloud(cluster)) == once


def test_user_overrides_win():
    cluster, groups = _case("minimal-aws")
    spec = cluster["spec"]
    spec["kubeAPIServer"] = {"apiServerCount": 5, "serviceAccountIssuer": "https://issuer.example.com", "logLevel": 4}
    spec["kubeControllerManager"] = {"logLevel": 4}
    spec["kubelet"] = {"maxPods": 200, "shutdownGracePeriod": "60s"}
    spec["containerd"] = {"version": "2.2.0"}
    spec["kubeDNS"] = {"serverIP": "100.64.0.53", "nodeLocalDNS": {"enabled": True}}
    completed = populate.populate_cluster_spec(cluster, groups, _cloud(cluster))["spec"]
    assert completed["kubeAPIServer"]["apiServerCount"] == 5
    assert completed["kubeAPIServer"]["serviceAccountJWKSURI"] == "https://issuer.example.com/openid/v1/jwks"
    assert completed["kubeAPIServer"]["logLevel"] == 2  # kops owns the API server's log level
    assert completed["kubeControllerManager"]["logLevel"] == 4
    assert completed["kubelet"]["maxPods"] == 200 and completed["kubelet"]["shutdownGracePeriod"] == "60s"
    assert completed["masterKubelet"]["maxPods"] == 200  # the control-plane kubelet starts from the cluster's
    assert completed["containerd"]["version"] == "2.2.0" and "runc" not in completed["containerd"]
    assert completed["kubeDNS"]["serverIP"] == "100.64.0.53"
    assert completed["kubelet"]["clusterDNS"] == "169.254.20.10"  # NodeLocal DNSCache answers on each node
    assert completed["kubeDNS"]["nodeLocalDNS"]["forwardToKubeDNS"] is False


@pytest.mark.parametrize("name", OTHER_FIXTURES)
def test_other_fixtures_complete_to_valid_specs(name):
    completed = _complete(name)
    assert [str(p) for p in validation.validate_cluster(completed, strict=True)] == []


def test_ha_has_one_api_server_per_etcd_member():
    spec = _complete("ha")["spec"]
    assert spec["kubeAPIServer"]["apiServerCount"] == len(spec["etcdClusters"][0]["etcdMembers"]) == 3
    assert spec["etcdClusters"][0]["version"] == versions.by_version(versions.ETCD_VERSIONS, spec["kubernetesVersion"])


def test_private_calico_gets_a_load_balancer_and_ipip():
    cluster, groups = _case("privatecalico")
    user_api = cluster["spec"].get("api")
    spec = populate.populate_cluster_spec(cluster, groups, _cloud(cluster))["spec"]
    assert spec["networking"]["calico"]["encapsulationMode"] == "ipip"
    assert spec["api"]["loadBalancer"]["type"] == "Public"
    if not (user_api or {}).get("loadBalancer", {}).get("class"):
        assert spec["api"]["loadBalancer"]["class"] == "Classic"
    assert spec["kubeProxy"]["clusterCIDR"] == spec["podCIDR"]
    assert spec["kubeControllerManager"]["configureCloudRoutes"] is False


def test_dns_none_has_no_zone_and_no_dns_controller():
    spec = _complete("minimal-dns-none")["spec"]
    assert "dnsZone" not in spec and "externalDns" not in spec
    assert spec["topology"] == {"dns": {"type": "None"}}
    assert spec["api"]["loadBalancer"]["class"] == "Network"


def test_gce_cloud_controller_and_no_aws_addons():
    spec = _complete("ha_gce")["spec"]
    assert spec["cloudControllerManager"]["clusterName"] == "ha-gce-example-com"
    assert spec["cloudConfig"]["nodeTags"] == "ha-gce-example-com-k8s-io-role-node"
    assert "nodeTerminationHandler" not in spec and "awsEBSCSIDriver" not in spec["cloudConfig"]


def test_api_access_inference_prefers_api_server_groups():
    cluster, groups = _case("minimal-aws")
    cluster["spec"]["subnets"].append({"name": "private-a", "zone": "us-test-1a", "type": "Private",
                                       "cidr": "172.20.64.0/19"})
    apiservers = objects.new_instance_group("minimal-aws.example.com", "apiservers")
    apiservers["spec"] = {"role": "APIServer", "subnets": ["private-a"]}
    spec = populate.populate_cluster_spec(cluster, groups + [apiservers], _cloud(cluster))["spec"]
    assert "dns" not in spec["api"] and spec["api"]["loadBalancer"]["type"] == "Public"


def test_rules_by_kubernetes_version():
    cluster, groups = _case("minimal-aws")
    cluster["spec"]["kubernetesVersion"] = "v1.33.4"
    spec = populate.populate_cluster_spec(cluster, groups, _cloud(cluster))["spec"]
    assert spec["etcdClusters"][0]["version"] == "3.5.31"
    assert spec["kubelet"]["registerSchedulable"] is True
    assert spec["kubeAPIServer"]["image"] == "registry.k8s.io/kube-apiserver:v1.33.4"
    cluster["spec"]["kubernetesVersion"] = "1.36.1"
    spec = populate.populate_cluster_spec(cluster, groups, _cloud(cluster))["spec"]
    assert spec["etcdClusters"][0]["version"] == "3.6.12"
    assert "featureGates" not in spec["masterKubelet"]  # image volumes are on by default from 1.36
    assert "registerSchedulable" not in spec["kubelet"]


def test_cilium_defaults():
    cluster, groups = _case("minimal-aws")
    cluster["spec"]["networking"] = {"cilium": {"enableNodePort": True, "hubble": {}}}
    cluster["spec"]["kubeProxy"] = {"enabled": False}
    spec = populate.populate_cluster_spec(cluster, groups, _cloud(cluster))["spec"]
    cilium = spec["networking"]["cilium"]
    assert (cilium["tunnel"], cilium["version"], cilium["disableMasquerade"]) == ("vxlan", versions.CILIUM_VERSION, False)
    assert cilium["hubble"] == {"enabled": True} and cilium["ingress"] == {"enabled": False}
    assert spec["kubeProxy"]["enabled"] is False


def test_ipv6_clusters_use_kops_controller_ipam():
    cluster, groups = _case("minimal-aws")
    cluster["spec"]["nonMasqueradeCIDR"] = "::/0"
    cluster["spec"]["networking"] = {"calico": {}}
    spec = populate.populate_cluster_spec(cluster, groups, _cloud(cluster))["spec"]
    assert "podCIDR" not in spec and spec["serviceClusterIPRange"] == "fd00:5e4f:ce::/108"
    assert spec["kubeControllerManager"]["allocateNodeCIDRs"] is False
    assert spec["kubeControllerManager"]["controllers"] == ["*", "-nodeipam"]
    assert spec["kubeDNS"]["serverIP"] == "fd00:5e4f:ce::a" and spec["kubeDNS"]["upstreamNameservers"]
    assert spec["cloudConfig"]["nodeIPFamilies"] == ["ipv6", "ipv4"]
    assert spec["kubeAPIServer"]["bindAddress"] == "::"
    assert spec["networking"]["calico"]["encapsulationMode"] == "none"
    assert "clusterCIDR" not in spec["kubeProxy"]


def test_optional_addons_get_defaults_only_when_asked_for():
    cluster, groups = _case("minimal-aws")
    cluster["spec"]["clusterAutoscaler"] = {"enabled": True, "expander": "priority"}
    cluster["spec"]["nodeProblemDetector"] = {"enabled": True}
    spec = populate.populate_cluster_spec(cluster, groups, _cloud(cluster))["spec"]
    assert spec["clusterAutoscaler"]["image"] == "registry.k8s.io/autoscaling/cluster-autoscaler:v1.34.4"
    assert spec["clusterAutoscaler"]["createPriorityExpanderConfig"] is True
    assert spec["nodeProblemDetector"]["image"] == versions.NODE_PROBLEM_DETECTOR_IMAGE
    assert "karpenter" not in _complete("minimal-aws")["spec"]


def test_mirror_registry_and_discovery_store():
    cluster, groups = _case("minimal-aws")
    cluster["spec"]["assets"] = {"containerRegistry": "mirror.example.com/k8s"}
    cluster["spec"]["serviceAccountIssuerDiscovery"] = {"discoveryStore": "s3://oidc-bucket/minimal"}
    spec = populate.populate_cluster_spec(cluster, groups, _cloud(cluster))["spec"]
    assert spec["kubeAPIServer"]["image"] == "mirror.example.com/k8s/kube-apiserver:v1.34.0"
    assert spec["containerd"]["sandboxImage"] == "mirror.example.com/k8s/pause:3.10.1"
    assert spec["kubeAPIServer"]["serviceAccountIssuer"] == "https://oidc-bucket.s3.amazonaws.com/minimal"
    assert discovery.discovery_store_url("s3://b/k", True, lambda bucket: "eu-west-1") == \
        "https://b.s3.dualstack.eu-west-1.amazonaws.com/k"


def test_unbundled_etcd_version_is_refused_without_an_image():
    cluster, groups = _case("minimal-aws")
    cluster["spec"]["etcdClusters"][0]["version"] = "3.4.13"
    with pytest.raises(errors.ValidationError, match=r"spec.etcdClusters\[0\].version"):
        populate.populate_cluster_spec(cluster, groups, _cloud(cluster))
    cluster["spec"]["etcdClusters"][0]["image"] = "example.com/etcd:v3.4.13"
    assert populate.populate_cluster_spec(cluster, groups, _cloud(cluster))["spec"]["etcdClusters"][0]["version"] \
        == "3.4.13"
