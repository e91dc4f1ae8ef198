"""The AWS options and cloud facts, as a user meets them: modules of the installed collection run by
ansible-playbook from another directory, against moto (the `aws` fixture) or against nothing at all."""

from __future__ import annotations

import socket
import threading
import time

import boto3
import pytest
import yaml

from tests.integration.conftest import task_results

CLUSTER = "k8s.example.com"
OPTIONS = {"cluster_name": CLUSTER, "cloud_provider": "aws", "zones": ["us-east-1a"], "networking": "cni",
           "kubernetes_version": "v1.34.2"}


def _play(tmp_path, *tasks):
    """A playbook of module tasks, each registered and allowed to fail (the test reads the result)."""
    path = tmp_path / ("play-%d.yml" % len(list(tmp_path.glob("play-*.yml"))))
    path.write_text(yaml.safe_dump([{
        "name": "AWS options", "hosts": "localhost", "connection": "local", "gather_facts": False,
        "vars": {"ansible_python_interpreter": "{{ ansible_playbook_python }}"},
        "tasks": [dict(task, ignore_errors=True) for task in tasks]}], sort_keys=False))
    return path


def _run(playbook, tmp_path, *tasks):
    workdir = tmp_path / "elsewhere"
    workdir.mkdir(exist_ok=True)
    code, run = playbook(_play(tmp_path, *tasks), cwd=workdir)
    assert code == 0, run
    return run


def _create(store, name="Create", **args):
    return {"name": name, "kubeops.kops.cluster": dict({"state_store": store}, **args)}


def _stored_spec(store_dir):
    return yaml.safe_load((store_dir / CLUSTER / "config").read_text())["spec"]


def test_existing_vpc_and_shared_subnet_are_looked_up_by_default(aws, playbook, tmp_path):
    """With credentials (moto's) and no cloud_facts, the module asks EC2, as kops create cluster does."""
    ec2 = boto3.client("ec2", region_name="us-east-1")
    vpc = ec2.create_vpc(CidrBlock="10.30.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.30.8.0/22", AvailabilityZone="us-east-1a")["Subnet"]
    store_dir = tmp_path / "state"

    run = _run(playbook, tmp_path, _create("file://%s" % store_dir, options=dict(
        OPTIONS, network_id=vpc, subnet_ids=[subnet["SubnetId"]])))

    assert task_results(run, "Create").get("failed") is not True, task_results(run, "Create")
    spec = _stored_spec(store_dir)
    assert spec["networkID"] == vpc and spec["networkCIDR"] == "10.30.0.0/16"
    shared = [s for s in spec["subnets"] if s.get("id") == subnet["SubnetId"]]
    assert shared and shared[0]["cidr"] == "10.30.8.0/22" and shared[0]["zone"] == "us-east-1a"


def test_offline_cloud_facts_ask_aws_nothing(aws, playbook, tmp_path, monkeypatch):
    """cloud_lookup: false with cloud_facts works with an AWS endpoint that refuses every connection; without
    the fact it fails naming cloud_facts.vpcs."""
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:%d" % closed.getsockname()[1])
    closed.close()
    store_dir = tmp_path / "state"
    options = dict(OPTIONS, network_id="vpc-0abc")

    run = _run(playbook, tmp_path,
               _create("file://%s" % store_dir, name="Offline with facts", options=options, cloud_lookup=False,
                       cloud_facts={"vpcs": {"vpc-0abc": "10.40.0.0/16"}}),
               _create("file://%s" % (tmp_path / "other"), name="Offline without the fact", options=options,
                       cloud_lookup=False))

    assert task_results(run, "Offline with facts").get("failed") is not True, task_results(run, "Offline with facts")
    assert _stored_spec(store_dir)["networkCIDR"] == "10.40.0.0/16"
    failed = task_results(run, "Offline without the fact")
    assert failed["failed"] is True
    assert "network_id: VPC 'vpc-0abc' not found in cloud_facts.vpcs" in failed["msg"]
    assert "cloud_lookup not false" in failed["msg"]


