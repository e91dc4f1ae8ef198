"""The user-facing playbooks, run with ansible-playbook against a file:// store."""

from __future__ import annotations

import json
import pathlib

import yaml

from tests.integration.conftest import REPO, task_results

PLAYBOOKS = REPO / "playbooks"
HA_OPTIONS = {"cluster_name": "ha.example.com", "cloud_provider": "aws", "networking": "cni",
              "zones": ["us-east-1a", "us-east-1b", "us-east-1c"],
              "control_plane_zones": ["us-east-1a", "us-east-1b", "us-east-1c"], "kubernetes_version": "v1.34.2"}
HA = ["-e", json.dumps({"cluster_options": HA_OPTIONS})]


def _files(root):
    root = pathlib.Path(root)
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_create_get_replace_round_trip(playbook, tmp_path):
    store_dir = tmp_path / "state"
    store = "state_store=file://%s" % store_dir

    code, check = playbook(PLAYBOOKS / "create_cluster.yml", "-e", store, *HA, "--check")
    assert code == 0, check
    assert task_results(check, "Write the cluster spec to the state store")["changed"] is True
    assert not store_dir.exists() or _files(store_dir) == {}

    code, run = playbook(PLAYBOOKS / "create_cluster.yml", "-e", store, *HA)
    assert code == 0, run
    assert run["stats"]["localhost"]["changed"] == 1
    files = _files(store_dir)
    assert "ha.example.com/config" in files and len(files) == 9  # 7 of kops', the history's index and revision 1

    code, again = playbook(PLAYBOOKS / "create_cluster.yml", "-e", store, *HA)
    assert code == 0 and again["stats"]["localhost"]["changed"] == 0
    assert _files(store_dir) == files

    exported = tmp_path / "ha.yaml"
    code, got = playbook(PLAYBOOKS / "get_cluster.yml", "-e", store, "-e", "cluster_name=ha.example.com",
                         "-e", "output=%s" % exported)
    assert code == 0, got
    documents = list(yaml.safe_load_all(exported.read_text()))
    assert [d["metadata"]["name"] for d in documents][:2] == ["ha.example.com", "control-plane-us-east-1a"]

    for document in documents:
        if document["metadata"]["name"] == "nodes-us-east-1c":
            document["spec"]["maxSize"] = 5
    exported.write_text("\n---\n".join(yaml.safe_dump(d) for d in documents))
    code, replaced = playbook(PLAYBOOKS / "replace_cluster.yml", "-e", store, "-e", "spec_file=%s" % exported)
    assert code == 0, replaced
    result = task_results(replaced, "Replace the cluster spec with %s" % exported)
    assert result["changed_paths"] == ["instancegroup/nodes-us-east-1c"]
    stored = yaml.safe_load(_files(store_dir)["ha.example.com/instancegroup/nodes-us-east-1c"])
    assert stored["spec"]["maxSize"] == 5
    # The report: what changed, where, the revision, and the objects as a table (it was a Python list's repr).
    assert task_results(replaced, "Report")["msg"] == [
        "1 object(s) changed in file://%s/ha.example.com, now at revision 2" % store_dir,
        "OBJECT                          CHANGE",
        "instancegroup/nodes-us-east-1c  updated"]
    code, again = playbook(PLAYBOOKS / "replace_cluster.yml", "-e", store, "-e", "spec_file=%s" % exported, "-e",
                           "force=true")
    assert code == 0 and task_results(again, "Report")["msg"] == [
        "No changes in file://%s/ha.example.com, now at revision 2" % store_dir], again


def _printed(text, task):
    """What the task called task printed on the console (kubeops.kops.print_text), up to its ok: line."""
    return text.split("TASK [%s]" % task, 1)[1].split("\n", 1)[1].split("\nok: [localhost]", 1)[0].splitlines()


