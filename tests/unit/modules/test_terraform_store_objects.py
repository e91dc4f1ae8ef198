"""target=terraform on an S3 store: the managed files become aws_s3_object resources with data/ files (as kops)."""

from __future__ import annotations

import boto3
import hcl2

from ansible_collections.kubeops.kops.plugins.modules import cluster as cluster_module
from ansible_collections.kubeops.kops.plugins.modules import cluster_update
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import layout, vfs

OPTIONS = {"cluster_name": "k8s.example.com", "cloud_provider": "aws", "zones": ["us-east-1a"], "networking": "cni",
           "kubernetes_version": "v1.34.2"}


def test_terraform_writes_store_files_as_objects(run_module, aws, tmp_path):
    boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="kops-state")
    store_url, out = "s3://kops-state/clusters", tmp_path / "tf"
    run_module(cluster_module, state_store=store_url, options=OPTIONS)
    first = run_module(cluster_update, state_store=store_url, cluster_name="k8s.example.com", target="terraform",
                       out_dir=str(out))
    assert first["changed"] is True
    parsed = hcl2.loads((out / "kubernetes.tf").read_text())
    # python-hcl2 keeps the quotes of labels and strings.
    objects = {name.strip('"'): {k: v.strip('"') if isinstance(v, str) else v for k, v in body.items()}
               for block in parsed["resource"] for kind, resources in block.items()
               if kind.strip('"') == "aws_s3_object" for name, body in resources.items()}
    group_configs = sorted(n for n in objects if n.startswith("nodeupconfig-"))
    assert {"cluster-completed-spec", "kops-version-txt", "etcd-cluster-spec-main",
            "etcd-cluster-spec-events"} <= set(objects) and len(group_configs) == 2
    body = objects[group_configs[-1]]
    assert body["bucket"] == "kops-state" and body["key"].startswith("clusters/k8s.example.com/igconfig/")
    assert body["server_side_encryption"] == "AES256"
    data = sorted(p.name for p in (out / "data").iterdir() if p.name.startswith("aws_s3_object_"))
    assert len(data) == len(objects)
    user_data = sorted(p.name for p in (out / "data").iterdir() if p.name.startswith("aws_launch_template_"))
    assert len(user_data) == len(group_configs)
    # Terraform writes those; update wrote only the keys itself (AWS workers need no bootstrap token).
    cluster_store = layout.ClusterStore(vfs.open_store(store_url), "k8s.example.com")
    assert cluster_store.read("igconfig/node/%s/nodeupconfig.yaml" % group_configs[-1][len("nodeupconfig-"):]) is None
    assert cluster_store.read("secrets/kubelet-bootstrap-token") is None
    assert cluster_store.read("pki/private/kubernetes-ca/keyset.yaml") is not None
    assert not any("secrets" in body["key"] or "pki/" in body["key"] for body in objects.values())
    again = run_module(cluster_update, state_store=store_url, cluster_name="k8s.example.com", target="terraform",
                       out_dir=str(out))
    assert again["changed"] is False
