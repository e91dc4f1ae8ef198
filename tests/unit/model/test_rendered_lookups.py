"""What kops looks up in the cloud while it renders Terraform, taken from the cloud facts (updates.resolve_from_facts):
the id of a hosted zone named by name (kops' privatedns fixtures write /hostedzone/<id>), a shared VPC's egress-only
internet gateway (shared_vpc_ipv6's private IPv6 routes)."""

from __future__ import annotations

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils import updates
from ansible_collections.kubeops.kops.plugins.module_utils.completion.cloudfacts import CloudFactsError, StaticCloudFacts
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Ref
from ansible_collections.kubeops.kops.plugins.module_utils.hcl import Expression
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws import ec2, ipv6, route53

FACTS = StaticCloudFacts({"hosted_zones": {"example.com": "Z1", "internal.example.com.": "/hostedzone/Z2"},
                          "egress_only_internet_gateways": {"vpc-1": "eigw-1"}})


def test_a_zone_named_by_name_renders_by_the_id_the_facts_give():
    zone = route53.HostedZone("internal.example.com", dns_name="internal.example.com", private=True)
    updates.resolve_from_facts([zone], FACTS)
    assert Ref(zone).terraform() == "/hostedzone/Z2" and zone.terraform_data() == []


def test_a_zone_the_facts_do_not_know_is_looked_up_by_terraform():
    zone = route53.HostedZone("other.example.org", dns_name="other.example.org")
    updates.resolve_from_facts([zone], FACTS)  # only an exact name counts: example.com is no parent match here
    assert Ref(zone).terraform() == Expression("data.aws_route53_zone.other-example-org.zone_id")
    assert zone.terraform_data() == [("aws_route53_zone", "other-example-org", {"name": "other.example.org"})]


def test_a_zone_given_by_id_stays_as_given():
    zone = route53.HostedZone("Z9", zone_id="Z9")
    updates.resolve_from_facts([zone], FACTS)
    assert Ref(zone).terraform() == "/hostedzone/Z9"


def _shared_gateway(vpc_id):
    vpc = ec2.SharedVPC("cluster", id=vpc_id)
    return ipv6.SharedEgressOnlyInternetGateway("cluster", vpc_id=Ref(vpc))


def test_a_shared_vpcs_egress_only_gateway_renders_by_its_id():
    gateway = _shared_gateway("vpc-1")
    updates.resolve_from_facts([gateway], FACTS)
    assert Ref(gateway).terraform() == "eigw-1"


def test_an_unknown_egress_only_gateway_is_one_line_naming_the_fact():
    gateway = _shared_gateway("vpc-2")
    updates.resolve_from_facts([gateway], FACTS)
    with pytest.raises(ValueError, match=r"shared VPC vpc-2: .*cloud_facts.egress_only_internet_gateways \{vpc-2: "):
        Ref(gateway).terraform()


class UnaskableFacts(StaticCloudFacts):
    """A lookup that cannot ask (no credentials): the render goes on without the fact."""

    def hosted_zone_id(self, name):
        raise CloudFactsError("listing Route53 hosted zones: no credentials")


def test_a_lookup_that_cannot_ask_leaves_terraform_to_look_up():
    zone = route53.HostedZone("example.net", dns_name="example.net")
    updates.resolve_from_facts([zone], UnaskableFacts())
    assert zone.terraform_data()[0][0] == "aws_route53_zone"
