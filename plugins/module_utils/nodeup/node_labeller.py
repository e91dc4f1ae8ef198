# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The node labeller: kops-controller's node controller, on the control plane (docs/node-labels.md).

A kubelet may not give its own Node the node-role.kubernetes.io/* labels (nor any kubernetes.io / k8s.io label
outside its own set: the NodeRestriction admission plugin), so, as in kops, kubelets register without them and
this labeller gives every Node the labels of its instance group:

1. the Node's spec.providerID names its instance; the cloud says which instance group that instance belongs to
   (kops' pkg/nodeidentity: on AWS the instance's kops.k8s.io/instancegroup tag, set by its autoscaling group;
   on GCE the instance template of the managed instance group that really manages the instance, never the
   instance's own metadata, which the instance could change);
2. that group's labels are the kubeops.nodeLabels of its nodeup config in the state store (computed by the
   controller: nodeconfig/node_labels.py, kops' BuildNodeLabels);
3. the Node is patched (strategic merge, field manager kubeops-node-labeller) where a label is missing or
   differs; of the labels it did not compute it removes only the three role labels kops' controller prunes
   (node-role.kubernetes.io/{control-plane,node,api-server}), so labels others set stay.

A node whose group cannot be found (no providerID yet, an instance of another cluster, no group tag, no nodeup
config) is not labelled and is logged with the reason, never guessed.

Where it runs: its own systemd unit (kubeops-node-labeller) that roles/protokube installs on every control-plane
node, not a thread of the bootstrap service.  The bootstrap service runs only on AWS control planes (it verifies
AWS identities) and holds the cluster CA key; kops runs its node controller on every cloud, and the labeller
needs no CA key, only its own client certificate (CN kubeops:node-labeller, bound by the node-labeller addon's
RBAC to get/list/watch/patch nodes, kops-controller's rule).  A separate unit also restarts on its own and logs
on its own (journalctl -u kubeops-node-labeller).  It runs on protokube's Python (the boot venv), which has
PyYAML for the nodeup config, botocore for EC2 and S3, and google-auth/requests for GCE.

Changes are seen by polling the Node list every intervalSeconds (default 10): this file speaks to the API with
the standard library only, no informer/watch, so a new node is labelled within one interval (kops-controller
reacts to a watch event at once).  Cloud answers are cached per instance (an instance never changes group), the
groups' labels for configTTLSeconds (default 60: a changed group reaches its nodes within a minute of
update cluster).
"""

from __future__ import annotations

import datetime
import json
import re
import ssl
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from ansible_collections.kubeops.kops.plugins.module_utils.errors import NodeError

FIELD_MANAGER = "kubeops-node-labeller"
USER = "kubeops:node-labeller"  # the labeller's certificate CN; the node-labeller addon's RBAC names it
INSTANCE_GROUP_LABEL = "kops.k8s.io/instancegroup"
INSTANCE_GROUP_TAG = "kops.k8s.io/instancegroup"  # AWS: the tag the autoscaling group puts on its instances
CLUSTER_TAG = "KubernetesCluster"
GCE_INSTANCE_GROUP_METADATA = "kops-k8s-io-instance-group-name"  # GCE: on the group's instance template
# kops' node controller deletes these when the group's labels do not have them; every other label it leaves.
PRUNED_ROLE_LABELS = ("node-role.kubernetes.io/api-server", "node-role.kubernetes.io/node",
                      "node-role.kubernetes.io/control-plane")
# The igconfig/<dir>/ a group's nodeup config is under, tried in turn (the group's role is not known yet).
CONFIG_DIRS = ("node", "control-plane", "apiserver")
CONFIG_PATH = "igconfig/%s/%s/nodeupconfig.yaml"
INSTANCE_GROUP_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DEFAULT_INTERVAL = 10.0
DEFAULT_CONFIG_TTL = 60.0
IDENTITY_TTL = 3600.0  # kops caches an instance's identity for an hour


class NotIdentified(Exception):
    """A Node the labeller will not label, with the reason (logged)."""


class KubeError(Exception):
    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


# ---------------------------------------------------------------- the Kubernetes API, standard library only
class KubeNodes(object):
    """List and patch Nodes over HTTPS with a client certificate (kube-apiserver's x509 authentication)."""

    def __init__(self, server, ca_file, cert_file, key_file, timeout=30):
        self.server = server.rstrip("/")
        self.timeout = timeout
        self.context = ssl.create_default_context(cafile=ca_file)
        self.context.load_cert_chain(cert_file, key_file)

    def _call(self, method, path, body=None, content_type="application/json"):
        data = json.dumps(body).encode("utf-8") if body is not None else None
        request = urllib.request.Request(self.server + path, data=data, method=method,
                                         headers={"Accept": "application/json", "Content-Type": content_type,
                                                  "User-Agent": FIELD_MANAGER})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout, context=self.context) as response:  # noqa: S310
                return json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as exc:
            text = exc.read().decode("utf-8", "replace")
            try:
                text = json.loads(text).get("message", text)
            except ValueError:
                pass
            raise KubeError("%s %s: HTTP %s %s" % (method, path.split("?")[0], exc.code, text), exc.code) from None
        except OSError as exc:
            raise KubeError("%s %s: the API server at %s did not answer: %s"
                            % (method, path.split("?")[0], self.server, exc)) from None

    def list(self):
        items, token = [], ""
        while True:
            query = {"limit": 500}
            if token:
                query["continue"] = token
            page = self._call("GET", "/api/v1/nodes?" + urllib.parse.urlencode(query))
            items.extend(page.get("items") or [])
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                return items

    def get(self, name):
        return self._call("GET", "/api/v1/nodes/" + urllib.parse.quote(name, safe=""))

    def patch_labels(self, name, labels):
        """labels: {key: value, or None to remove}; kops' nodePatch, a strategic merge patch."""
        return self._call("PATCH", "/api/v1/nodes/%s?fieldManager=%s" % (urllib.parse.quote(name, safe=""), FIELD_MANAGER),
                          {"metadata": {"labels": labels}}, "application/strategic-merge-patch+json")


# ---------------------------------------------------------------- node identity: instance -> instance group
def _provider_id(node, scheme):
    """The three parts after scheme:// of the Node's providerID (kops: exactly three, or not recognized)."""
    name = node["metadata"]["name"]
    provider_id = (node.get("spec") or {}).get("providerID") or ""
    if not provider_id:
        raise NotIdentified("providerID is not set for node %s (the cloud provider sets it)" % name)
    if not provider_id.startswith(scheme + "://"):
        raise NotIdentified("providerID %r of node %s is not a %s one" % (provider_id, name, scheme))
    tokens = provider_id[len(scheme) + 3:].split("/")
    if len(tokens) != 3 or not tokens[2]:
        raise NotIdentified("providerID %r of node %s is not recognized" % (provider_id, name))
    return tokens


class AwsIdentifier(object):
    """kops' nodeidentity/aws: aws:///<zone>/<instance id> -> the running instance -> its group tag."""

    def __init__(self, ec2, cluster_name):
        self.ec2 = ec2
        self.cluster_name = cluster_name

    def identify(self, node):
        """(instance id, instance group, labels from the instance itself)."""
        instance_id = _provider_id(node, "aws")[2]
        try:
            reservations = self.ec2.describe_instances(InstanceIds=[instance_id]).get("Reservations") or []
        except Exception as exc:  # botocore's ClientError (InvalidInstanceID.NotFound) without importing botocore here
            if type(exc).__name__ == "ClientError":
                raise NotIdentified("instance %s of node %s: %s" % (instance_id, node["metadata"]["name"], exc)) from None
            raise
        instances = [i for r in reservations for i in r.get("Instances") or []]
        if len(instances) != 1:
            raise NotIdentified("instance %s of node %s: %d instances found" % (instance_id, node["metadata"]["name"],
                                                                                len(instances)))
        instance = instances[0]
        state = (instance.get("State") or {}).get("Name")
        if state not in ("pending", "running"):
            raise NotIdentified("instance %s of node %s is %s" % (instance_id, node["metadata"]["name"], state))
        tags = {t["Key"]: t["Value"] for t in instance.get("Tags") or []}
        if tags.get(CLUSTER_TAG) != self.cluster_name:
            raise NotIdentified("instance %s of node %s is not in cluster %s (%s=%r)" % (
                instance_id, node["metadata"]["name"], self.cluster_name, CLUSTER_TAG, tags.get(CLUSTER_TAG)))
        group = tags.get(INSTANCE_GROUP_TAG, "")
        if not INSTANCE_GROUP_NAME.match(group):
            raise NotIdentified("instance %s of node %s has no valid %s tag (%r)" % (
                instance_id, node["metadata"]["name"], INSTANCE_GROUP_TAG, group))
        labels = {}
        if instance.get("InstanceLifecycle"):  # kops: spot (or scheduled) instances are marked by their lifecycle
            labels["node-role.kubernetes.io/%s-worker" % instance["InstanceLifecycle"]] = "true"
        return instance_id, group, labels


def _last(link):
    return (link or "").rsplit("/", 1)[-1]


def _metadata_value(metadata, key):
    return next((item.get("value") or "" for item in (metadata or {}).get("items") or [] if item.get("key") == key), "")


class GceIdentifier(object):
    """kops' nodeidentity/gce: gce://<project>/<zone>/<instance> -> the running instance -> the MIG its created-by
    names, checked to really manage it -> that MIG member's instance template -> the template's group metadata.

    cloud: a cloud/gce.py GceCloud (get, call)."""

    def __init__(self, cloud, cluster_name):
        self.cloud = cloud
        self.cluster_name = cluster_name

    def identify(self, node):
        project, zone, name = _provider_id(node, "gce")
        node_name = node["metadata"]["name"]
        if project != self.cloud.project:
            raise NotIdentified("providerID of node %s is in project %s, not this cluster's %s" % (
                node_name, project, self.cloud.project))
        instance = self.cloud.get("compute", "projects/%s/zones/%s/instances/%s" % (project, zone, name))
        if instance is None:
            raise NotIdentified("instance %s of node %s does not exist" % (name, node_name))
        if instance.get("status") != "RUNNING":
            raise NotIdentified("instance %s of node %s is %s" % (name, node_name, instance.get("status")))
        created_by = _metadata_value(instance.get("metadata"), "created-by")
        if not created_by:
            raise NotIdentified("instance %s of node %s has no created-by (not in a managed instance group)" % (
                name, node_name))
        mig = _last(created_by)
        base = "projects/%s/zones/%s/instanceGroupManagers/%s" % (project, zone, mig)
        if self.cloud.get("compute", base) is None:
            raise NotIdentified("managed instance group %s of node %s does not exist" % (mig, node_name))
        answer = self.cloud.call("compute", "POST", base + "/listManagedInstances",
                                 params={"filter": "id=%s" % instance.get("id")}, wait=False) or {}
        members = [m for m in answer.get("managedInstances") or [] if str(m.get("id")) == str(instance.get("id"))]
        if len(members) != 1:
            raise NotIdentified("instance %s of node %s is not managed by %s" % (name, node_name, mig))
        template_name = _last((members[0].get("version") or {}).get("instanceTemplate"))
        if not template_name:
            raise NotIdentified("instance %s of node %s has no instance template version in %s" % (name, node_name, mig))
        template = self.cloud.get("compute", "projects/%s/global/instanceTemplates/%s" % (project, template_name))
        group = _metadata_value(((template or {}).get("properties") or {}).get("metadata"), GCE_INSTANCE_GROUP_METADATA)
        if not INSTANCE_GROUP_NAME.match(group):
            raise NotIdentified("instance template %s of node %s has no valid %s (%r)" % (
                template_name, node_name, GCE_INSTANCE_GROUP_METADATA, group))
        return "%s/%s" % (zone, name), group, {}


# ---------------------------------------------------------------- the groups' labels, from the state store
class GroupLabels(object):
    """{group: labels} from igconfig/<role>/<group>/nodeupconfig.yaml's kubeops.nodeLabels, kept for ttl seconds.

    open_store(): a fresh statestore Store for the config base (a Store caches what it read)."""

    def __init__(self, open_store, ttl=DEFAULT_CONFIG_TTL, clock=time.monotonic):
        self.open_store = open_store
        self.ttl = ttl
        self.clock = clock
        self._cache = {}

    def labels(self, group):
        cached = self._cache.get(group)
        if cached and self.clock() - cached[0] < self.ttl:
            if isinstance(cached[1], NotIdentified):
                raise cached[1]
            return cached[1]
        try:
            found = self._read(group)
        except NotIdentified as exc:
            self._cache[group] = (self.clock(), exc)
            raise
        self._cache[group] = (self.clock(), found)
        return found

    def _read(self, group):
        import yaml  # pylint: disable=import-outside-toplevel  # PyYAML: protokube's Python has it
        from ansible_collections.kubeops.kops.plugins.module_utils.statestore import vfs
        store = self.open_store()
        for directory in CONFIG_DIRS:
            relpath = CONFIG_PATH % (directory, group)
            try:
                text = store.read(relpath)
            except vfs.NotFoundError:
                continue
            document = yaml.safe_load(text) or {}
            kubeops = document.get("kubeops") or {}
            if kubeops.get("instanceGroup") not in (None, group):
                raise NotIdentified("%s is the config of group %s, not %s" % (relpath, kubeops["instanceGroup"], group))
            if not isinstance(kubeops.get("nodeLabels"), dict):
                raise NotIdentified("%s has no kubeops.nodeLabels (written before node labelling): run "
                                    "kubeops.kops.cluster_update to write it again" % relpath)
            return {str(k): str(v) for k, v in kubeops["nodeLabels"].items()}
        raise NotIdentified("instance group %s has no nodeup config in the state store (%s)" % (
            group, ", ".join(CONFIG_PATH % (d, group) for d in CONFIG_DIRS)))


# ---------------------------------------------------------------- the controller
def _parse_time(text):
    try:
        return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
    except (TypeError, ValueError):
        return None


def label_changes(current, wanted):
    """{key: value or None}: kops' node controller's patch: wanted labels missing or different, and the pruned
    role labels that are not wanted.  Nothing else is removed."""
    changes = {k: v for k, v in wanted.items() if current.get(k) != v}
    changes.update({k: None for k in PRUNED_ROLE_LABELS if k in current and k not in wanted})
    return changes


class Labeller(object):
    """One pass labels every Node (pass_once); run() passes every interval until stopped."""

    def __init__(self, nodes, identifier, group_labels, log=None, now=None, identity_ttl=IDENTITY_TTL,
                 clock=time.monotonic):
        self.nodes = nodes
        self.identifier = identifier
        self.group_labels = group_labels
        self.log = log or _stderr
        self.now = now or (lambda: datetime.datetime.now(datetime.timezone.utc))
        self.identity_ttl = identity_ttl
        self.clock = clock
        self._identities = {}  # providerID -> (when, (instance, group, labels))
        self._reported = {}  # node name -> the last reason it was not labelled (logged once per reason)

    def _identify(self, node):
        key = (node.get("spec") or {}).get("providerID") or ""
        cached = self._identities.get(key)
        if key and cached and self.clock() - cached[0] < self.identity_ttl:
            return cached[1]
        identity = self.identifier.identify(node)
        self._identities[key] = (self.clock(), identity)
        return identity

    def reconcile(self, node):
        """(group, {label: value or None} patched); NotIdentified when the node's group cannot be found."""
        _instance, group, instance_labels = self._identify(node)
        wanted = dict(self.group_labels.labels(group))
        wanted.update(instance_labels)
        current = (node.get("metadata") or {}).get("labels") or {}
        changes = label_changes(current, wanted)
        if changes:
            self.nodes.patch_labels(node["metadata"]["name"], changes)
        return group, changes

    def pass_once(self):
        """{node name: (group, changes) or the NotIdentified/KubeError}: one look at every Node."""
        results = {}
        for node in self.nodes.list():
            name = node["metadata"]["name"]
            try:
                group, changes = self.reconcile(node)
            except Exception as exc:  # pylint: disable=broad-except
                # NotIdentified, a refused patch (KubeError), or the cloud or store failing (no credentials yet,
                # throttled, unreachable): this node waits for the next pass, the others go on.
                if not isinstance(exc, (NotIdentified, KubeError)):
                    exc = NotIdentified("looking it up failed: %s: %s" % (type(exc).__name__, exc))
                results[name] = exc
                if self._reported.get(name) != str(exc):
                    self._reported[name] = str(exc)
                    self.log("node %s not labelled: %s" % (name, exc))
                continue
            results[name] = (group, changes)
            self._reported.pop(name, None)
            if changes:
                registered = _parse_time((node.get("metadata") or {}).get("creationTimestamp"))
                age = " %.1f s after it registered" % (self.now() - registered).total_seconds() if registered else ""
                self.log("labelled node %s (instance group %s)%s: %s" % (name, group, age, ", ".join(
                    "%s=%s" % (k, v) if v is not None else "-%s" % k for k, v in sorted(changes.items()))))
        return results

    def run(self, interval=DEFAULT_INTERVAL, stop=None):
        stop = stop or threading.Event()
        while not stop.is_set():
            try:
                self.pass_once()
            except Exception as exc:  # pylint: disable=broad-except
                # The API is not up yet, RBAC not applied yet, an answer that does not parse: the next pass tries
                # again (the unit would restart anyway; this keeps the caches and says why once).
                if self._reported.get("") != str(exc):
                    self._reported[""] = str(exc)
                    self.log("cannot list nodes: %s" % exc)
            else:
                self._reported.pop("", None)
            stop.wait(interval)

    def wait_for_group(self, group, timeout, interval=2.0):
        """protokube's early step: pass until a Node of group carries its labels; True, or False at timeout."""
        deadline = self.clock() + timeout
        while True:
            try:
                results = self.pass_once()
                if any(isinstance(r, tuple) and r[0] == group for r in results.values()):
                    return True
            except KubeError as exc:
                self.log("cannot list nodes yet: %s" % exc)
            if self.clock() + interval > deadline:
                return False
            time.sleep(interval)


def _stderr(line):
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def from_config(config):
    """A Labeller from its settings file: the control plane's kubeops.nodeLabeller (nodeconfig/node_labels.py)
    plus endpoint overrides (ec2Endpoint, storeEndpoint, gceEndpoint)."""
    from ansible_collections.kubeops.kops.plugins.module_utils.statestore import vfs
    nodes = KubeNodes(config["apiServer"], config["caCert"], config["clientCert"], config["clientKey"])
    cloud = config.get("cloud")
    if cloud == "aws":
        import botocore.session  # pylint: disable=import-outside-toplevel
        ec2 = botocore.session.get_session().create_client("ec2", region_name=config["region"],
                                                           endpoint_url=config.get("ec2Endpoint") or None)
        identifier = AwsIdentifier(ec2, config["clusterName"])
    elif cloud == "gce":
        from ansible_collections.kubeops.kops.plugins.module_utils.cloud import gce
        # gceEndpoint: one root for every Google API, as KOPS_GCE_ENDPOINT (an emulated GCE)
        endpoints = gce.endpoints_for(config["gceEndpoint"]) if config.get("gceEndpoint") else None
        identifier = GceIdentifier(gce.GceCloud(config["clusterName"], config["project"], config.get("region"),
                                                endpoints=endpoints), config["clusterName"])
    else:
        raise NodeError("nodeLabeller.cloud %r: the labeller identifies nodes on aws and gce" % cloud)
    groups = GroupLabels(lambda: vfs.open_store(config["configBase"], endpoint=config.get("storeEndpoint") or None),
                         ttl=float(config.get("configTTLSeconds") or DEFAULT_CONFIG_TTL))
    return Labeller(nodes, identifier, groups)


USAGE = ("usage: python3 -m ...nodeup.node_labeller CONFIG.json                       (the labeller, until stopped)\n"
         "       python3 -m ...nodeup.node_labeller CONFIG.json wait-group GROUP SECONDS  (until a node of GROUP "
         "is labelled)")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) not in (1, 4) or (len(argv) == 4 and argv[1] != "wait-group"):
        _stderr(USAGE)
        return 2
    try:
        with open(argv[0]) as handle:
            config = json.load(handle)
        labeller = from_config(config)
    except (OSError, ValueError, KeyError) as exc:  # ssl.SSLError is an OSError; a missing setting a KeyError
        # e.g. the client certificate not issued yet (roles/nodeup's node_certificates): systemd starts it again.
        _stderr("node labeller: cannot start from %s: %s: %s (its settings are the nodeup config's "
                "kubeops.nodeLabeller; its certificate comes from kubeops.kops.node_certificates)"
                % (argv[0], type(exc).__name__, exc))
        return 1
    if len(argv) == 4:
        if labeller.wait_for_group(argv[2], float(argv[3])):
            return 0
        _stderr("no node of instance group %s was labelled within %s s" % (argv[2], argv[3]))
        return 1
    interval = float(config.get("intervalSeconds") or DEFAULT_INTERVAL)
    _stderr("kubeops node labeller for %s: every %s s, %s" % (config["clusterName"], interval, config["apiServer"]))
    labeller.run(interval)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
