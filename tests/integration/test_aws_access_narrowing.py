"""Narrowing kubernetesApiAccess and sshAccess closes every rule derived from the old CIDRs, path-MTU ICMP
included (moto's server): kops keeps "icmp 3-4 from 0.0.0.0/0" and "icmpv6 from ::/0" on the API and bastion
balancers' groups after narrowing (its RemoveExtraRules judges ports only); here 0 world-open rules are left,
and a rule of the same shape that is someone else's (tagged otherwise) stays."""

from __future__ import annotations

import boto3

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import tag_dict

from tests.integration.test_aws_update import _mutating, _service, _update

CLUSTER = "k8s.example.com"
NARROW = "198.51.100.0/24"
WORLD = ("0.0.0.0/0", "::/0")
BALANCER_GROUPS = ("api-elb.%s" % CLUSTER, "bastion-elb.%s" % CLUSTER)
FOREIGN_TAGS = [{"Key": "team", "Value": "network"}]


def _groups(ec2):
    return {g["GroupName"]: g["GroupId"] for g in ec2.describe_security_groups()["SecurityGroups"]}


def _rules(ec2, group_id):
    return ec2.describe_security_group_rules(Filters=[{"Name": "group-id", "Values": [group_id]}])["SecurityGroupRules"]


def _world_open(ec2, groups):
    """(group, protocol, from, to, peer) of every ingress rule open to the world on the balancers' groups."""
    return sorted((name, r["IpProtocol"], r["FromPort"], r["ToPort"], r.get("CidrIpv4") or r.get("CidrIpv6"))
                  for name in BALANCER_GROUPS for r in _rules(ec2, groups[name])
                  if not r["IsEgress"] and (r.get("CidrIpv4") or r.get("CidrIpv6")) in WORLD)


def _narrow(service):
    cluster, groups = service.read(CLUSTER)
    cluster["spec"].update(kubernetesApiAccess=[NARROW], sshAccess=[NARROW])
    service.execute(service.plan_replace([cluster] + groups))


def test_narrowing_access_leaves_no_world_open_rule(aws, tmp_path):
    ec2 = boto3.client("ec2", region_name="us-east-1")
    service = _service("file://%s" % tmp_path, topology="private", bastion=True, api_load_balancer_type="public")
    _update(service)
    groups = _groups(ec2)
    before = _world_open(ec2, groups)
    icmp = [r for r in before if r[1] in ("icmp", "icmpv6")]
    assert icmp == [("api-elb.%s" % CLUSTER, "icmp", 3, 4, "0.0.0.0/0"), ("api-elb.%s" % CLUSTER, "icmpv6", -1, -1, "::/0"),
                    ("bastion-elb.%s" % CLUSTER, "icmp", 3, 4, "0.0.0.0/0"),
                    ("bastion-elb.%s" % CLUSTER, "icmpv6", -1, -1, "::/0")]
    # Ours are tagged as kops tags them: the group's tags and the rule's name.
    api_rules = _rules(ec2, groups["api-elb.%s" % CLUSTER])
    pmtu = next(r for r in api_rules if r["IpProtocol"] == "icmp" and r.get("CidrIpv4") == "0.0.0.0/0")
    assert tag_dict(pmtu["Tags"]) == {"KubernetesCluster": CLUSTER, "kubernetes.io/cluster/%s" % CLUSTER: "owned",
                                      "Name": "icmp-pmtu-api-elb-0.0.0.0/0"}
    # Someone else's rule of the same shape on the same group (tagged as theirs) is not ours to close.
    ec2.authorize_security_group_ingress(
        GroupId=groups["api-elb.%s" % CLUSTER], IpPermissions=[{
            "IpProtocol": "icmp", "FromPort": 3, "ToPort": 4, "IpRanges": [{"CidrIp": "192.0.2.0/24"}]}],
        TagSpecifications=[{"ResourceType": "security-group-rule", "Tags": FOREIGN_TAGS}])

    _narrow(service)
    _dry, dry_plan, dry_calls = _update(service, dry_run=True)
    assert _mutating(dry_calls) == {}
    pmtu_deletions = sorted(e.name for e in dry_plan if e.action == "delete" and "path MTU" in e.name)
    assert pmtu_deletions == ["%s:ingress %s from %s" % (group, what, peer) for group in BALANCER_GROUPS
                              for what, peer in (("icmp 3-4 (path MTU)", "0.0.0.0/0"), ("icmpv6 -1--1 (path MTU)", "::/0"))]

    done, _plan, calls = _update(service)
    assert calls["RevokeSecurityGroupIngress"] == done["delete"]
    assert _world_open(ec2, groups) == []
    after = {name: sorted((r["IpProtocol"], r["FromPort"], r["ToPort"], r.get("CidrIpv4") or r.get("CidrIpv6"))
                          for r in _rules(ec2, groups[name]) if not r["IsEgress"] and r.get("CidrIpv4") == NARROW)
             for name in BALANCER_GROUPS}
    assert after["api-elb.%s" % CLUSTER] == [("icmp", 3, 4, NARROW), ("tcp", 443, 443, NARROW)]
    assert after["bastion-elb.%s" % CLUSTER] == [("icmp", 3, 4, NARROW), ("tcp", 22, 22, NARROW)]
    foreign = [r for r in _rules(ec2, groups["api-elb.%s" % CLUSTER]) if r.get("CidrIpv4") == "192.0.2.0/24"]
    assert len(foreign) == 1 and tag_dict(foreign[0]["Tags"]) == {"team": "network"}

    again, _plan, calls = _update(service)
    assert set(again) == {"unchanged"} and _mutating(calls) == {}
