"""Parity of the targets per task kind: what the direct create sends to the cloud (recorded on moto) equals what
Terraform and CloudFormation render for the same object, field by field, through the kind's one Field table.

Each create call is recorded with the task that made it (botocore's before-parameter-build event sees the
arguments as the code passed them); for every field the table gives an API parameter, a Terraform value that
is plain data (not a reference to another object) must be what was sent, after the field's to_api, and the
CloudFormation property must be the same value, after its to_cfn; the Terraform body writes the field as it
is wherever it writes it as plain data.  A kind that builds its create call by hand
and forgets or changes a field (an etcd volume's KMS key, once) fails here.
"""

from __future__ import annotations

import collections
import threading

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils import updates
from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import AwsCloud
from ansible_collections.kubeops.kops.plugins.module_utils.engine import runner
from ansible_collections.kubeops.kops.plugins.module_utils.hcl import Block, Expression
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import walk_refs

from tests.integration.test_aws_update import ADMIN_KEY, _service

CREATES = ("Create", "Allocate", "Put", "Import", "Authorize", "Associate", "Attach")
_current = threading.local()


class RecordingCloud(AwsCloud):
    """Records each mutating call's arguments under the task that is running it."""

    calls = None

    def client(self, service):
        return self._recorded(AwsCloud.client(self, service))

    def single_attempt_client(self, service):
        return self._recorded(AwsCloud.single_attempt_client(self, service))

    def _recorded(self, api):
        if not getattr(api, "_kubeops_recorded", False):
            api.meta.events.register("before-parameter-build.*.*", self._record)
            api._kubeops_recorded = True
        return api

    def _record(self, params, model, **kwargs):
        task = getattr(_current, "task", None)
        if task is not None and model.name.startswith(CREATES):
            self.calls[task.key].append((model.name, dict(params)))


@pytest.fixture
def reconciled(monkeypatch):
    """{task key: task} of every task the runner reconciles (the create calls are recorded under it)."""
    original = runner._reconcile
    seen = {}

    def reconcile(task, *args, **kwargs):
        seen[task.key] = task
        _current.task = task
        try:
            return original(task, *args, **kwargs)
        finally:
            _current.task = None

    monkeypatch.setattr(runner, "_reconcile", reconcile)
    return seen


def _sent(arguments, parameter):
    """A parameter of a create call: inside the structure that carries the object's data (a launch template's
    LaunchTemplateData), else at the top, else in the one item of a list carrying it (a security group rule's
    IpPermissions), else as a Key of a key/values list (DHCP options' DhcpConfigurations, one value written
    bare)."""
    for value in arguments.values():
        if isinstance(value, dict) and parameter in value:
            return value[parameter]
    if parameter in arguments:
        return arguments[parameter]
    for value in arguments.values():
        if isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict) and parameter in value[0]:
            return value[0][parameter]
    for value in arguments.values():
        for item in value if isinstance(value, list) else []:
            if isinstance(item, dict) and item.get("Key") == parameter and "Values" in item:
                values = item["Values"]
                return values[0] if len(values) == 1 and parameter != "domain-name-servers" else values
    return None


def _comparable(rendered):
    """A rendered value written as plain data (Terraform may write a field as a block, a file() or a reference)."""
    return rendered is not None and _plain(rendered) and not _has_block(rendered)


def _has_block(value):
    if isinstance(value, Block):
        return True
    if isinstance(value, dict):
        return any(_has_block(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_block(v) for v in value)
    return False


def _plain(value):
    """Whether a Terraform value is data the create call must carry as is (no reference, no expression)."""
    return not list(walk_refs(value)) and not isinstance(value, Expression) and value is not None


@pytest.mark.parametrize("options", [
    {"topology": "private", "bastion": True, "zones": ["us-east-1a", "us-east-1b", "us-east-1c"],
     "control_plane_zones": ["us-east-1a", "us-east-1b", "us-east-1c"]},
    {"zones": ["us-east-1a"]},
], ids=["private-ha-bastion", "public-single"])
def test_direct_create_sends_what_terraform_and_cloudformation_render(aws, tmp_path, reconciled, options):
    service = _service("file://%s" % tmp_path, **options)
    calls = collections.defaultdict(list)
    built = reconciled

    def factory(name, region):
        cloud = RecordingCloud(name, region)
        cloud.calls = calls
        return cloud

    updates.apply_direct(service, "k8s.example.com", False, factory, ssh_public_key=ADMIN_KEY)

    checked = collections.Counter()
    mismatches = []
    for key, task in sorted(built.items()):
        if task.shared or not task.FIELDS or key not in calls:
            continue
        sent = calls[key][0][1]
        terraform = task.render_terraform() or {}
        try:
            cloudformation = task.render_cloudformation() or {}
        except ValueError:
            cloudformation = {}  # a kind the cloudformation target refuses, with a message
        desired = task.desired()
        for field in task.FIELDS:
            value = task.fields.get(field.name)
            if not field.api or not _plain(value):
                continue
            checked[task.kind] += 1
            if not field.sent(desired):
                # Not sent for these fields (a rule's ports for all protocols): the call must not carry it.
                if _sent(sent, field.api) is not None:
                    mismatches.append("%s %s: not to be sent, sent %r" % (key, field.name, _sent(sent, field.api)))
            elif field.to_api(value) != _sent(sent, field.api):
                mismatches.append("%s %s: to send %r, sent %r" % (
                    key, field.name, field.to_api(value), _sent(sent, field.api)))
            rendered = terraform.get(field.name)
            if _comparable(rendered) and rendered != value:
                mismatches.append("%s %s: terraform %r, fields %r" % (key, field.name, rendered, value))
            if field.cfn and _comparable(cloudformation.get(field.cfn)) and cloudformation[field.cfn] != field.to_cfn(value):
                mismatches.append("%s %s: cloudformation %r, rendered %r" % (
                    key, field.name, cloudformation[field.cfn], field.to_cfn(value)))
    assert mismatches == [], "\n".join(mismatches)
    # Every kind the cluster created with a plain-valued API field was checked (the others' API fields all hold
    # references to other objects: an internet gateway's VPC, a route table's, a NAT gateway's subnet).
    checkable = {built[key].kind for key in calls if key in built and not built[key].shared and any(
        f.api and _plain(built[key].fields.get(f.name)) for f in built[key].FIELDS)}
    assert checkable and checkable == set(checked), sorted(checkable ^ set(checked))
    print("%s: %d fields of %d kinds checked" % (options, sum(checked.values()), len(checked)))
    assert sum(checked.values()) >= 50, checked
    # Security group rules, whose create call was written by hand before they had a table, are among them (an
    # event target's fields are both references).
    assert "aws_security_group_rule" in checked, sorted(checked)
