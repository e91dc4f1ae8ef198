"""cluster_delete / delete_cluster.yml against moto's server: two clusters in one account, one deleted.

What is left is counted with plain boto3 calls by the clusters' tags (not with the code under test), so a
kind the deletion forgets to find shows up as left over.
"""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import boto3
import pytest

from ansible_collections.kubeops.kops.plugins.module_utils import clusters, deletion, updates
from ansible_collections.kubeops.kops.plugins.module_utils.completion import cloudfacts
from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws import deletion as aws_deletion
from ansible_collections.kubeops.kops.plugins.modules import cluster as cluster_module
from ansible_collections.kubeops.kops.plugins.modules import cluster_delete as cluster_delete_module

from tests.integration.conftest import REPO, assert_kops_table, task_results
from tests.integration.test_aws_update import ADMIN_KEY, MOTO_AMI, READ_ONLY, CountingCloud
from tests.unit.modules.conftest import run_module  # noqa: F401 pylint: disable=unused-import

A, B = "a.example.com", "b.example.com"
PRIVATE_HA = {"topology": "private", "bastion": True, "zones": ["us-east-1a", "us-east-1b", "us-east-1c"],
              "control_plane_zones": ["us-east-1a", "us-east-1b", "us-east-1c"]}


def create(store, name, facts=None, **options):
    service = clusters.ClusterService(store, facts=cloudfacts.StaticCloudFacts(facts) if facts else None)
    base = {"cluster_name": name, "cloud_provider": "aws", "networking": "cni", "kubernetes_version": "v1.34.2",
            "zones": ["us-east-1a"], "image": MOTO_AMI}
    base.update(options)
    service.execute(service.plan_create(base))
    updates.apply_direct(service, name, False, ssh_public_key=ADMIN_KEY)
    return service


def counting(calls):
    def factory(name, region):
        cloud = CountingCloud(name, region)
        cloud.calls = calls
        return cloud
    return factory


def mutating(calls):
    return {op: n for op, n in calls.items() if not op.startswith(READ_ONLY)}


def _tags(items):
    return {t["Key"]: t["Value"] for t in items or []}


def _mine(name, tags):
    return tags.get("KubernetesCluster") == name or ("kubernetes.io/cluster/%s" % name) in tags