def test_get_cluster_prints_kops_tables_or_the_yaml_and_writes_into_a_new_directory(playbook, tmp_path):
    store = "state_store=file://%s" % (tmp_path / "state")
    assert playbook(PLAYBOOKS / "create_cluster.yml", "-e", store, *HA)[0] == 0
    name = ["-e", "cluster_name=ha.example.com"]
    code, text = playbook(PLAYBOOKS / "get_cluster.yml", "-e", store, *name, json_output=False)
    assert code == 0, text
    # kops get all ha.example.com: kops' tables, columns where its tabwriter puts them (tab stops of 8).
    assert _printed(text, "Print the tables") == [
        "Cluster",
        "NAME            CLOUD   ZONES",
        "ha.example.com  aws     us-east-1a,us-east-1b,us-east-1c",
        "",
        "Instance Groups",
        "NAME                            ROLE            MACHINETYPE     MIN     MAX     ZONES",
        "control-plane-us-east-1a        ControlPlane    t3.medium       1       1       us-east-1a",
        "control-plane-us-east-1b        ControlPlane    t3.medium       1       1       us-east-1b",
        "control-plane-us-east-1c        ControlPlane    t3.medium       1       1       us-east-1c",
        "nodes-us-east-1a                Node            t3.medium       1       1       us-east-1a",
        "nodes-us-east-1b                Node            t3.medium       1       1       us-east-1b",
        "nodes-us-east-1c                Node            t3.medium       1       1       us-east-1c"], text

    code, text = playbook(PLAYBOOKS / "get_cluster.yml", "-e", store, json_output=False)  # kops get clusters
    assert code == 0 and _printed(text, "Print the tables") == [
        "NAME            CLOUD   ZONES", "ha.example.com  aws     us-east-1a,us-east-1b,us-east-1c"], text

    code, text = playbook(PLAYBOOKS / "get_cluster.yml", "-e", store, *name, "-e", "format=yaml", json_output=False)
    assert code == 0, text
    assert "kind: InstanceGroup" in text and "name: nodes-us-east-1b" in text

    # kops writes what it is told to, making the directory: so does output.
    code, got = playbook(PLAYBOOKS / "get_cluster.yml", "-e", store, *name, "-e", "output=specs/ha/ha.yaml")
    assert code == 0, got
    documents = list(yaml.safe_load_all((tmp_path / "specs" / "ha" / "ha.yaml").read_text()))
    assert [d["metadata"]["name"] for d in documents][:2] == ["ha.example.com", "control-plane-us-east-1a"]

    for bad, said in ((["-e", "format=json"], "format json is neither table nor yaml"),
                      (["-e", "format=yaml"], "give cluster_name")):
        code, text = playbook(PLAYBOOKS / "get_cluster.yml", "-e", store, *(name if "json" in bad[1] else []), *bad,
                              json_output=False)
        assert code != 0 and said in text, text


def test_bad_option_fails_clearly(playbook, tmp_path):
    store_dir = tmp_path / "state"
    code, text = playbook(PLAYBOOKS / "create_cluster.yml", "-e", "state_store=file://%s" % store_dir,
                          "-e", json.dumps({"cluster_options": dict(HA_OPTIONS, networking="wavenet")}), json_output=False)
    assert code != 0
    assert "networking: unknown networking mode 'wavenet'" in text
    assert not store_dir.exists() or _files(store_dir) == {}


