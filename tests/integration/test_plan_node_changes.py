"""Issue 31 item 4: the update plan shows what changes on the nodes, as kops shows its nodeup config's diff: a
kubelet setting changed in the spec, previewed with update_cluster.yml --check --diff on moto, shows the nodeup
configs' diff and the launch templates' user data diff (the hash it pins), secrets masked; the Terraform plan too."""

from __future__ import annotations

import json

from tests.integration.conftest import REPO, task_results
from tests.integration.test_aws_update import MOTO_AMI

PLAYBOOKS = REPO / "playbooks"
CLUSTER = "k8s.example.com"
TASK = "Update the cluster with target %s"
# What the spec's fileAssets hand the nodes: the user's text, secrets in it.
SECRET_ASSET = {"name": "registry-auth", "path": "/etc/registry/auth.yaml", "roles": ["Node"],
                "content": "registry: r.example.com\npassword: hunter2-very-secret\ntoken: abcdef.0123456789abcdef\n"}
SECRETS = ("hunter2", "0123456789abcdef")


def _store_files(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _created_then_changed(playbook, tmp_path):
    """A cluster made on moto with create_cluster.yml target=direct, then its spec given maxPods and a file asset
    that holds secrets (as replace_cluster.yml writes it); returns the store's URL."""
    from ansible_collections.kubeops.kops.plugins.module_utils import clusters
    store = "file://%s" % (tmp_path / "state")
    options = {"cluster_name": CLUSTER, "cloud_provider": "aws", "zones": ["us-east-1a"], "networking": "cni",
               "kubernetes_version": "v1.34.2", "image": MOTO_AMI}
    code, run = playbook(PLAYBOOKS / "create_cluster.yml", "-e", "state_store=%s" % store, "-e", "target=direct",
                         "-e", json.dumps({"cluster_options": options}))
    assert code == 0, run
    service = clusters.ClusterService(store)
    cluster, groups = service.read(CLUSTER)
    cluster["spec"]["kubelet"]["maxPods"] = 42
    cluster["spec"]["fileAssets"] = [SECRET_ASSET]
    service.execute(service.plan_replace([cluster] + groups))
    return store


def test_check_diff_shows_the_nodeup_configs_and_user_data_diffs_secrets_masked(aws, playbook, tmp_path):
    store = _created_then_changed(playbook, tmp_path)
    before = _store_files(tmp_path / "state")
    args = ("-e", "state_store=%s" % store, "-e", "cluster_name=%s" % CLUSTER, "--check")
    code, text = playbook(PLAYBOOKS / "update_cluster.yml", *args, "--diff", json_output=False)
    assert code == 0, text
    for group in ("control-plane-us-east-1a", "nodes-us-east-1a"):
        plan = text.split("~ nodeup_config %s\n" % group, 1)[1]  # the plan is the diff: each line after a "+"
        hunk = plan.split("\n+~ ", 1)[0].split("\n+Plan: ", 1)[0]
        assert "+    @@ " in hunk and "+    +  maxPods: 42\n" in hunk, hunk
    nodes = text.split("~ nodeup_config nodes-us-east-1a\n", 1)[1]
    assert "+    +    password: <masked>\n" in nodes and "+    +    token: <masked>\n" in nodes, nodes
    # The launch templates' user data: the nodeup config hash they pin, as a diff of the script.
    for template in ("control-plane-us-east-1a.masters.%s" % CLUSTER, "nodes-us-east-1a.%s" % CLUSTER):
        data = text.split("~ aws_launch_template %s\n" % template, 1)[1].split("\n+~ ", 1)[0]
        assert data.startswith("+    user_data:\n+      @@ "), data
        assert "\n+      -NODEUP_CONFIG_HASH=" in data and "\n+      +NODEUP_CONFIG_HASH=" in data, data
    assert "<sha256" not in text and not any(secret in text for secret in SECRETS)
    assert "+Plan: 0 to create, 2 to update, 0 to delete, " in text
    assert _store_files(tmp_path / "state") == before  # check mode: nothing written

    # Without --diff the report prints the same lines; the result lists the documents.
    code, run = playbook(PLAYBOOKS / "update_cluster.yml", *args)
    result = task_results(run, TASK % "direct")
    assert code == 0
    assert "    +  maxPods: 42" in result["lines"][result["lines"].index("~ nodeup_config nodes-us-east-1a"):]
    assert [(d["kind"], d["name"], d["action"]) for d in result["documents"]] == [
        ("nodeup_config", "control-plane-us-east-1a", "update"), ("nodeup_config", "nodes-us-east-1a", "update")]
    assert not any(secret in json.dumps(run) for secret in SECRETS)


def test_the_terraform_plan_shows_the_nodeup_configs_and_the_user_data_files(aws, playbook, tmp_path):
    store = _created_then_changed(playbook, tmp_path)
    out = tmp_path / "terraform"
    args = ("-e", "state_store=%s" % store, "-e", "cluster_name=%s" % CLUSTER, "-e", "target=terraform",
            "-e", "out_dir=%s" % out)
    assert playbook(PLAYBOOKS / "update_cluster.yml", *args)[0] == 0
    user_data = out / "data" / ("aws_launch_template_nodes-us-east-1a.%s_user_data" % CLUSTER)
    written = user_data.read_text()
    # Another change after the render: the next plan diffs against the files the last one wrote.
    from ansible_collections.kubeops.kops.plugins.module_utils import clusters
    service = clusters.ClusterService(store)
    cluster, groups = service.read(CLUSTER)
    cluster["spec"]["kubelet"]["maxPods"] = 60
    service.execute(service.plan_replace([cluster] + groups))
    code, text = playbook(PLAYBOOKS / "update_cluster.yml", *args, "--check", "--diff", json_output=False)
    assert code == 0, text
    assert "--- before: nodeup_config nodes-us-east-1a (stored)\n+++ after: nodeup_config nodes-us-east-1a (new)" in text
    assert "-  maxPods: 42\n+  maxPods: 60\n" in text, text
    assert ("--- before: terraform_file data/aws_launch_template_nodes-us-east-1a.%s_user_data (stored)" % CLUSTER) in text
    assert "\n-NODEUP_CONFIG_HASH=" in text and "\n+NODEUP_CONFIG_HASH=" in text
    assert not any(secret in text for secret in SECRETS)
    assert user_data.read_text() == written  # check mode
    code, run = playbook(PLAYBOOKS / "update_cluster.yml", *args, "--check")
    lines = task_results(run, TASK % "terraform")["lines"]
    assert lines[0] == "%s would be written (check mode)" % (out / "kubernetes.tf") or lines[0].endswith(" unchanged")
    assert "~ nodeup_config nodes-us-east-1a" in lines and "~ terraform_file data/aws_launch_template_nodes-us-east-1a." \
        "%s_user_data" % CLUSTER in lines