def inventory(name):
    """{(kind, id)} of every object tagged for cluster `name`, listed kind by kind with boto3."""
    ec2 = boto3.client("ec2", region_name="us-east-1")
    found = set()
    tagged = [{"Name": "tag:KubernetesCluster", "Values": [name]}]
    for operation, key, id_key in (("describe_vpcs", "Vpcs", "VpcId"), ("describe_subnets", "Subnets", "SubnetId"),
                                   ("describe_security_groups", "SecurityGroups", "GroupId"),
                                   ("describe_route_tables", "RouteTables", "RouteTableId"),
                                   ("describe_internet_gateways", "InternetGateways", "InternetGatewayId"),
                                   ("describe_dhcp_options", "DhcpOptions", "DhcpOptionsId"),
                                   ("describe_addresses", "Addresses", "AllocationId"),
                                   ("describe_volumes", "Volumes", "VolumeId"),
                                   ("describe_key_pairs", "KeyPairs", "KeyPairId"),
                                   ("describe_launch_templates", "LaunchTemplates", "LaunchTemplateId"),
                                   ("describe_network_interfaces", "NetworkInterfaces", "NetworkInterfaceId"),
                                   ("describe_egress_only_internet_gateways", "EgressOnlyInternetGateways",
                                    "EgressOnlyInternetGatewayId")):
        found |= {(operation, item[id_key]) for item in getattr(ec2, operation)(Filters=tagged)[key]}
    # moto ignores tag filters on NAT gateways: their tags decide.
    found |= {("nat", n["NatGatewayId"]) for n in ec2.describe_nat_gateways(Filters=tagged)["NatGateways"]
              if n["State"] not in ("deleted", "deleting") and _mine(name, _tags(n.get("Tags")))}
    found |= {("instance", i["InstanceId"]) for r in ec2.describe_instances(Filters=tagged)["Reservations"]
              for i in r["Instances"] if i["State"]["Name"] != "terminated"}
    autoscaling = boto3.client("autoscaling", region_name="us-east-1")
    found |= {("asg", g["AutoScalingGroupName"]) for g in autoscaling.describe_auto_scaling_groups()["AutoScalingGroups"]
              if _mine(name, {t["Key"]: t["Value"] for t in g["Tags"]})}
    elbv2 = boto3.client("elbv2", region_name="us-east-1")
    for operation, key, arn in (("describe_load_balancers", "LoadBalancers", "LoadBalancerArn"),
                                ("describe_target_groups", "TargetGroups", "TargetGroupArn")):
        for item in getattr(elbv2, operation)()[key]:
            if _mine(name, _tags(elbv2.describe_tags(ResourceArns=[item[arn]])["TagDescriptions"][0]["Tags"])):
                found.add((operation, item[arn]))
    iam = boto3.client("iam", region_name="us-east-1")
    found |= {("role", r["RoleName"]) for r in iam.list_roles()["Roles"]
              if _mine(name, _tags(iam.list_role_tags(RoleName=r["RoleName"])["Tags"]))}
    found |= {("profile", p["InstanceProfileName"]) for p in iam.list_instance_profiles()["InstanceProfiles"]
              if _mine(name, _tags(iam.get_instance_profile(InstanceProfileName=p["InstanceProfileName"])[
                  "InstanceProfile"].get("Tags")))}
    sqs = boto3.client("sqs", region_name="us-east-1")
    found |= {("sqs", url) for url in sqs.list_queues().get("QueueUrls") or []
              if _mine(name, sqs.list_queue_tags(QueueUrl=url).get("Tags") or {})}
    events = boto3.client("events", region_name="us-east-1")
    found |= {("rule", r["Name"]) for r in events.list_rules()["Rules"]
              if _mine(name, _tags(events.list_tags_for_resource(ResourceARN=r["Arn"])["Tags"]))}
    route53 = boto3.client("route53", region_name="us-east-1")
    for zone in route53.list_hosted_zones()["HostedZones"]:
        for record in route53.list_resource_record_sets(HostedZoneId=zone["Id"])["ResourceRecordSets"]:
            if record["Name"].rstrip(".").endswith("." + name):
                found.add(("record", record["Name"] + record["Type"]))
    return found


@pytest.fixture
def two_clusters(aws, tmp_path):
    """a.example.com (public, API NLB + DNS records in example.com) and b.example.com (private HA, NAT, bastion,
    DNS records in the same zone), one store."""
    boto3.client("route53", region_name="us-east-1").create_hosted_zone(Name="example.com", CallerReference="t")
    store = "file://%s" % (tmp_path / "state")
    dns = {"dns_zone": "example.com", "api_load_balancer_type": "public"}
    create(store, A, **dns)
    service = create(store, B, **dict(PRIVATE_HA, **dns))
    return service


def test_delete_one_of_two_clusters_leaves_the_other_untouched(two_clusters, tmp_path):
    service = two_clusters
    before_a, before_b = inventory(A), inventory(B)
    assert len(before_b) > 60 and any(k == "record" for k, _id in before_b) and any(k == "nat" for k, _id in before_b)
    assert any(k == "record" for k, _id in before_a)

    calls = collections.Counter()
    listed = deletion.delete_cluster(service, B, cloud_factory=counting(calls))
    assert mutating(calls) == {} and listed.store_exists
    kinds = collections.Counter(r.kind for r in listed.resources)
    assert kinds["nat-gateway"] == 3 and kinds["route53-record"] == 4 and kinds["autoscaling-group"] == 7
    assert all(not r.name.endswith(A) for r in listed.resources)

    calls.clear()
    started = time.monotonic()
    outcome = deletion.delete_cluster(service, B, yes=True, interval=0, cloud_factory=counting(calls))
    elapsed = time.monotonic() - started
    assert {o["result"] for o in outcome.objects} <= {"deleted", "already gone"}
    assert len(outcome.objects) == len(listed.resources)
    assert outcome.store_deleted and service.store.list(B + "/") == []
    assert inventory(B) == set()
    assert inventory(A) == before_a
    assert service.read(A)[0] is not None
    print("\ndeleted %s: %d objects, %d API requests (%d mutating), %.1f s"
          % (B, len(outcome.objects), sum(calls.values()), sum(mutating(calls).values()), elapsed))

    # The same again: nothing left, nothing changed.
    calls.clear()
    again = deletion.delete_cluster(service, B, yes=True, region="us-east-1", interval=0, cloud_factory=counting(calls))
    assert again.objects == [] and not again.anything and mutating(calls) == {}


