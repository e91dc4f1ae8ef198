"""Issue 31 item 5: every error a user meets through the playbooks is one line naming its real cause."""

from __future__ import annotations

import pytest

from tests.integration.conftest import REPO, task_results
from tests.integration.test_validate_and_kubeconfig import cluster_store  # noqa: F401 pylint: disable=unused-import

PLAYBOOKS = REPO / "playbooks"
NO_CLUSTER_NAME = "cluster_name is not set: name the cluster, e.g. -e cluster_name=k8s.example.com"
# get_cluster.yml is not among them: without cluster_name it prints kops get clusters' table of the store.
DAY2 = ("update_cluster.yml", "delete_cluster.yml", "export_kubeconfig.yml", "rolling_update.yml",
        "upgrade_cluster.yml", "validate_cluster.yml")
# What Ansible prints when a module's argument names a variable that is not set.
ANSIBLE_UNDEFINED = ("Finalization of task args", "is undefined")


@pytest.mark.parametrize("name", DAY2)
def test_a_day2_playbook_without_cluster_name_says_so_in_one_line(playbook, tmp_path, name):
    code, text = playbook(PLAYBOOKS / name, "-e", "state_store=file://%s" % (tmp_path / "state"), json_output=False)
    assert code != 0
    assert text.count("fatal:") == 1 and NO_CLUSTER_NAME in text, text
    assert not any(words in text for words in ANSIBLE_UNDEFINED), text


def test_missing_variables_are_named_together(playbook):
    code, text = playbook(PLAYBOOKS / "validate_cluster.yml", json_output=False)
    assert code != 0
    assert ("%s; no state store: set state_store (e.g. -e state_store=s3://my-kops-state) or KOPS_STATE_STORE"
            % NO_CLUSTER_NAME) in text, text


def test_replace_names_what_it_takes_and_a_missing_file(playbook, tmp_path):
    store = "state_store=file://%s" % (tmp_path / "state")
    code, text = playbook(PLAYBOOKS / "replace_cluster.yml", "-e", store, json_output=False)
    assert code != 0 and "replace_cluster.yml takes spec_file (the YAML to replace the spec with, e.g. " \
        "-e spec_file=k8s.example.com.yaml), or cluster_name and revision" in text, text
    code, text = playbook(PLAYBOOKS / "replace_cluster.yml", "-e", store, "-e", "spec_file=missing.yaml",
                          json_output=False)
    assert code != 0 and "spec_file %s is not a file" % (tmp_path / "missing.yaml") in text, text
    assert "lookup" not in text


def test_delete_names_a_confirmation_of_another_cluster(playbook, tmp_path):
    code, text = playbook(PLAYBOOKS / "delete_cluster.yml", "-e", "cluster_name=a.example.com",
                          "-e", "confirm_cluster_name=b.example.com", json_output=False)
    assert code != 0
    assert "confirm_cluster_name b.example.com is not the cluster to delete (a.example.com); nothing was deleted" in text


def test_a_rollback_prints_no_template_warning(playbook, tmp_path):
    """The task that replaces from spec_file is skipped by a rollback; its name must still render."""
    store = "state_store=file://%s" % (tmp_path / "state")
    options = '{"cluster_options": {"cluster_name": "r.example.com", "cloud_provider": "aws", "zones": ["us-east-1a"]}}'
    assert playbook(PLAYBOOKS / "create_cluster.yml", "-e", store, "-e", options, "-e", "cloud_lookup=false")[0] == 0
    code, text = playbook(PLAYBOOKS / "replace_cluster.yml", "-e", store, "-e", "cluster_name=r.example.com",
                          "-e", "revision=1", "--check", json_output=False)
    assert code == 0, text
    assert "is undefined" not in text and "template error" not in text, text
    assert "TASK [Roll the cluster spec back to revision 1]" in text


def test_zones_in_two_regions_are_named_as_such(playbook, tmp_path, aws):
    """With the cloud answering (moto), not as the other region's machine types not being offered."""
    options = ('{"cluster_options": {"cluster_name": "z.example.com", "cloud_provider": "aws", '
               '"zones": ["us-east-1a", "eu-west-1a"], "image": "ami-1e749f67"}}')
    code, text = playbook(PLAYBOOKS / "create_cluster.yml", "-e", "state_store=file://%s" % (tmp_path / "state"),
                          "-e", options, json_output=False)
    assert code != 0
    assert ("zones: eu-west-1a, us-east-1a are in 2 regions (eu-west-1: eu-west-1a; us-east-1: us-east-1a); a cluster "
            "lives in one region: use zones of one region") in text, text
    assert "offered" not in text and "machineType" not in text
    assert not (tmp_path / "state").exists()


