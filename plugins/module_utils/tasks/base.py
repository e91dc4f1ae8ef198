# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""What every cloud task is: desired fields, references to other tasks, find/compare/apply/render.

A field that holds a Ref (another task's id, arn, ...) is a dependency: the
engine runs that task first and the Ref resolves to what it found or created.
Terraform output writes the same Ref as an expression (``aws_vpc.x.id``).
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.engine.hcl import Expression
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws.names import terraform_name


class Ref(object):
    __slots__ = ("task", "attribute")

    def __init__(self, task, attribute="id"):
        self.task = task
        self.attribute = attribute

    def resolve(self):
        value = self.task.outputs.get(self.attribute)
        if value is None:
            raise ValueError("%s has no %s yet" % (self.task.key, self.attribute))
        return value

    def terraform(self):
        literal = getattr(self.task, "terraform_value", None)
        if literal is not None:
            return literal(self.attribute)
        return Expression("%s.%s.%s" % (self.task.kind, self.task.terraform_name, self.attribute))

    def __repr__(self):
        return "name:%s" % self.task.name


def walk_refs(value):
    if isinstance(value, Ref):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from walk_refs(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from walk_refs(item)


def map_refs(value, convert):
    """value with every Ref in it replaced by convert(ref); dicts and lists are copied."""
    if isinstance(value, Ref):
        return convert(value)
    if isinstance(value, dict):
        return {k: map_refs(v, convert) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [map_refs(v, convert) for v in value]
    return value


def resolve(value):
    return map_refs(value, lambda ref: ref.resolve())


def to_terraform(value):
    return map_refs(value, Ref.terraform)


class Task(object):
    """One cloud object.  Subclasses set kind and implement find/create/update/render."""

    kind = None
    # Fields compared with the cloud; others (e.g. tags handled separately) are create-only.
    compared = ()

    def __init__(self, task_name, /, **fields):
        # Positional-only: a task may have a field called "name" (security groups do).
        self.name = task_name
        self.fields = fields
        self.outputs = {}
        # Tasks this one must follow without referring to them (e.g. a subnet in an added VPC CIDR).
        self.after = []

    @property
    def key(self):
        return "%s/%s" % (self.kind, self.name)

    @property
    def terraform_name(self):
        return terraform_name(self.name)

    def dependencies(self):
        seen = {task.key: task for task in self.after}
        for ref in walk_refs(self.fields):
            seen[ref.task.key] = ref.task
        return list(seen.values())

    def desired(self):
        return resolve(self.fields)

    def desired_fields(self):
        """Desired fields for a plan, references shown as name:<task> when not yet resolvable."""
        shown = {}
        for field, value in sorted(self.fields.items()):
            try:
                shown[field] = (None, resolve(value))
            except ValueError:
                shown[field] = (None, repr(value))
        return shown

    def compare(self, actual):
        desired = self.desired()
        return {f: (actual.get(f), desired[f]) for f in self.compared
                if f in desired and desired[f] is not None and actual.get(f) != desired[f]}

    def render_terraform(self):
        body = to_terraform(self.fields)
        if self.after:
            body["depends_on"] = [Expression("%s.%s" % (t.kind, t.terraform_name)) for t in self.after]
        return body