def test_check_mode_and_no_yes_change_nothing(two_clusters, run_module, tmp_path):  # noqa: F811
    store = two_clusters.store.url("").rstrip("/")
    before = inventory(A)
    plain = run_module(cluster_delete_module, state_store=store, cluster_name=A)
    check = run_module(cluster_delete_module, check_mode=True, state_store=store, cluster_name=A, diff=True, yes=True)
    assert plain["changed"] is False and "yes: true" in plain["msg"]
    assert check["changed"] is True and check["lines"] == plain["lines"] and check["diff"]["after"] == ""
    assert {o["result"] for o in check["objects"]} == {"delete"}
    assert inventory(A) == before and two_clusters.read(A)[0] is not None


def test_cluster_absent_refuses_while_the_cloud_holds_it(two_clusters, run_module):  # noqa: F811
    store = two_clusters.store.url("").rstrip("/")
    refused = run_module(cluster_module, state_store=store, name=A, state="absent")
    assert refused["failed"] is True and "delete_cluster.yml" in refused["msg"] and "force: true" in refused["msg"]
    assert two_clusters.read(A)[0] is not None
    # force: only the store goes (kops delete cluster --unregister); the cloud objects stay.
    before = inventory(A)
    unregistered = run_module(cluster_module, state_store=store, name=A, state="absent", force=True)
    two_clusters.store.refresh()  # this test's service outlives the module's run: read the store anew
    assert unregistered["changed"] is True and two_clusters.read(A)[0] is None and inventory(A) == before
    # The store is gone: the name and the region still find the tagged objects.
    finished = run_module(cluster_delete_module, state_store=store, cluster_name=A, region="us-east-1", yes=True,
                          interval=0)
    assert finished["changed"] is True and inventory(A) == set()
    assert inventory(B)


def test_shared_vpc_survives_and_loses_only_the_cluster_tags(aws, tmp_path):
    ec2 = boto3.client("ec2", region_name="us-east-1")
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    gateway = ec2.create_internet_gateway()["InternetGateway"]["InternetGatewayId"]
    ec2.attach_internet_gateway(InternetGatewayId=gateway, VpcId=vpc)
    # As kops tags a BYO VPC it uses: the cluster's "shared" tag beside the user's own.
    ec2.create_tags(Resources=[vpc], Tags=[
        {"Key": "kubernetes.io/cluster/%s" % A, "Value": "shared"}, {"Key": "team", "Value": "platform"}])
    service = create("file://%s" % tmp_path, A, facts={"vpcs": {vpc: "10.0.0.0/16"}}, network_id=vpc)
    outcome = deletion.delete_cluster(service, A, yes=True, interval=0)
    shared = [o for o in outcome.objects if o["shared"]]
    assert [(o["kind"], o["id"], o["result"]) for o in shared] == [("vpc", vpc, "untagged")]
    assert _tags(ec2.describe_vpcs(VpcIds=[vpc])["Vpcs"][0]["Tags"]) == {"team": "platform"}
    attached = ec2.describe_internet_gateways(InternetGatewayIds=[gateway])["InternetGateways"][0]["Attachments"]
    assert [a["VpcId"] for a in attached] == [vpc]
    assert inventory(A) == set()


