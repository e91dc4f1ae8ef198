"""The AWS Load Balancer Controller as a user asks for it: the cluster module refuses it without cert-manager
(naming the field and the fix, writing nothing), and cluster_update writes its manifest and channel entry."""

from __future__ import annotations

import yaml

from ansible_collections.kubeops.kops.plugins.modules import cluster as cluster_module
from ansible_collections.kubeops.kops.plugins.modules import cluster_update

from tests.unit.modules.conftest import store_files

OPTIONS = {"cluster_name": "alb.example.com", "cloud_provider": "aws", "zones": ["us-east-1a"], "networking": "cni",
           "kubernetes_version": "v1.34.2"}
MANIFEST = "alb.example.com/addons/aws-load-balancer-controller.addons.k8s.io/k8s-1.19.yaml"


def _definition(created, **spec):
    created["cluster"]["spec"].update(spec)
    return "\n---\n".join(yaml.safe_dump(d) for d in [created["cluster"]] + created["instance_groups"])


def test_controller_without_cert_manager_is_refused_then_rendered_with_it(run_module, store_url, tmp_path):
    created = run_module(cluster_module, state_store=store_url, options=OPTIONS)
    before = store_files(store_url)
    refused = run_module(cluster_module, state_store=store_url,
                         definition=_definition(created, awsLoadBalancerController={"enabled": True}))
    assert refused["failed"] is True
    assert "spec.awsLoadBalancerController" in refused["msg"]
    assert "set spec.certManager.enabled: true" in refused["msg"]
    assert store_files(store_url) == before

    accepted = run_module(cluster_module, state_store=store_url, definition=_definition(
        created, awsLoadBalancerController={"enabled": True}, certManager={"enabled": True}))
    assert accepted["changed"] is True
    rendered = run_module(cluster_update, state_store=store_url, cluster_name="alb.example.com", target="terraform",
                          out_dir=str(tmp_path / "tf"))
    assert "failed" not in rendered, rendered.get("msg")
    assert rendered["changed"]
    files = store_files(store_url)
    documents = [d for d in yaml.safe_load_all(files[MANIFEST]) if d]
    deployment = next(d for d in documents if d["kind"] == "Deployment")
    assert "--cluster-name=alb.example.com" in deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    channel = yaml.safe_load(files["alb.example.com/addons/bootstrap-channel.yaml"])
    entry = next(e for e in channel["spec"]["addons"] if e["name"] == "aws-load-balancer-controller.addons.k8s.io")
    assert entry["needsPKI"] is True and entry["id"] == "k8s-1.19"
    again = run_module(cluster_update, state_store=store_url, cluster_name="alb.example.com", target="terraform",
                       out_dir=str(tmp_path / "tf"))
    assert again["changed"] is False
