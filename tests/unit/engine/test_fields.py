"""The task contract's Field table: every kind has one, and what render_terraform and create_args derive from it."""

from __future__ import annotations

import importlib
import pkgutil

from ansible_collections.kubeops.kops.plugins.module_utils import tasks as tasks_package
from ansible_collections.kubeops.kops.plugins.module_utils.engine import cloudformation
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Field, Ref, Task, managed_task_classes
from ansible_collections.kubeops.kops.plugins.module_utils.hcl import Block, Expression


def _kind_classes():
    modules = [importlib.import_module(info.name) for info in pkgutil.walk_packages(
        tasks_package.__path__, tasks_package.__name__ + ".")]
    return [value for module in modules for value in vars(module).values()
            if isinstance(value, type) and issubclass(value, Task) and value.kind and value.__module__ == module.__name__]


def test_every_kind_has_a_field_table():
    classes = _kind_classes()
    without = sorted("%s (%s)" % (c.kind, c.__name__) for c in classes if not c.FIELDS)
    assert without == []
    # The 50 kinds direct apply manages and the 5 it only looks up (a shared VPC, subnet, gateways, an image).
    assert len(classes) >= 55 and sum(1 for c in classes if c.shared) >= 5


def test_block_fields_are_written_as_blocks_with_their_nested_blocks():
    class Kind(Task):
        kind = "test_kind"
        FIELDS = (Field("plain"), Field("one", block=True), Field("many", block=True, nested=("inner",)),
                  Field("members", to_terraform=lambda values: [Expression("f(%s)" % v) for v in values]))

    other = Kind("other", plain="x")
    body = Kind("it", plain={"a": 1}, one={"b": 2}, many=[{"inner": {"c": 3}, "d": 4}], unset=None,
                members=[Ref(other, "email")]).render_terraform()
    assert body["plain"] == {"a": 1} and "unset" not in body
    assert isinstance(body["one"], Block) and body["one"].body == {"b": 2}
    (many,) = body["many"]
    assert isinstance(many, Block) and isinstance(many.body["inner"], Block) and many.body["inner"].body == {"c": 3}
    assert body["members"] == ["f(test_kind.other.email)"]


def test_send_if_leaves_a_field_out_of_the_create_call():
    class Rule(Task):
        kind = "test_rule"
        FIELDS = (Field("protocol", api="IpProtocol", to_api=str),
                  Field("from_port", api="FromPort", send_if=lambda d: str(d["protocol"]) != "-1"))

    assert Rule("tcp", protocol="tcp", from_port=22).create_args() == {"IpProtocol": "tcp", "FromPort": 22}
    assert Rule("all", protocol=-1, from_port=0).create_args() == {"IpProtocol": "-1"}


def test_get_att_comes_from_the_kind():
    """The engine writes a Ref as the resource's Ref unless the kind's cloudformation_value says otherwise."""
    vpc = next(c for c in managed_task_classes([importlib.import_module(
        "ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws.ec2")]) if c.kind == "aws_vpc")("main")
    logical = cloudformation.logical_id(vpc)
    assert cloudformation.resolve(Ref(vpc, "cidr_block")) == {"Fn::GetAtt": [logical, "CidrBlock"]}
    assert cloudformation.resolve(Ref(vpc)) == {"Ref": logical}
    assert not hasattr(cloudformation, "GET_ATT")