def test_run_options_are_checked_together_before_any_module(playbook, tmp_path):
    """Every bad run option is named in one failure, before a module runs (one task: each task is a process)."""
    a_file = tmp_path / "kubernetes.tf"
    a_file.write_text("")
    bad = ["-e", "state_store=my-bucket", "-e", "target=plan", "-e", "out_dir=%s" % a_file]
    scheme = "state_store my-bucket has no scheme: use s3://my-bucket for an S3 bucket"
    code, text = playbook(PLAYBOOKS / "update_cluster.yml", "-e", "cluster_name=ha.example.com", *bad, json_output=False)
    assert code != 0
    assert "target must be direct, terraform or cloudformation, not plan; %s" % scheme in text, text
    assert "out_dir %s is a file: give a directory for kubernetes.tf" % a_file in text
    code, text = playbook(PLAYBOOKS / "create_cluster.yml", "-e", "cluster_name=ha.example.com", *bad, json_output=False)
    assert code != 0
    assert ("create_cluster.yml takes the create options as one mapping, cluster_options, with at least cluster_name "
            "(e.g. -e @my-cluster.yml holding cluster_options: {cluster_name: k8s.example.com, zones: [eu-west-1a]}); "
            "move cluster_name under it; target must be none (spec only), direct, terraform or cloudformation, not plan; "
            + scheme) in text, text
    code, text = playbook(PLAYBOOKS / "create_cluster.yml", *HA, "-e", "state_store=file://%s" % tmp_path,
                          "-e", "target=terraform", "-e", "out_dir=%s" % a_file, json_output=False)
    assert code != 0 and "out_dir %s is a file" % a_file in text
    assert "has no scheme" not in text and "takes the create options" not in text and "Write the cluster spec" not in text


def test_option_names_list_matches_the_module():
    from ansible_collections.kubeops.kops.plugins.module_utils.completion import new_cluster
    listed = yaml.safe_load((PLAYBOOKS / "vars" / "create_cluster_options.yml").read_text())
    assert listed["kops_create_cluster_option_names"] == list(new_cluster.OPTION_DEFAULTS)


def test_create_cluster_with_terraform_target(playbook, tmp_path):
    store = "state_store=file://%s" % (tmp_path / "state")
    out = tmp_path / "terraform"
    code, run = playbook(PLAYBOOKS / "create_cluster.yml", "-e", store, *HA, "-e", "target=terraform",
                         "-e", "out_dir=%s" % out)
    assert code == 0, run
    text = (out / "kubernetes.tf").read_text()
    assert 'resource "aws_subnet" "us-east-1c-ha-example-com"' in text
    # The outputs kops writes: the pipeline's (cluster, region) and each task's (VPC, subnet, route table, IAM
    # role, autoscaling groups with their security groups and, for nodes, subnets).
    for output in ('cluster_name = "ha.example.com"', 'region = "us-east-1"', "vpc_id = aws_vpc.ha-example-com.id",
                   "subnet_us-east-1c_id = aws_subnet.us-east-1c-ha-example-com.id",
                   "route_table_public_id = aws_route_table.ha-example-com.id",
                   "masters_role_arn = aws_iam_role.masters-ha-example-com.arn",
                   "node_security_group_ids = [aws_security_group.nodes-ha-example-com.id]",
                   "node_subnet_ids = [aws_subnet.us-east-1a-ha-example-com.id, aws_subnet.us-east-1b-ha-example-com.id, "
                   "aws_subnet.us-east-1c-ha-example-com.id]"):
        name, value = output.split(" = ", 1)
        assert 'output "%s" {\n  value = %s\n}' % (name, value) in text, output
    assert 'output "master_autoscaling_group_ids" {\n  value = [%s]\n}' % ", ".join(
        "aws_autoscaling_group.control-plane-us-east-1%s-masters-ha-example-com.id" % zone for zone in "abc") in text
    code, again = playbook(PLAYBOOKS / "update_cluster.yml", "-e", store, "-e", "cluster_name=ha.example.com",
                           "-e", "target=terraform", "-e", "out_dir=%s" % out)
    assert code == 0 and again["stats"]["localhost"]["changed"] == 0


def test_top_level_variables_do_not_reach_the_spec(playbook, tmp_path):
    """An inventory's (or anyone's) channel or image variable is not a create option: only cluster_options is."""
    store_dir = tmp_path / "state"
    code, run = playbook(PLAYBOOKS / "create_cluster.yml", "-e", "state_store=file://%s" % store_dir, *HA,
                         "-e", "channel=alpha", "-e", "image=ami-0123456789abcdef0", "-e", "node_count=9")
    assert code == 0, run
    stored = yaml.safe_load((store_dir / "ha.example.com" / "config").read_text())
    assert stored["spec"]["channel"] == "stable"
    nodes = yaml.safe_load((store_dir / "ha.example.com" / "instancegroup" / "nodes-us-east-1a").read_text())
    assert nodes["spec"]["image"] != "ami-0123456789abcdef0" and nodes["spec"]["minSize"] == 1