def test_dns_cluster_without_hosted_zone_fails_then_finds_the_zone(aws, playbook, tmp_path):
    """The API load balancer's Route53 records are never left out: no zone is an error naming the fix; once
    the zone exists, the default lookup finds it and the records are rendered."""
    store = "file://%s" % (tmp_path / "state")
    out_dir = tmp_path / "tf"
    update = {"name": "Render", "kubeops.kops.cluster_update": {
        "state_store": store, "cluster_name": CLUSTER, "target": "terraform", "out_dir": str(out_dir)}}
    create = _create(store, options=dict(OPTIONS, api_load_balancer_type="public", dns_type="public"))

    run = _run(playbook, tmp_path, create, update)
    failed = task_results(run, "Render")
    assert failed["failed"] is True
    assert "no hosted zone was found for %s" % CLUSTER in failed["msg"]
    assert "spec.dnsZone" in failed["msg"] and "cloud_facts.hosted_zones" in failed["msg"]
    assert not (out_dir / "kubernetes.tf").exists()

    route53 = boto3.client("route53", region_name="us-east-1")
    zone = route53.create_hosted_zone(Name="example.com.", CallerReference="awsopts")["HostedZone"]["Id"]
    run = _run(playbook, tmp_path, update)
    assert task_results(run, "Render").get("failed") is not True, task_results(run, "Render")
    terraform = (out_dir / "kubernetes.tf").read_text()
    assert 'resource "aws_route53_record" "api-k8s-example-com"' in terraform
    assert zone.rsplit("/", 1)[-1] in terraform


def test_missing_credentials_say_what_to_set(playbook, tmp_path):
    """No credentials anywhere (tests/conftest.py removes the machine's): lookups and s3:// stores say what to
    set, in one line; without cloud_lookup the module works offline."""
    run = _run(playbook, tmp_path,
               _create("file://%s" % (tmp_path / "a"), name="Lookup forced", options=OPTIONS, cloud_lookup=True),
               _create("s3://no-credentials-bucket", name="S3 store", options=OPTIONS),
               _create("file://%s" % (tmp_path / "b"), name="Offline by default", options=OPTIONS))
    for name in ("Lookup forced", "S3 store"):
        result = task_results(run, name)
        assert result["failed"] is True, result
        assert "no AWS credentials found" in result["msg"] and "access_key and secret_key" in result["msg"]
        assert "\n" not in result["msg"] and "Traceback" not in result["msg"]
    assert task_results(run, "Offline by default").get("failed") is not True


def test_profile_and_keys_together_are_refused(playbook, tmp_path):
    run = _run(playbook, tmp_path, _create("file://%s" % tmp_path, name="Both", options=OPTIONS,
                                           profile="dev", access_key="AKIDEXAMPLE", secret_key="secret"))
    result = task_results(run, "Both")
    assert result["failed"] is True and "profile 'dev' and access_key" in result["msg"]
    assert "secret" not in result["msg"].replace("secret_key", "")


@pytest.fixture
def silent_endpoint():
    """A server on 127.0.0.1 that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    accepted = []
    stop = threading.Event()

    def accept():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(server.accept()[0])
            except OSError:
                continue
    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield "http://127.0.0.1:%d" % server.getsockname()[1], accepted
    stop.set()
    thread.join()
    for connection in accepted:
        connection.close()
    server.close()


def test_an_endpoint_that_never_answers_fails_in_bounded_time(aws, playbook, tmp_path, monkeypatch, silent_endpoint):
    url, accepted = silent_endpoint
    monkeypatch.setenv("AWS_ENDPOINT_URL", url)
    monkeypatch.setenv("KOPS_AWS_READ_TIMEOUT", "2")
    started = time.monotonic()
    run = _run(playbook, tmp_path, {"name": "Info", "kubeops.kops.cluster_info": {"state_store": "s3://silent"}})
    elapsed = time.monotonic() - started

    result = task_results(run, "Info")
    assert result["failed"] is True
    assert "did not answer within 2 s (KOPS_AWS_READ_TIMEOUT), 3 tries" in result["msg"], result["msg"]
    assert "127.0.0.1" in result["msg"]
    assert len(accepted) == 3
    # 3 tries of 2 s plus botocore's back-off (under 1, 2 s) and ansible-playbook's own start-up.
    assert elapsed < 40, elapsed