def test_a_foreign_holder_is_named_not_looped_on(aws, tmp_path):
    service = create("file://%s" % tmp_path, A)
    ec2 = boto3.client("ec2", region_name="us-east-1")
    vpc = ec2.describe_vpcs(Filters=[{"Name": "tag:KubernetesCluster", "Values": [A]}])["Vpcs"][0]["VpcId"]
    other = ec2.create_vpc(CidrBlock="10.9.0.0/16")["Vpc"]["VpcId"]
    peering = ec2.create_vpc_peering_connection(VpcId=vpc, PeerVpcId=other)["VpcPeeringConnection"]
    subnet = ec2.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [vpc]}])["Subnets"][0]["SubnetId"]
    foreign = ec2.create_network_interface(SubnetId=subnet, Description="someone's appliance")["NetworkInterface"]
    started = time.monotonic()
    with pytest.raises(deletion.DeletionError) as raised:
        deletion.delete_cluster(service, A, yes=True, interval=0, timeout=600)
    assert time.monotonic() - started < 60  # detected, not retried until the timeout
    message = str(raised.value)
    assert peering["VpcPeeringConnectionId"] in message and foreign["NetworkInterfaceId"] in message
    results = {(o["kind"], o["id"]): o for o in raised.value.objects}
    assert results[("vpc", vpc)]["result"] == "blocked" and results[("subnet", subnet)]["result"] == "blocked"
    # Everything nothing holds is gone; the store is kept for the run that finishes the job.
    assert {o["result"] for o in raised.value.objects} <= {"deleted", "already gone", "blocked"}
    assert service.read(A)[0] is not None
    left = {kind for kind, _id in inventory(A)}
    assert left <= {"describe_vpcs", "describe_subnets", "describe_route_tables", "describe_dhcp_options"}, left


INTERRUPTED = textwrap.dedent("""
    import sys
    from ansible_collections.kubeops.kops.plugins.module_utils import clusters, deletion
    from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws import deletion as aws
    done = []
    real = aws.Ec2Kind.delete_one

    def slow(self, cloud, resource):  # one EC2 deletion at a time, then a pause: time to be killed mid-way
        result = real(self, cloud, resource)
        done.append(resource.key)
        print(resource.key, flush=True)
        import time
        time.sleep(0.3)
        return result

    aws.Ec2Kind.delete_one = slow
    deletion.delete_cluster(clusters.ClusterService(sys.argv[1]), sys.argv[2], yes=True, interval=0)
""")


def test_an_interrupted_delete_finishes_on_rerun(aws, tmp_path):
    store = "file://%s" % (tmp_path / "state")
    service = create(store, B, **PRIVATE_HA)
    env = dict(os.environ)
    proc = subprocess.Popen([sys.executable, "-c", INTERRUPTED, store, B], env=env, stdout=subprocess.PIPE, text=True)
    deleted = []
    for line in proc.stdout:
        deleted.append(line.strip())
        if len(deleted) == 8:
            proc.send_signal(signal.SIGKILL)
            break
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    left = inventory(B)
    assert left and service.read(B)[0] is not None  # killed half-way: objects and the store are still there
    outcome = deletion.delete_cluster(service, B, yes=True, interval=0)
    assert outcome.store_deleted and inventory(B) == set()