def test_wrong_types_fail_naming_the_option(playbook, tmp_path):
    store_dir = tmp_path / "state"
    for options, message in (({"node_count": "many"}, "argument 'node_count' is of type str"),
                             ({"zones": 5}, "zones: zone '5' is not an AWS availability zone"),
                             ({"cluster_name": "nodot"}, "cluster_name: 'nodot' must be a fully-qualified DNS name"),
                             ({"cluster_name": "a" * 250 + ".com"}, "is not a DNS name; use at most 253")):
        code, text = playbook(PLAYBOOKS / "create_cluster.yml", "-e", "state_store=file://%s" % store_dir,
                              "-e", json.dumps({"cluster_options": dict(HA_OPTIONS, **options)}), json_output=False)
        assert code != 0 and message in text, text
        assert "Traceback" not in text
    assert not store_dir.exists()


def test_replace_of_a_file_read_before_another_edit_is_refused_naming_both_revisions(playbook, tmp_path):
    """Issue 22 item 3: get_cluster.yml's Cluster names the revision it read (annotation kubeops.kops/revision);
    replace_cluster.yml refuses that file when it would undo another run's edit stored since, unless force=true."""
    from ansible_collections.kubeops.kops.plugins.module_utils import clusters
    store_dir = tmp_path / "state"
    store = "state_store=file://%s" % store_dir
    assert playbook(PLAYBOOKS / "create_cluster.yml", "-e", store, *HA)[0] == 0
    first, second = tmp_path / "first.yaml", tmp_path / "second.yaml"
    for path in (first, second):
        code, got = playbook(PLAYBOOKS / "get_cluster.yml", "-e", store, "-e", "cluster_name=ha.example.com",
                             "-e", "output=%s" % path)
        assert code == 0, got
    read_at = str(clusters.ClusterService("file://%s" % store_dir).revision("ha.example.com"))
    assert read_at == "1"  # the create
    assert next(yaml.safe_load_all(first.read_text()))["metadata"]["annotations"] == {"kubeops.kops/revision": read_at}
    # Two edits of the last group (nodes-us-east-1c), each in its own copy.
    first.write_text("maxSize: 4\n".join(first.read_text().rsplit("maxSize: 1\n", 1)))
    second.write_text("minSize: 0\n".join(second.read_text().rsplit("minSize: 1\n", 1)))

    code, replaced = playbook(PLAYBOOKS / "replace_cluster.yml", "-e", store, "-e", "spec_file=%s" % first)
    assert code == 0, task_results(replaced, "Replace the cluster spec with %s" % first).get("msg")
    now = task_results(replaced, "Replace the cluster spec with %s" % first)["revision"]
    assert now == "2"
    assert now == str(clusters.ClusterService("file://%s" % store_dir).revision("ha.example.com"))
    before = _files(store_dir)
    code, refused = playbook(PLAYBOOKS / "replace_cluster.yml", "-e", store, "-e", "spec_file=%s" % second)
    result = task_results(refused, "Replace the cluster spec with %s" % second)
    assert code != 0 and result["failed"] is True
    assert ("since this definition was read at revision %s (it is at revision %s now)" % (read_at, now)) in result["msg"]
    assert "InstanceGroup nodes-us-east-1c spec.maxSize (was 1, now 4, the definition has 1)" in result["msg"]
    assert _files(store_dir) == before
    code, forced = playbook(PLAYBOOKS / "replace_cluster.yml", "-e", store, "-e", "spec_file=%s" % second,
                            "-e", "force=true")
    assert code == 0, forced
    assert task_results(forced, "Replace the cluster spec with %s" % second)["changed"] is True
