"""update cluster puts the pinned boot artefacts in an s3:// store (moto) and the launch templates pin them.

A node's downloader reads them back from the store without boto3; a second update uploads
nothing and reports no change; a dry run uploads nothing.
"""

from __future__ import annotations

import base64
import hashlib
import json

import boto3

from ansible_collections.kubeops.kops.plugins.module_utils import clusters, updates
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import boot_fetch

MOTO_AMI = "ami-1e749f67"
BUCKET = "boot-update-state"
CLUSTER = "k8s.example.com"


def _boot_objects(s3):
    listing = s3.list_objects_v2(Bucket=BUCKET, Prefix=CLUSTER + "/boot/").get("Contents", [])
    return {o["Key"]: o["ETag"] for o in listing}


def _user_data(region):
    ec2 = boto3.client("ec2", region_name=region)
    templates = ec2.describe_launch_templates()["LaunchTemplates"]
    node = next(t for t in templates if t["LaunchTemplateName"] == "nodes-us-east-1a." + CLUSTER)
    version = ec2.describe_launch_template_versions(LaunchTemplateId=node["LaunchTemplateId"],
                                                    Versions=["$Latest"])["LaunchTemplateVersions"]
    return base64.b64decode(version[0]["LaunchTemplateData"]["UserData"]).decode()


def test_update_uploads_the_boot_artefacts_once_and_the_node_reads_them(aws, tmp_path, monkeypatch):
    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket=BUCKET)
    service = clusters.ClusterService("s3://%s" % BUCKET)
    service.execute(service.plan_create({"cluster_name": CLUSTER, "cloud_provider": "aws", "networking": "cni",
                                         "kubernetes_version": "v1.34.2", "zones": ["us-east-1a"], "image": MOTO_AMI}))

    updates.apply_direct(service, CLUSTER, True)
    assert _boot_objects(s3) == {}  # check mode: nothing uploaded

    _plan, _completed, changed = updates.apply_direct(clusters.ClusterService("s3://%s" % BUCKET), CLUSTER, False)
    assert changed is True
    uploaded = _boot_objects(s3)
    manifests = [k for k in uploaded if k.endswith("/manifest.json")]
    assert len(manifests) == 1
    manifest_bytes = s3.get_object(Bucket=BUCKET, Key=manifests[0])["Body"].read()
    manifest = json.loads(manifest_bytes)
    assert manifest["base"] == "s3://%s/%s" % (BUCKET, CLUSTER)
    assert len(uploaded) == len(manifest["wheels"]) + 2
    user_data = _user_data("us-east-1")
    digest = hashlib.sha256(manifest_bytes).hexdigest()
    assert "BOOT_MANIFEST=s3://%s/%s\nBOOT_MANIFEST_HASH=%s\n" % (BUCKET, manifests[0], digest) in user_data

    # The node side: SigV4 with the environment's credentials against the same S3 API, every file checked.
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    node = tmp_path / "node"
    url = "s3://%s/%s" % (BUCKET, manifests[0])
    assert boot_fetch.main(["boot_fetch.py", "manifest", url, digest, str(node)]) == 0
    assert (node / "collection.tar.gz").stat().st_size > 100000
    assert any(p.name.startswith("ansible_core-") for p in (node / "wheels").iterdir())

    _plan, _completed, changed = updates.apply_direct(clusters.ClusterService("s3://%s" % BUCKET), CLUSTER, False)
    assert changed is False
    assert _boot_objects(s3) == uploaded
