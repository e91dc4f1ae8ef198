"""kops' complex and privatecalico fixtures: TLS API listener, prefix lists, NodePort range, transit-gateway
egress, additional routes and Calico's IP-in-IP rule, body for body."""

from __future__ import annotations

import hcl2
import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws import driver as aws_driver
from ansible_collections.kubeops.kops.plugins.module_utils.engine import terraform

from tests.conformance import kops_fixtures
from tests.unit.model.test_aws_model import _tasks

NAMES = {
    "complex": [
        ("aws_lb_listener", "api-complex-example-com-443"), ("aws_lb_listener", "api-complex-example-com-8443"),
        ("aws_lb_target_group", "tls-complex-example-com-5nursn"),
        ("aws_lb_target_group", "tcp-complex-example-com-vpjolq"),
        ("aws_route", "route-private-us-test-1a-0-0-0-0--0"),
        ("aws_route", "route-us-east-1a-private-192-168-1-10--32"),
        ("aws_security_group_rule", "from-0-0-0-0--0-ingress-tcp-22to22-masters-complex-example-com"),
        ("aws_security_group_rule", "from-0-0-0-0--0-ingress-tcp-443to443-api-elb-complex-example-com"),
        ("aws_security_group_rule", "from-0-0-0-0--0-ingress-tcp-8443to8443-api-elb-complex-example-com"),
        ("aws_security_group_rule", "from-1-1-1-0--24-ingress-tcp-8443to8443-api-elb-complex-example-com"),
        ("aws_security_group_rule", "icmpv6-pmtu-api-elb-pl-44444444"),
        ("aws_security_group_rule", "icmp-pmtu-api-elb-pl-44444444"),
        ("aws_security_group_rule", "nodeport-tcp-external-to-node-1-2-3-4--32"),
        ("aws_security_group_rule", "nodeport-udp-external-to-node-10-20-30-0--24"),
        ("aws_security_group_rule", "tcp-api-cp"),
    ],
    "privatecalico": [
        ("aws_security_group_rule", "from-nodes-privatecalico-example-com-ingress-4-0to0-masters-privatecalico-example-com"),
    ],
}


def _bodies(text):
    found = {}
    for resource in hcl2.loads(text)["resource"]:
        for kind, named in resource.items():
            for name, body in named.items():
                found[(kind.strip('"'), name.strip('"'))] = kops_fixtures.unquoted(body)
    return found


@pytest.mark.parametrize("case", sorted(NAMES))
def test_bodies_match_kops(case):
    _completed, tasks = _tasks(case)
    ours = _bodies(terraform.render(tasks, aws_driver.DRIVER.terraform_providers("us-test-1")))
    theirs = _bodies((kops_fixtures.UPDATE_CLUSTER / case / "kubernetes.tf").read_text())
    for key in NAMES[case]:
        assert ours.get(key) == theirs[key], key


def test_no_nat_gateway_where_the_subnet_names_its_egress():
    _completed, tasks = _tasks("complex")
    assert not [t for t in tasks if t.kind in ("aws_nat_gateway", "aws_eip")]