def test_playbook_lists_then_deletes(two_clusters, playbook, tmp_path):
    store = two_clusters.store.url("").rstrip("/")
    env_vars = ["-e", "cluster_name=%s" % A, "-e", "state_store=%s" % store]
    rc, listed = playbook(REPO / "playbooks" / "delete_cluster.yml", *env_vars, cwd=tmp_path)
    assert rc == 0, json.dumps(listed)[:2000]
    result = task_results(listed, "Delete cluster %s" % A)
    assert result["changed"] is False and len(result["lines"]) > 20 and inventory(A)
    # kops' TYPE NAME ID table, a header and its columns aligned, then what to do next.
    report = task_results(listed, "Report")["msg"]
    rows = assert_kops_table(report, ["TYPE", "NAME", "ID"])
    assert sorted((o["kind"], o["name"], o["id"]) for o in result["objects"]) == [tuple(row) for row in rows]
    assert report[len(rows) + 1:] == ["", "%d cloud object(s) listed; set yes: true to delete them and the cluster"
                                      % len(rows)]
    rc, wrong = playbook(REPO / "playbooks" / "delete_cluster.yml", *env_vars, "-e", "confirm_cluster_name=%s" % B,
                         cwd=tmp_path)
    assert rc != 0 and inventory(A)
    rc, deleted = playbook(REPO / "playbooks" / "delete_cluster.yml", *env_vars, "-e", "confirm_cluster_name=%s" % A,
                           cwd=tmp_path)
    assert rc == 0, json.dumps(deleted)[:2000]
    assert task_results(deleted, "Delete cluster %s" % A)["store_deleted"] is True
    assert inventory(A) == set() and inventory(B)
    # The same delete again (issue 31): the cluster is not found, said so; not "region is needed".
    rc, again = playbook(REPO / "playbooks" / "delete_cluster.yml", *env_vars, "-e", "confirm_cluster_name=%s" % A,
                         cwd=tmp_path)
    result = task_results(again, "Delete cluster %s" % A)
    assert rc == 0 and result["changed"] is False and result["store_deleted"] is False, result
    assert result["msg"] == ("cluster %s not found in %s: nothing to delete (to look for cloud objects it may have "
                             "left, give region)" % (A, store)), result["msg"]
    assert inventory(B)
    # With a region to look in: kops' answer when nothing of the cluster is left.
    rc, again = playbook(REPO / "playbooks" / "delete_cluster.yml", *env_vars, "-e", "region=us-east-1", cwd=tmp_path)
    assert rc == 0 and task_results(again, "Report")["msg"][0] == "No cloud resources to delete", again


def test_gce_without_credentials_says_what_to_do(tmp_path):
    """GCE deletion itself: tests/unit/cloud/test_gce_deletion.py."""
    service = clusters.ClusterService("file://%s" % tmp_path)
    service.execute(service.plan_create({"cluster_name": "g.example.com", "cloud_provider": "gce", "zones": ["us-central1-a"],
                                         "networking": "cni", "kubernetes_version": "v1.34.2", "project": "p"}))
    with pytest.raises(ValueError, match="set GOOGLE_APPLICATION_CREDENTIALS"):
        deletion.delete_cluster(service, "g.example.com")


def test_dns_records_are_taken_as_kops_names_them():
    take = aws_deletion.cluster_record
    assert take(A, {"Name": "api.a.example.com.", "Type": "A"})
    assert take(A, {"Name": "api.internal.a.example.com.", "Type": "AAAA"})
    assert take(A, {"Name": "kops-controller.internal.a.example.com.", "Type": "A"})
    assert take(A, {"Name": "aaaa-api.a.example.com.", "Type": "TXT"})
    assert take(A, {"Name": "etcd-a.a.example.com.", "Type": "A"})
    assert not take(A, {"Name": "api.b.example.com.", "Type": "A"})
    assert not take(A, {"Name": "www.a.example.com.", "Type": "A"})
    assert not take(A, {"Name": "api.a.example.com.", "Type": "CNAME"})
    # kops' prefix match would take etcd-x.b.<c>: a record of cluster b.<c>'s etcd, not ours.
    assert not take("example.com", {"Name": "etcd-x.b.example.com.", "Type": "A"})


GATED = textwrap.dedent("""
    import os, sys, time
    from ansible_collections.kubeops.kops.plugins.module_utils import clusters, deletion
    from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws import deletion as aws
    store, name, gate, after = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    done = []
    real = aws.Ec2Kind.delete_one

    def gated(self, cloud, resource):  # after `after` EC2 deletions, wait for the test to open the gate
        result = real(self, cloud, resource)
        done.append(resource.key)
        print(resource.key, flush=True)
        while len(done) >= after and not os.path.exists(gate):
            time.sleep(0.05)
        return result

    aws.Ec2Kind.delete_one = gated
    service = clusters.ClusterService(store)
    service.store.owner = "cluster_delete"
    outcome = deletion.delete_cluster(service, name, yes=True, interval=0)
    print("store_deleted=%s" % outcome.store_deleted, flush=True)
""")


