"""kops' complex-fixture features against moto: TLS API listener, prefix lists, a NodePort range, Calico's
IP-in-IP rule, a transit-gateway egress and additional routes; created once, then nothing changes."""

from __future__ import annotations

import boto3

from tests.integration.test_aws_update import _mutating, _service, _update


def test_tls_listener_calico_and_transit_gateway_converge(aws, tmp_path):
    ec2 = boto3.client("ec2", region_name="us-east-1")
    tgw = ec2.create_transit_gateway(Description="egress")["TransitGateway"]["TransitGatewayId"]
    prefix_list = ec2.create_managed_prefix_list(PrefixListName="office", MaxEntries=2, AddressFamily="IPv4", Entries=[
        {"Cidr": "198.51.100.0/24"}])["PrefixList"]["PrefixListId"]
    certificate = boto3.client("acm", region_name="us-east-1").request_certificate(
        DomainName="api.k8s.example.com")["CertificateArn"]
    service = _service("file://%s" % tmp_path, networking="calico", topology="private",
                       zones=["us-east-1a"])
    cluster, groups = service.read("k8s.example.com")
    spec = cluster["spec"]
    spec["api"]["loadBalancer"].update(sslCertificate=certificate, sslPolicy="ELBSecurityPolicy-2016-08")
    spec["kubernetesApiAccess"] = ["203.0.113.0/24", prefix_list]
    spec["nodePortAccess"] = ["10.20.30.0/24"]
    spec["kubeAPIServer"] = dict(spec.get("kubeAPIServer") or {}, serviceNodePortRange="28000-32767")
    for subnet in spec["subnets"]:
        if subnet["type"] == "Private":
            subnet["egress"] = tgw
            subnet["additionalRoutes"] = [{"cidr": "192.168.1.10/32", "target": tgw}]
    service.execute(service.plan_replace([cluster] + groups))

    counts, plan, _calls = _update(service)
    created = {e.name for e in plan if e.action == "create"}
    assert {"api.k8s.example.com-443", "api.k8s.example.com-8443", "tcp-api-cp",
            "nodeport-tcp-external-to-node-10.20.30.0/24"} <= created
    assert not [e for e in plan if e.kind in ("aws_nat_gateway", "aws_eip")]
    balancers = boto3.client("elbv2", region_name="us-east-1")
    arn = balancers.describe_load_balancers()["LoadBalancers"][0]["LoadBalancerArn"]
    listeners = {l["Port"]: l for l in balancers.describe_listeners(LoadBalancerArn=arn)["Listeners"]}
    assert listeners[443]["Protocol"] == "TLS" and listeners[443]["Certificates"][0]["CertificateArn"] == certificate
    assert listeners[8443]["Protocol"] == "TCP"
    routes = [r for t in ec2.describe_route_tables()["RouteTables"] for r in t["Routes"]
              if r.get("TransitGatewayId") == tgw]
    assert sorted(r["DestinationCidrBlock"] for r in routes) == ["0.0.0.0/0", "192.168.1.10/32"]

    again, plan, calls = _update(service)
    assert set(again) == {"unchanged"}, sorted((e.kind, e.name, e.action) for e in plan if e.action != "unchanged")
    assert _mutating(calls) == {}
