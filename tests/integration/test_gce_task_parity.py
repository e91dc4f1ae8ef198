"""Parity of the targets per GCE kind, on our GCE test server (tests/gce_server.py): what Terraform renders for
each object is what direct apply sends to create it and what it then finds, field by field through the kind's
one Field table (the GCE side of tests/integration/test_task_parity.py).

Each mutating call is recorded with the task that made it (GceCloud.call, which insert goes through), and the
no-op re-run records what each task's find() read back.  For every field the Terraform body writes as plain
data (blocks read as their bodies; a reference or an expression such as a file() is not data):

- sent:  a field with an API name is in the create call's body as the table's to_api makes it from the
  Terraform value (found at the top of the body or in the structure carrying the object: an instance
  template's properties, a service account's serviceAccount, a router's NAT entry, a policy's binding);
  links are compared by name, as kops compares them (the API answers full URLs for names);
- found: a field read back is what find() read, in the table's normal form (from_api of to_api).

A kind whose create call or Terraform body is written by hand beside its table, and forgets or changes a field,
fails here.
"""

from __future__ import annotations

import collections
import threading

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.engine import runner
from ansible_collections.kubeops.kops.plugins.module_utils.hcl import Block, Expression
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.gce.base import COMPUTE, last

from tests.integration.test_gce_update import MINIMAL, _apply, _store

MUTATING = ("POST", "PATCH", "PUT")
_current = threading.local()


@pytest.fixture
def recorded(monkeypatch):
    """{task key: {"task", "cloud", "sent": [bodies of its mutating calls], "found": what find() read}}."""
    original = runner._reconcile
    seen = {}

    def record(cloud):
        if getattr(cloud, "_kubeops_recorded", False):
            return
        call = cloud.call

        def recording(api, method, path, body=None, *args, **kwargs):
            task = getattr(_current, "task", None)
            if task is not None and method in MUTATING and not path.endswith(":getIamPolicy"):
                seen[task.key]["sent"].append(body)
            return call(api, method, path, body, *args, **kwargs)
        cloud.call = recording
        cloud._kubeops_recorded = True

    def reconcile(task, cloud, *args, **kwargs):
        record(cloud)
        entry = seen.setdefault(task.key, {"sent": [], "found": None})
        entry.update(task=task, cloud=cloud)
        find = task.find

        def finding(on):
            entry["found"] = find(on)
            return entry["found"]
        task.find = finding
        _current.task = task
        try:
            return original(task, cloud, *args, **kwargs)
        finally:
            _current.task = None

    monkeypatch.setattr(runner, "_reconcile", reconcile)
    return seen


def _data(value):
    """A Terraform value as data: blocks as their bodies."""
    if isinstance(value, Block):
        return _data(value.body)
    if isinstance(value, dict):
        return {k: _data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_data(v) for v in value]
    return value


def _plain(value):
    """Whether a rendered value is data (no reference or expression anywhere in it)."""
    if isinstance(value, Expression):
        return False
    if isinstance(value, dict):
        return all(_plain(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    return value is not None


def _by_name(value):
    """Compute links as the names they end in (the API answers a URL where a name was sent, and back)."""
    if isinstance(value, str) and value.startswith(COMPUTE):
        return last(value)
    if isinstance(value, dict):
        return {k: _by_name(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_by_name(v) for v in value]
    return value


_MISSING = object()


def _sent(body, parameter, wanted):
    """The parameter in a call's body: at the top, else in a nested structure holding it (breadth first), the
    one holding the wanted value if several do (a policy's bindings: the role's own)."""
    if parameter in body:
        return body[parameter]
    holders, queue = [], list(body.values())
    while queue:
        value = queue.pop(0)
        if isinstance(value, dict):
            if parameter in value:
                holders.append(value[parameter])
            queue.extend(value.values())
        elif isinstance(value, list):
            queue.extend(value)
    matching = [held for held in holders if _by_name(held) == _by_name(wanted)]
    return (matching or holders or [_MISSING])[0]


def _check(entries):
    """(mismatches, Counter of sent checks per kind, Counter of found checks per kind)."""
    mismatches, sent_checks, found_checks = [], collections.Counter(), collections.Counter()
    for key, entry in sorted(entries.items()):
        task, cloud = entry["task"], entry["cloud"]
        terraform = task.render_terraform() or {}
        desired = task.desired()
        for field in task.FIELDS:
            value = _data(terraform.get(field.name))
            if not _plain(value):
                continue
            if field.api and entry["sent"]:
                want = field.to_api(value, cloud)
                got = _sent(entry["sent"][0], field.api, want)
                if field.sent(desired):
                    sent_checks[task.kind] += 1
                    if got is _MISSING or _by_name(got) != _by_name(want):
                        mismatches.append("%s %s: terraform %r sends %r, direct sent %r" % (
                            key, field.name, value, want, None if got is _MISSING else got))
                elif got is not _MISSING:
                    mismatches.append("%s %s: the table does not send it, direct sent %r" % (key, field.name, got))
            if field.read:
                found_checks[task.kind] += 1
                want = field.from_api(field.to_api(value, cloud) if field.api else value)
                if entry["found"] is None or _by_name(entry["found"].get(field.name)) != _by_name(want):
                    mismatches.append("%s %s: terraform %r reads back as %r, direct found %r" % (
                        key, field.name, value, want, (entry["found"] or {}).get(field.name)))
    return mismatches, sent_checks, found_checks


PRIVATE_ILB = dict(MINIMAL, cluster_name="minimal-gce-ilb.example.com", topology="private",
                   api_load_balancer_type="internal")


@pytest.mark.parametrize("options", [MINIMAL, PRIVATE_ILB], ids=["public-plb", "private-ilb"])
def test_direct_sends_and_finds_what_terraform_renders(gce, recorded, options):
    service = _store(options)
    name = options["cluster_name"]
    _apply(service, name)
    created = {key: dict(entry) for key, entry in recorded.items()}
    assert all(entry["found"] is None for entry in created.values()), "a fresh server had one of the objects"
    recorded.clear()
    _apply(service, name)  # the no-op re-run: what find() reads back
    entries = {key: dict(created[key], found=entry["found"]) for key, entry in recorded.items()}
    assert set(entries) == set(created)

    mismatches, sent_checks, found_checks = _check(entries)
    assert mismatches == [], "\n".join(mismatches)
    kinds = {entry["task"].kind for entry in entries.values()}
    # Every kind made was checked both ways: each has a plain-valued API field and a field read back.
    assert set(sent_checks) == kinds, sorted(kinds - set(sent_checks))
    assert set(found_checks) == kinds, sorted(kinds - set(found_checks))
    print("%s: %d kinds, %d sent and %d found field checks" % (
        name, len(kinds), sum(sent_checks.values()), sum(found_checks.values())))
    assert sum(sent_checks.values()) >= 60 and sum(found_checks.values()) >= 60, (sent_checks, found_checks)


def test_a_field_the_create_call_changes_is_caught(gce, recorded):
    """The check fails when direct sends something else than the table makes from the Terraform value."""
    service = _store(MINIMAL)
    _apply(service, MINIMAL["cluster_name"])
    entries = {key: entry for key, entry in recorded.items() if entry["task"].kind == "google_compute_network"}
    (entry,) = entries.values()
    entry["sent"][0]["autoCreateSubnetworks"] = not entry["sent"][0]["autoCreateSubnetworks"]
    entry["found"] = entry["task"].find(entry["cloud"])
    mismatches, _sent_checks, _found_checks = _check(entries)
    assert len(mismatches) == 1 and "auto_create_subnetworks" in mismatches[0], mismatches