def test_a_failed_terminate_in_the_control_plane_is_reported_as_that(faults, tmp_path, playbook, monkeypatch):
    """Every TerminateInstanceInAutoScalingGroup answered 503: the roll stops naming the terminate and its call, not
    "node not healthy after update" (kops' words for nodes that did not validate)."""
    from tests.integration.test_rolling_update import CLUSTER, PLAYBOOK, TASK, _change_machine_type, _make_cluster
    store = "file://%s" % (tmp_path / "state")
    _change_machine_type(_make_cluster(store, node_count=1))
    faults.set_rules(error5xx=1.0, only=["TerminateInstanceInAutoScalingGroup"])
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "2")  # botocore's retries of a 503, two tries in all
    code, run = playbook(PLAYBOOK, "-e", "state_store=%s" % store, "-e", "cluster_name=%s" % CLUSTER,
                         "-e", "cloud_only=true", "-e", "interval=0")
    message = task_results(run, TASK)["msg"]
    assert code != 0
    assert message.startswith("rolling update of %s stopped: control-plane group failed, stopping rolling-update: "
                              "terminating i-" % CLUSTER), message
    assert (": ServiceUnavailable: Auto Scaling TerminateInstanceInAutoScalingGroup in us-east-1 at %s: injected "
            "server error" % faults.url) in message, message
    assert "not healthy" not in message
    assert [o for t_, o, o_ in faults.log() if o == "TerminateInstanceInAutoScalingGroup"] == [
        "TerminateInstanceInAutoScalingGroup"] * 2


@pytest.mark.parametrize("operation, service", [("DescribeVpcs", "EC2"), ("GetResources", "Resource Groups Tagging API")])
def test_a_cloud_answering_an_html_page_is_one_line_naming_the_call(faults, tmp_path, playbook, monkeypatch, operation,
                                                                    service):
    """A 500 whose body is an HTML page (moto's server failing inside, a proxy): the call, its region and endpoint,
    the page's title; not botocore's "Unable to parse response" with the page.  DescribeVpcs is EC2's XML protocol
    (botocore could not parse the page), GetResources a JSON protocol (the page was the error message); the first
    fails a task of the graph, the second a lookup before it."""
    from tests.integration.test_aws_update import MOTO_AMI
    store = "state_store=file://%s" % (tmp_path / "state")
    options = ('{"cluster_options": {"cluster_name": "h.example.com", "cloud_provider": "aws", "zones": ["us-east-1a"], '
               '"networking": "cni", "image": "%s"}}' % MOTO_AMI)
    assert playbook(PLAYBOOKS / "create_cluster.yml", "-e", store, "-e", options)[0] == 0
    faults.set_rules(html5xx=1.0, only=[operation])
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "2")
    code, text = playbook(PLAYBOOKS / "update_cluster.yml", "-e", store, "-e", "cluster_name=h.example.com", "--check",
                          json_output=False)
    assert code != 0
    assert ('%s %s in us-east-1 at %s answered HTTP 500 with an HTML page ("500 Internal Server Error"), not an AWS '
            'answer: the endpoint or a proxy before it failed; try again, or check AWS_ENDPOINT_URL'
            % (service, operation, faults.url)) in text, text
    assert "doctype" not in text.lower() and "Unable to parse" not in text and "<html" not in text
    assert [o for _t, o, outcome in faults.log() if o == operation and outcome == "html5xx"] == [operation] * 2


def test_an_unreachable_kubernetes_api_is_one_line(cluster_store, playbook):  # noqa: F811
    """Not urllib3's "HTTPSConnectionPool(...): Max retries exceeded with url: ... (Caused by NewConnectionError(...))"."""
    from tests.servers import free_port
    store, _service = cluster_store
    api = "https://127.0.0.1:%d" % free_port()  # nothing listens there
    code, text = playbook(PLAYBOOKS / "validate_cluster.yml", "-e", "state_store=%s" % store,
                          "-e", "cluster_name=k8s.example.com", "-e", "api_server=%s" % api, json_output=False)
    assert code != 0
    assert "cannot reach the Kubernetes API at %s to list nodes: Connection refused\n" % api in text, text
    assert "Max retries" not in text and "ConnectionPool" not in text and "NewConnectionError" not in text
