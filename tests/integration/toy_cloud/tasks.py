# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The toy cloud's two kinds: a network and a machine pool per instance group.  Each is found by its name among
the cluster's own objects (its label), created, resized in place, and deleted when the spec no longer asks for
it (orphans); they render as Terraform resources of a made-up provider."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Deletion, Field, Task


def _field(name, mutable=False, compare=True):
    return Field(name, api=name, read=name if compare else None, mutable=mutable)


class ToyTask(Task):
    collection = None
    delete_order = 0  # pools before the network they use

    def find(self, cloud):
        found = [item for item in cloud.owned(self.collection) if item["name"] == self.fields["name"]]
        if not found:
            return None
        self.outputs["id"] = found[0]["id"]
        return self.read_actual(found[0])

    def create(self, cloud):
        self.outputs["id"] = cloud.create(self.collection, self.create_args())["id"]

    def update(self, cloud, actual, changes):
        self.immutable_changes(changes)
        cloud.update(self.collection, self.outputs["id"], {name: desired for name, (_actual, desired) in changes.items()})

    @classmethod
    def orphans(cls, cloud, wanted):
        names = {task.fields["name"] for task in wanted}
        return [Deletion(cls.kind, item["name"], item["id"],
                         lambda c, object_id=item["id"]: c.delete(cls.collection, object_id), order=cls.delete_order)
                for item in cloud.owned(cls.collection) if item["name"] not in names]


class ToyNetwork(ToyTask):
    kind = "toy_network"
    collection = "networks"
    delete_order = 1
    FIELDS = (_field("name"), _field("cidr"), _field("labels"))


class ToyMachinePool(ToyTask):
    kind = "toy_machine_pool"
    collection = "pools"
    restarts_instances = True  # its machines take a new image or machine type when they are replaced
    FIELDS = (_field("name"), _field("network_id"), _field("zones"), _field("min_size", mutable=True),
              _field("max_size", mutable=True), _field("machine_type", mutable=True), _field("image", mutable=True),
              _field("role"), _field("user_data", mutable=True), _field("labels", mutable=True))