def test_an_update_during_a_delete_is_refused_and_recreates_nothing(aws, run_module, tmp_path, capsys):  # noqa: F811
    """Issue 22's race probe: the delete holds the cluster from its first call to its last.  The delete (another
    process) is held still after its first EC2 deletions; cluster_update, rolling_update and the cluster module's
    replace run meanwhile through the modules and are refused naming the delete; nothing is recreated, and the
    delete then finishes."""
    from ansible_collections.kubeops.kops.plugins.modules import cluster_update as cluster_update_module
    from ansible_collections.kubeops.kops.plugins.modules import rolling_update as rolling_update_module

    store = "file://%s" % (tmp_path / "state")
    service = create(store, B, **PRIVATE_HA)
    before = inventory(B)
    gate = tmp_path / "gate"
    proc = subprocess.Popen([sys.executable, "-c", GATED, store, B, str(gate), "3"], env=dict(os.environ),
                            stdout=subprocess.PIPE, text=True)
    try:
        for count, _line in enumerate(proc.stdout, 1):
            if count == 3:
                break
        during = inventory(B)
        update = run_module(cluster_update_module, state_store=store, cluster_name=B)
        recreated = inventory(B) - during
        with capsys.disabled():
            print("\nupdate during a delete: failed=%s, %d object(s) recreated (%d of %d left when it started): %s"
                  % (update.get("failed", False), len(recreated), len(during), len(before), update.get("msg")))
        rolling = run_module(rolling_update_module, state_store=store, cluster_name=B, cloud_only=True, force=True)
        documents = [service.read(B)[0]]
        replace = run_module(cluster_module, state_store=store, definition=documents)
        after = inventory(B)
    finally:
        gate.touch()
        rest = proc.stdout.read()
        proc.wait(timeout=600)
    assert recreated == set() and after <= during
    for result in (update, rolling, replace):
        message = result.get("msg", "")
        assert result.get("failed") is True, result
        assert "being deleted" in message and "pid %d" % proc.pid in message and os.uname().nodename in message, message
        assert "\n" not in message
    assert proc.returncode == 0 and "store_deleted=True" in rest, rest
    assert inventory(B) == set() and clusters.ClusterService(store).store.list(B + "/") == []


def test_a_delete_finishes_in_one_pass_and_empties_the_store_in_batches(aws, tmp_path, capsys):
    """Issue 22 item 5: AWS drops a deleted subnet's route-table association (tests/moto_server.py makes moto do
    so too); the route table's own subnets are gone before it, so only other associations are removed and an
    association already gone counts as done: one run deletes everything.  The s3:// store is emptied with
    DeleteObjects (1,000 keys a request), the config last."""
    boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="kops-delete")
    store = "s3://kops-delete/state"
    create(store, B, **PRIVATE_HA)
    service = clusters.ClusterService(store)
    stored = len(service.store.list(B + "/"))
    store_requests = collections.Counter()
    service.store.client.meta.events.register("before-call.s3.*", lambda model, **kwargs: store_requests.update(
        [model.name]))
    calls = collections.Counter()
    runs, error = 0, None
    while runs < 3:
        runs += 1
        try:
            deletion.delete_cluster(service, B, yes=True, interval=0, cloud_factory=counting(calls))
            break
        except deletion.DeletionError as exc:
            error = error or str(exc)
            service = clusters.ClusterService(store)
            service.store.client.meta.events.register("before-call.s3.*", lambda model, **kwargs: store_requests.update(
                [model.name]))
    with capsys.disabled():
        print("\ndelete of %s (%d store objects): %d run(s); cloud %d requests (%d mutating); store %d requests %s%s"
              % (B, stored, runs, sum(calls.values()), sum(mutating(calls).values()), sum(store_requests.values()),
                 dict(store_requests), "; first run: %s" % error[:300] if error else ""))
    assert runs == 1 and error is None
    assert inventory(B) == set() and clusters.ClusterService(store).store.list(B + "/") == []
    # Listing, lease PUT/DELETE, config GET, one DeleteObjects, the config's DeleteObject.
    assert store_requests["DeleteObjects"] == 1 and store_requests["DeleteObject"] == 2, store_requests
