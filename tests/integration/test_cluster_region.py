"""Day-2 playbooks look things up in the cluster's own region, whatever AWS region the user's environment names (none
at all, or another): a day-2 module is given no zone before it reads the cluster, and botocore's default region is
not the cluster's ("You must specify a region." before, or lookups in the wrong region).  And an instance group a
replace stored without a machine type (kops replace -f stores it as given) gets kops' default at update, as kops'
PopulateInstanceGroupSpec gives it (a KeyError 'machineType' before)."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.integration.conftest import BIN, REPO, ansible_env, task_results

NAME = "region.example.com"


def _run(tmp_path, region_env, *args):
    env = ansible_env(REPO / "build" / "collections")
    for key in ("AWS_DEFAULT_REGION", "AWS_REGION"):
        env.pop(key, None)
    env.update(region_env, ANSIBLE_CALLBACK_PLUGINS=str(REPO / "tests" / "integration" / "callback_plugins"),
               ANSIBLE_STDOUT_CALLBACK="test_json")
    proc = subprocess.run([str(BIN / "ansible-playbook")] + list(args), env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    return json.loads(proc.stdout)


@pytest.mark.parametrize("region_env", [{}, {"AWS_DEFAULT_REGION": "us-east-1"}], ids=["no region", "another region"])
def test_day2_playbooks_use_the_clusters_region(aws, tmp_path, region_env):
    store = "state_store=file://%s" % (tmp_path / "state")
    options = json.dumps({"cluster_options": {"cluster_name": NAME, "cloud_provider": "aws", "zones": ["eu-west-1a"],
                                              "networking": "cilium", "image": "ami-1e749f67"}})
    _run(tmp_path, region_env, "kubeops.kops.create_cluster", "-e", store, "-e", options, "-e", "target=none")
    get = _run(tmp_path, region_env, "kubeops.kops.get_cluster", "-e", store, "-e", "cluster_name=" + NAME,
               "-e", "output=%s.yaml" % NAME)
    assert task_results(get, "Read the cluster from the state store")["exists"] is True
    # An edit that needs the machine types the cluster's zone offers (a new group's default size): looked up in
    # eu-west-1, where moto offers kops' candidates; before, no region failed, and us-east-1 has no eu-west-1a.
    spec = (tmp_path / ("%s.yaml" % NAME)).read_text()
    spec += ("---\napiVersion: kops.k8s.io/v1alpha2\nkind: InstanceGroup\nmetadata:\n  name: extra\n"
             "  labels:\n    kops.k8s.io/cluster: %s\nspec:\n  role: Node\n  minSize: 1\n  maxSize: 1\n"
             "  subnets: [eu-west-1a]\n  image: ami-1e749f67\n" % NAME)
    (tmp_path / ("%s.yaml" % NAME)).write_text(spec)
    replaced = _run(tmp_path, region_env, "kubeops.kops.replace_cluster", "-e", store, "-e",
                    "spec_file=%s.yaml" % NAME)
    assert replaced["stats"]["localhost"]["failures"] == 0
    update = _run(tmp_path, region_env, "kubeops.kops.update_cluster", "-e", store, "-e", "cluster_name=" + NAME,
                  "--check")
    plan = task_results(update, "Update the cluster with target direct")
    assert any(e["kind"] == "aws_autoscaling_group" and e["name"].startswith("extra.") for e in plan["plan"]), plan
