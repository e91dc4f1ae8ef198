# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""What every GCE task shares: where its object lives in the REST API, how it is found,
created and owned (kops' gcetasks Find / RenderGCE).

A task's fields are its Terraform attributes (plain data and Refs); its FIELDS table maps
them to the API body (``api``, ``to_api``) and reads them back from the GET answer
(``read``, ``from_api``), so the create body, the comparison and the Terraform body come
from one table as on AWS, nested Terraform blocks included (Field's block flag).
Every mutating call goes through GceCloud.insert / call / delete, so check mode (find and
compare only) makes none.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Field, Task
from ansible_collections.kubeops.kops.plugins.module_utils.errors import TaskError

COMPUTE = "https://www.googleapis.com/compute/v1/"


def last(url):
    """The last component of a GCE URL (a name), as kops compares links."""
    return url.rsplit("/", 1)[-1] if isinstance(url, str) else url


def lasts(urls):
    return [last(u) for u in urls or []] or None


def url(project, path):
    """A full Compute URL, as kops sends links (``projects/<p>/...``)."""
    return COMPUTE + "projects/%s/%s" % (project, path)


class OwnershipError(TaskError):
    pass


class GceTask(Task):
    """One Compute object found by its kops name in a global, regional or zonal collection."""

    api = "compute"
    scope = "global"          # "global", "region" or "zone" (the zone is the task's ``zone`` field)
    collection = None         # the REST collection: "networks", "firewalls", ...
    labelled = False          # True: owned by the k8s-io-cluster-name label; False: by kops' name rule

    @property
    def object_name(self):
        return self.fields.get("name", self.name)

    def collection_path(self, cloud):
        if self.scope == "global":
            return "projects/%s/global/%s" % (cloud.project, self.collection)
        if self.scope == "region":
            return "projects/%s/regions/%s/%s" % (cloud.project, cloud.region, self.collection)
        return "projects/%s/zones/%s/%s" % (cloud.project, self.fields["zone"], self.collection)

    def object_path(self, cloud):
        return "%s/%s" % (self.collection_path(cloud), self.object_name)

    # -- the API body --------------------------------------------------------------------------------
    def api_body(self, cloud, desired):
        """The insert body: the object's name and the FIELDS' API names (links made into URLs by to_api(value, cloud))."""
        body = {"name": self.object_name}
        for f in self.FIELDS:
            if f.sent(desired):
                body[f.api] = f.to_api(desired[f.name], cloud)
        return body

    def remember(self, item):
        """The outputs other tasks refer to (Terraform's attributes of the same name)."""
        self.outputs.update({"id": item.get("selfLink") or item.get("name"), "name": item.get("name"),
                             "self_link": item.get("selfLink")})

    def check_owned(self, cloud, item):
        if self.labelled and not cloud.owns(item.get("labels")):
            raise OwnershipError("%s: %s exists but is not labelled as cluster %s's (%s); rename the cluster or "
                                 "delete the object" % (self.key, self.object_name, cloud.cluster_name,
                                                        cloud.ownership_tags()))

    # -- the hooks -----------------------------------------------------------------------------------
    def find(self, cloud):
        item = cloud.get(self.api, self.object_path(cloud))
        if item is None:
            return None
        self.check_owned(cloud, item)
        self.remember(item)
        return self.read_actual(item)

    def create(self, cloud):
        item = cloud.insert(self.api, self.collection_path(cloud), self.api_body(cloud, self.desired()))
        self.remember(item)

    def update(self, cloud, actual, changes):
        self.immutable_changes(changes)
        self.apply_changes(cloud, actual, changes)

    def apply_changes(self, cloud, actual, changes):
        """Change the mutable fields in place (a kind with mutable fields implements it)."""
        raise TaskError("%s: %s cannot be changed in place" % (self.key, ", ".join(sorted(changes))))


def field(name, api=None, read=None, mutable=False, to_api=None, from_api=None, compare=True, **terraform):
    """A GCE Field: to_api(value, cloud) may build URLs from the cloud's project and region.
    terraform: how Terraform writes it (Field's block, nested, to_terraform)."""
    return Field(name, api=api, read=read, mutable=mutable, compare=compare,
                 to_api=to_api or (lambda value, cloud: value), from_api=from_api or (lambda value: value), **terraform)


def link(template):
    """to_api for a reference: the name made into the full URL kops sends (template has {project}, {region})."""
    def convert(value, cloud):
        return url(cloud.project, template.format(region=cloud.region, name=value))
    return convert


def links(template):
    convert = link(template)
    return lambda values, cloud: [convert(v, cloud) for v in values]
