"""A small in-memory stand-in for cloud/gce.GceCloud (the contract's get / list / call), for the GCE day-2 and
node code's unit tests: resources by their path, the calls they make recorded.  The REST behaviour itself
(operations, errors, paging) is tests/gce_server.py's, tested with the client there."""

from __future__ import annotations

import copy

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.gce import GceError

BASE = "https://compute.example/compute/v1/"


class FakeGce(object):
    provider = "gce"

    def __init__(self, cluster_name="k8s.example.com", project="p1", region="us-test1",
                 zones=("us-test1-a", "us-test1-b")):
        self.cluster_name, self.project, self.region, self.zones = cluster_name, project, region, list(zones)
        self.resources = {}  # (api, path) -> resource
        self.calls = []  # (method, path)
        self.managed = {}  # manager path -> [managed instance]

    def ownership_tags(self):
        return {"k8s-io-cluster-name": self.cluster_name.replace(".", "-")}

    # -- the contract --------------------------------------------------------------------------------
    def get(self, api, path, params=None):
        self.calls.append(("GET", path))
        return copy.deepcopy(self.resources.get((api, path)))

    def list(self, api, path, params=None, key="items"):
        self.calls.append(("GET", path))
        return [copy.deepcopy(r) for (a, p), r in sorted(self.resources.items()) if a == api and p.rsplit("/", 1)[0] == path]

    def call(self, api, method, path, body=None, params=None, wait=True):
        self.calls.append((method, path))
        parent, verb = path.rsplit("/", 1)
        return getattr(self, "_" + verb)(parent, body)

    # -- verbs -----------------------------------------------------------------------------------------
    def _listManagedInstances(self, manager, body):  # noqa: N802 (the API's name)
        return {"managedInstances": copy.deepcopy(self.managed.get(manager, []))}

    def _recreateInstances(self, manager, body):  # noqa: N802
        current = self.resources[("compute", manager)]["instanceTemplate"]
        for url in body["instances"]:
            name = url.rsplit("/", 1)[-1]
            found = [m for m in self.managed.get(manager, []) if m["instance"].endswith("/" + name)]
            if not found:
                raise GceError(404, "notFound", "instance %s is not in %s" % (name, manager), "POST", manager)
            found[0].update(currentAction="NONE", instanceStatus="RUNNING", version={"instanceTemplate": current})
        return {"kind": "compute#operation", "status": "DONE"}

    def _attachDisk(self, instance, body):  # noqa: N802
        disk = self.resources[("compute", body["source"][body["source"].index("projects/"):])]
        disk.setdefault("users", []).append(BASE + instance)
        return {"kind": "compute#operation", "status": "DONE"}

    def _changes(self, zone, body):
        for record in body.get("deletions") or []:
            del self.resources[("dns", "%s/rrsets/%s:%s" % (zone, record["name"], record["type"]))]
        for record in body.get("additions") or []:
            self.resources[("dns", "%s/rrsets/%s:%s" % (zone, record["name"], record["type"]))] = dict(
                record, kind="dns#resourceRecordSet")
        return {"kind": "dns#change", "status": "done"}

    # -- seeding -----------------------------------------------------------------------------------------
    def add(self, api, path, resource):
        resource = dict(resource, name=path.rsplit("/", 1)[-1], selfLink=BASE + path)
        self.resources[(api, path)] = resource
        return resource

    def template(self, name, group, cluster=None, labels=None):
        cluster = cluster or self.cluster_name
        return self.add("compute", "projects/%s/global/instanceTemplates/%s" % (self.project, name), {"properties": {
            "labels": dict({"k8s-io-cluster-name": cluster.replace(".", "-"), "k8s-io-instance-group": group},
                           **(labels or {})),
            "metadata": {"items": [{"key": "cluster-name", "value": cluster},
                                   {"key": "kops-k8s-io-instance-group-name", "value": group}]}}})

    def manager(self, zone, name, template, size, address_base=10):
        """A managed instance group with size RUNNING instances made from template."""
        path = "projects/%s/zones/%s/instanceGroupManagers/%s" % (self.project, zone, name)
        self.add("compute", path, {"zone": BASE + "projects/%s/zones/%s" % (self.project, zone),
                                   "instanceTemplate": template["selfLink"], "targetSize": size, "baseInstanceName": name})
        self.managed[path] = []
        for index in range(size):
            self.instance(zone, "%s-%04d" % (name, index), template, path, "10.0.%d.%d" % (address_base, index + 2))
        return path

    def instance(self, zone, name, template, manager=None, address="10.0.0.2", public=None, status="RUNNING"):
        path = "projects/%s/zones/%s/instances/%s" % (self.project, zone, name)
        self.add("compute", path, {"status": status, "labels": dict(template["properties"]["labels"]),
                                   "machineType": BASE + "projects/%s/zones/%s/machineTypes/e2-medium" % (self.project, zone),
                                   "networkInterfaces": [{"networkIP": address, "accessConfigs": (
                                       [{"natIP": public}] if public else [])}]})
        if manager:
            self.managed[manager].append({"instance": BASE + path, "instanceStatus": status, "currentAction": "NONE",
                                          "version": {"instanceTemplate": template["selfLink"]}})
        return path
