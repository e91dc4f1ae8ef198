# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The task contract: one class per cloud object kind (kops' fi.Task).

A task holds the desired fields of one object under their Terraform names.
A field that holds a Ref (another task's id, arn, ...) is a dependency: the
engine runs that task first and the Ref resolves to what it found or created;
Terraform writes the same Ref as an expression (``aws_vpc.x.id``).

Per kind, one table of Fields says for each field what the create call
sends, where the describe result holds it, whether it is compared and may be
changed in place, and what CloudFormation calls it.  The create arguments, the
actual state read back, the comparison, the Terraform body and the
CloudFormation properties all derive from that table, so the targets cannot
drift apart (tests/integration/test_task_parity.py and test_gce_task_parity.py check it per kind).

The hooks a kind implements (the engine calls nothing else):

- ``find(cloud)``: the actual object as {field: value} (sets ``outputs["id"]``), or None.
- ``create(cloud)``: make it (sets ``outputs["id"]``).
- ``update(cloud, actual, changes)``: change what differs; changes is {field: (actual, desired)}.
- ``orphans(cloud, wanted)`` (classmethod): Deletions of this kind's objects that the
  cluster owns and no wanted task asks for any more.
- ``render_terraform()`` / ``render_cloudformation()``: the resource body, or None
  for objects referred to but not managed (shared ones, lookups).
- ``terraform_value(attribute)`` / ``cloudformation_value(attribute)``: how a Ref to
  this task is written when it is not ``<kind>.<name>.<attribute>`` (None: the default).
- ``terraform_data()``, ``terraform_files()``, ``terraform_outputs()``,
  ``extra_cloudformation()``: data sources, data/ files, outputs and extra
  resources the kind adds to the rendered file.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.hcl import Block, Expression, terraform_name
from ansible_collections.kubeops.kops.plugins.module_utils.errors import TaskError


class Ref(object):
    __slots__ = ("task", "attribute")

    def __init__(self, task, attribute="id"):
        self.task = task
        self.attribute = attribute

    def resolve(self):
        value = self.task.outputs.get(self.attribute)
        if value is None:
            raise TaskError("%s has no %s yet" % (self.task.key, self.attribute))
        return value

    def terraform(self):
        literal = self.task.terraform_value(self.attribute)
        if literal is not None:
            return literal
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


def _same(value):
    return value


def as_blocks(value, nested=()):
    """A value as Terraform writes a block field: a dict is one block, a list of dicts one block each; inside
    them the keys named in nested are blocks too (access_config {} inside network_interface)."""
    def block(body):
        return Block({k: as_blocks(v, nested) if k in nested else v for k, v in body.items()})
    if isinstance(value, dict):
        return block(value)
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return [block(v) for v in value]
    return value


class Field(object):
    """One field of a kind, the single source of every rendering of it.

    name:     the Terraform attribute, the key in ``task.fields``.
    api:      the create call's parameter (None: not sent by the generic create).
    read:     a JMESPath into the describe item holding the actual value (None: not read back).
    cfn:      the CloudFormation property (None: not in the template).
    compare:  compared with the actual value on every run (needs read).
    mutable:  update() may change it in place; a difference in an immutable field is an error.
    to_api, from_api, to_cfn: conversions of the value (default: as is).
    block:    Terraform writes it as nested block(s) (a dict: one, a list of dicts: one each), and inside
              them the keys in nested as blocks too; render_terraform does it for every kind.
    to_terraform: a conversion of the value as Terraform writes it, after references became expressions
              (default: as is).
    send_if:  desired -> whether the create call sends it (kops sends a rule's ports for some protocols only);
              None: whenever it has a value.
    """

    __slots__ = ("name", "api", "read", "cfn", "compare", "mutable", "to_api", "from_api", "to_cfn", "block", "nested",
                 "to_terraform", "send_if", "_expression")

    def __init__(self, name, api=None, read=None, cfn=None, compare=True, mutable=False,
                 to_api=_same, from_api=_same, to_cfn=None, block=False, nested=(), to_terraform=None, send_if=None):
        self.name = name
        self.api = api
        self.read = read
        self.cfn = cfn
        self.compare = compare and read is not None
        self.mutable = mutable
        self.to_api = to_api
        self.from_api = from_api
        self.to_cfn = to_cfn or to_api
        self.block = block
        self.nested = tuple(nested)
        self.to_terraform = to_terraform
        self.send_if = send_if
        self._expression = None  # compiled on first use: module_utils import without jmespath (sanity's import test)

    def sent(self, desired):
        """Whether the create call sends this field for these desired fields."""
        return bool(self.api) and desired.get(self.name) is not None and (self.send_if is None or self.send_if(desired))

    def terraform(self, value):
        """The field as Terraform writes it, from its value with references already made expressions."""
        if self.to_terraform is not None:
            value = self.to_terraform(value)
        return as_blocks(value, self.nested) if self.block else value

    def actual(self, item):
        if self._expression is None:
            import jmespath
            self._expression = jmespath.compile(self.read)
        return self.from_api(self._expression.search(item))


class Deletion(object):
    """An object the cluster owns that the spec no longer asks for, and how to delete it.

    order: deletions run in ascending order, one order after another (rules before their
    groups, an autoscaling group before its launch template).
    """

    __slots__ = ("kind", "name", "id", "order", "delete", "detail")

    def __init__(self, kind, name, object_id, delete, order=0, detail=""):
        self.kind = kind
        self.name = name
        self.id = object_id
        self.delete = delete
        self.order = order
        self.detail = detail


class Task(object):
    """One cloud object.  A kind sets ``kind``, ``FIELDS`` and implements the hooks above."""

    kind = None
    FIELDS = ()
    cloudformation_type = None
    shared = False  # referred to, never created, changed, deleted or rendered (a BYO VPC, an image)
    parameter_type = "String"  # CloudFormation parameter type of a shared object without an id
    # A change reaches running instances only when they are replaced (a launch or instance template): the plan then
    # prints kops' rolling-update hint (engine/plan.py).
    restarts_instances = False

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

    # -- derived from FIELDS -------------------------------------------------------------------------
    def field_map(self):
        return {f.name: f for f in self.FIELDS}

    def create_args(self, desired=None):
        """The create call's parameters for the fields that have an API name and a value."""
        desired = self.desired() if desired is None else desired
        return {f.api: f.to_api(desired[f.name]) for f in self.FIELDS if f.sent(desired)}

    def read_actual(self, item):
        """{field: actual value} from a describe item, for the fields that are read back."""
        return {f.name: f.actual(item) for f in self.FIELDS if f.read}

    def compare(self, actual):
        desired = self.desired()
        return {name: (actual.get(name), desired[name]) for name in self.compared_fields()
                if desired.get(name) is not None and actual.get(name) != desired[name]}

    def compared_fields(self):
        return [f.name for f in self.FIELDS if f.compare]

    def immutable_changes(self, changes):
        """The changed fields update() cannot change in place, as an error naming each."""
        fields = self.field_map()
        immutable = sorted(f for f in changes if f in fields and not fields[f].mutable)
        if immutable:
            raise TaskError("%s: %s cannot be changed in place (%s)" % (
                self.key, ", ".join(immutable),
                "; ".join("%s: %s -> %s" % (f, changes[f][0], changes[f][1]) for f in immutable)),
                fix="delete the object or keep its value")

    # -- the hooks -----------------------------------------------------------------------------------
    def find(self, cloud):
        raise NotImplementedError("%s does not implement find" % self.kind)

    def create(self, cloud):
        raise NotImplementedError("%s does not implement create" % self.kind)

    def update(self, cloud, actual, changes):
        raise TaskError("%s: %s cannot be changed in place" % (self.key, ", ".join(sorted(changes))))

    @classmethod
    def orphans(cls, cloud, wanted):
        """Deletions for this kind's owned objects that no task in `wanted` (this kind's tasks) asks for."""
        return []

    def render_terraform(self):
        """The fields with references as expressions, each written as its Field says (blocks, conversions);
        unset (None) fields are left out."""
        if self.shared:
            return None
        body = {k: v for k, v in to_terraform(self.fields).items() if v is not None}  # unset: left out
        for f in self.FIELDS:
            if f.name in body:
                body[f.name] = f.terraform(body[f.name])
        if self.after:
            body["depends_on"] = [Expression("%s.%s" % (t.kind, t.terraform_name)) for t in self.after]
        return body

    def render_cloudformation(self):
        """Properties from the fields' CloudFormation names (tags as CloudFormation's Key/Value list); a field
        whose to_cfn gives None is left out."""
        if self.shared:
            return None
        properties = {}
        for f in self.FIELDS:
            value = self.fields.get(f.name)
            if f.cfn and value is not None and f.to_cfn(value) is not None:
                properties[f.cfn] = f.to_cfn(value)
        if self.fields.get("tags"):
            properties["Tags"] = [{"Key": k, "Value": v} for k, v in sorted(self.fields["tags"].items())]
        return properties

    def terraform_value(self, attribute):
        return None

    def cloudformation_value(self, attribute):
        return None

    def terraform_data(self):
        return []

    def terraform_files(self):
        return []

    def terraform_outputs(self):
        """[(output name, Terraform value, is_list)] this object adds to kubernetes.tf's locals and outputs:
        kops' RenderTerraform calling AddOutputVariable (is_list False: written once) or
        AddOutputVariableArray (True: one item of a list the target gathers from every task, deduplicated
        and sorted, engine/terraform.output_variables).  Values as written: Ref(task).terraform(), a literal."""
        return []

    def extra_cloudformation(self):
        return []


def managed_task_classes(modules, task_base=Task):
    """Every task kind defined in these modules that manages objects (a driver's task_classes: asked for
    orphans on every run), subclasses of task_base."""
    return [value for module in modules for value in vars(module).values()
            if isinstance(value, type) and issubclass(value, task_base) and value.kind and not value.shared
            and value.__module__ == module.__name__]
