# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""`kops update cluster`: completed spec -> the provider's tasks -> engine -> target.

One pipeline (Update) for every cloud and every target, in the shape of kops'
apply_cluster.go: load the cluster and complete it with its instance groups
once, write what the nodes read, ask the provider's driver (providers/) for
what it finds in the cloud and for the tasks (built once), then hand them to
the target, the one step that varies: Direct runs them (check mode: find and
compare only), Terraform and CloudFormation render them.  Nothing here knows
a particular cloud.
"""

from __future__ import annotations

import contextlib
import json
import os

from ansible_collections.kubeops.kops.plugins.module_utils.addons import channel as addon_channel
from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.completion import channels
from ansible_collections.kubeops.kops.plugins.module_utils.engine import cloudformation, runner, terraform
from ansible_collections.kubeops.kops.plugins.module_utils.completion.cloudfacts import CloudFactsError
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import boot_artifacts, bootstrap
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import config as nodeup_config
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import store as nodeup_store
from ansible_collections.kubeops.kops.plugins.module_utils.pki import discovery, keystore, sshkey
from ansible_collections.kubeops.kops.plugins.module_utils.providers.registry import driver_for, provider_for
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import discovery as discovery_store
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import layout
from ansible_collections.kubeops.kops.plugins.module_utils.zones import region_of
from ansible_collections.kubeops.kops.plugins.module_utils import waits
from ansible_collections.kubeops.kops.plugins.module_utils.atomic import atomic_write
from ansible_collections.kubeops.kops.plugins.module_utils.errors import ServiceError

TARGETS = ("direct", "terraform", "cloudformation")


class UpdateError(ServiceError):
    pass


def load_completed(service, cluster_name, planned=None):
    """(completed Cluster, completed instance groups) of a stored cluster, validated: the one place the groups are
    completed (ClusterService.completed_groups); every stage after it takes them as they are.

    planned: (Cluster, instance groups) to use instead of the stored ones: what a check-mode
    create would write, so a new cluster's cloud can be planned before anything is stored.
    """
    cluster, groups = planned if planned else service.read(cluster_name)
    if cluster is None:
        raise UpdateError("cluster %r not found in %s; create it first" % (cluster_name, service.store.url("")))
    completed = service.validate(cluster, groups)
    return completed, service.completed_groups(cluster, completed, groups)


def ssh_public_keys(service, cluster_name, new_key=None, dry_run=False):
    """The cluster's SSH public keys from the store (kops' pki/ssh/public/admin/), adding new_key.

    Returns (keys, store changed?).  A new key replaces the stored ones, as
    `kops create sshpublickey` does for the admin user.
    """
    store = service.cluster_store(cluster_name)
    prefix = store.path(sshkey.SSH_KEY_DIR)
    stored = {p[len(prefix):]: service.store.read(p).decode("utf-8") for p in service.store.list(prefix)}
    if not new_key:
        return [stored[k] for k in sorted(stored)], False
    try:
        digest = sshkey.fingerprint(new_key)
    except sshkey.SSHKeyError as exc:
        raise UpdateError("ssh_public_key: %s" % exc)
    if list(stored) == [digest]:
        return [stored[digest]], False
    if not dry_run:
        store.apply([(sshkey.SSH_KEY_DIR + digest, new_key.strip().encode("utf-8"))]
                    + [(sshkey.SSH_KEY_DIR + old, None) for old in stored if old != digest])
    return [new_key.strip()], True


class Update(object):
    """One run of the pipeline, whatever its target: the cluster and its instance groups loaded and completed once,
    what the nodes read, the model (the driver's tasks) built once.  Its stages, in kops' apply_cluster order:
    names -> nodes' files -> boot artefacts -> user data -> addons -> tasks -> store -> target -> discovery."""

    def __init__(self, service, cluster_name, target, dry_run, ssh_public_key, planned, warn, documents):
        self.service, self.cluster_name, self.target, self.dry_run = service, cluster_name, target, dry_run
        self.warn = warn or _ignore
        target.say(self, "reading %s from the state store and rendering what its nodes read" % cluster_name)
        self.documents = [] if documents is None else documents
        self.completed, self.groups = load_completed(service, cluster_name, planned)
        self.driver = driver_for(self.completed["spec"])
        target.refuse_unless_rendered_by(self.driver)  # before anything is written
        _warn_not_rendered(self.completed, self.groups, self.warn)
        self.store = service.cluster_store(cluster_name)
        self.keys, self.keys_changed = ssh_public_keys(service, cluster_name, ssh_public_key, dry_run)
        self._cloud = None

    def cloud(self):
        """The cloud the target runs against, made when first asked (a rendered target may never ask)."""
        if self._cloud is None:
            self._cloud = self.target.new_cloud(self)
        return self._cloud

    def run(self):
        """The stages; returns what the target returns."""
        completed, groups, store, driver = self.completed, self.groups, self.store, self.driver
        self.names_plan = self.target.choose_names(self)
        # Before the tasks: each launch template's user data pins its group's nodeup config hash.
        self.node_changes, self.hashes = nodeup_store.node_files(
            store, completed, groups, getattr(self.service.facts, "etcd_sha256", None), self.warn)
        self.documents.extend(node_config_changes(store, groups, self.node_changes))
        self.boot = boot_artifacts_for(self.service, completed, store, self.dry_run)
        self.account = self.target.account(self)
        # Without DNS the workers' user data pins the control plane's addresses (kops' APIServerIPs), once they exist.
        self.addresses = self.target.control_plane_addresses(self)
        self.user_data = self.group_user_data(self.addresses)
        # Karpenter's EC2NodeClasses carry the boot scripts of its groups (kops' nodeupscript as userData).
        self.karpenter_nodes = driver.karpenter_nodes(self.target.karpenter_cloud(self), completed, groups,
                                                      self.user_data, self.warn)
        files = managed_files(completed) + self.node_changes + self.addon_files(self.karpenter_nodes)
        files += karpenter_scripts(groups, self.user_data)
        tasks = self.build_tasks(self.user_data)
        self.target.resolve(self, tasks)
        discovery = discovery_documents(store, completed, self.node_changes)
        covered, rendered_discovery = self.target.store_objects(self, files, discovery, tasks)
        # The store first (kops' keypair and managed-file tasks come before the launch templates that pin them):
        # every object a node's user data pins (nodeup configs, the keysets they carry, the boot artefacts above)
        # is stored before any launch template, group or instance can refer to it, so a run killed after the
        # groups launched leaves no instance pinned to a config the store lacks, and the next run finds and reuses
        # the same CAs.
        changes = store.differing([(path, data) for path, data in files if path not in covered])
        if changes and not self.dry_run:
            self.target.say(self, "writing %d file(s) the nodes read to the state store" % len(changes))
            store.apply(changes)
        if not self.dry_run:
            nodeup_store.refresh_keyset_bundle(store, completed)
        outcome = self.target.apply(self, list(tasks.values()))
        published = discovery_store.publish(completed, [d for d in discovery if d[0] not in rendered_discovery],
                                            self.dry_run, self.warn)
        store_changed = (bool(changes) or self.keys_changed or bool(self.boot.uploaded) or published
                         or outcome.store_changed)
        return self.target.result(self, outcome, store_changed)

    def group_user_data(self, addresses):
        return group_user_data(self.driver, self.completed, self.groups, self.store.config_base(), self.hashes,
                               self.boot, self.node_changes, addresses)

    def addon_files(self, karpenter_nodes):
        return addon_channel.store_files(self.completed, self.groups, self.node_changes, account_id=self.account,
                                         karpenter_nodes=karpenter_nodes)

    def build_tasks(self, user_data):
        """The model: the driver's tasks from the completed cluster and groups."""
        return self.driver.build_tasks(self.completed, self.groups, self.keys, user_data, account_id=self.account)


class Outcome(object):
    """What a target did with the tasks: the plan (direct), the rendered tasks, whether it wrote the store again."""

    def __init__(self, plan=(), tasks=(), store_changed=False):
        self.plan, self.tasks, self.store_changed = list(plan), list(tasks), store_changed


class Target(object):
    """The one step of the pipeline that varies (kops' apply_cluster target): what the cloud is asked before the
    model is built and what is done with the tasks.  This base is a rendered target (Terraform, CloudFormation):
    it asks the cloud only for what it cannot render without (the AWS account, Karpenter's root devices when cloud
    lookups are on) and takes the rest from the store's record and the cloud facts."""

    name = None

    def refuse_unless_rendered_by(self, driver):
        if self.name in driver.targets:
            return
        rendered = " or ".join(t for t in driver.targets if t != "direct")
        if "direct" not in driver.targets:
            what = "renders as %s only" % rendered
        elif rendered:
            what = "applies directly or renders as " + rendered
        else:
            what = "has nothing in a cloud to render; use target: direct, which writes the state store's files"
        raise UpdateError("target=%s: a %s cluster %s" % (self.name, driver.provider.upper(), what))

    def say(self, update, line):
        """A real direct run's phases on the console (module_utils/waits.py); a render is quick and quiet."""

    def new_cloud(self, update):
        return update.driver.cloud(update.cluster_name, region_of(update.completed["spec"]),
                                   spec=update.completed["spec"])

    def choose_names(self, update):
        """The names choice a direct run recorded (no cloud is asked); no plan entries."""
        update.driver.recorded_names(update.store, update.completed)
        return []

    def account(self, update):
        return _render_account(update.driver, update.completed, update.cloud, update.warn)

    def control_plane_addresses(self, update):
        return ()

    def karpenter_cloud(self, update):
        """Karpenter's node classes name their images' root devices: asked of the cloud when cloud lookups are on."""
        looks_up = getattr(update.service.facts, "looks_up", False)
        return update.cloud if looks_up else _no_cloud

    def resolve(self, update, tasks):
        resolve_from_facts(tasks.values(), update.service.facts)

    def store_objects(self, update, files, discovery, tasks):
        """(store paths, discovery documents) the rendered template manages itself, not written to the store."""
        return (), ()

    def apply(self, update, tasks):
        """What the target does with the tasks (a render: nothing yet, result writes them)."""
        return Outcome(tasks=tasks)

    def result(self, update, outcome, store_changed):
        raise NotImplementedError


def _no_cloud():
    return None


class Direct(Target):
    """Reconcile the cloud's objects (check mode: find and compare only)."""

    name = "direct"

    def __init__(self, cloud_factory, cloud_options, workers, deadline, progress):
        self.cloud_factory, self.workers, self.deadline, self.progress = cloud_factory, workers, deadline, progress
        self.options = dict(cloud_options or {})

    def say(self, update, line):
        if not update.dry_run:
            waits.notice(line)

    def new_cloud(self, update):
        # A region other than the zones' would plan a second cluster there: refused before any call.
        options = dict(self.options)
        provider_for(update.completed["spec"]).check_region(options.get("region"), update.completed)
        region = options.pop("region", None) or region_of(update.completed["spec"])
        if self.cloud_factory:
            return self.cloud_factory(update.cluster_name, region)
        return update.driver.cloud(update.cluster_name, region, spec=update.completed["spec"], **options)

    def choose_names(self, update):
        """Before anything derives a name from the completed spec: whether a look-alike cluster holds kops' names."""
        names_plan = update.driver.choose_names(update.cloud(), update.store, update.completed, update.dry_run)
        for entry in names_plan:
            if entry.action != "unchanged":
                update.warn(entry.name)
        return names_plan

    def account(self, update):
        return _addon_account(update.driver, update.completed, update.cloud)

    def control_plane_addresses(self, update):
        return update.driver.control_plane_addresses(update.cloud(), update.completed)

    def karpenter_cloud(self, update):
        return update.cloud

    def resolve(self, update, tasks):
        """Nothing: the tasks find what they refer to in the cloud."""

    def _run_tasks(self, update, cloud, tasks, dry_run):
        # What earlier runs made that no query by tag finds (AWS's service-account IAM) comes from the cluster's
        # record.
        made = update.driver.recall_made_objects(cloud, update.store, tasks, dry_run)
        plan = runner.run(tasks, cloud, dry_run=dry_run, workers=self.workers, deadline=self.deadline,
                          progress=self.progress, kinds=update.driver.task_classes())
        update.driver.record_made_objects(update.store, made, dry_run)
        return plan

    def apply(self, update, tasks):
        driver, completed = update.driver, update.completed
        self.say(update, "reconciling %d cloud object(s), %d at a time (gives up after %d s)"
                 % (len(tasks), self.workers, self.deadline))
        plan = update.names_plan + self._run_tasks(update, update.cloud(), tasks, update.dry_run)
        if update.dry_run or update.addresses or not driver.made_control_plane_endpoint(plan, completed):
            return Outcome(plan)
        # The one second pass, only on the run that made the control plane's endpoint of a cluster without DNS: the
        # workers' launch templates pin the API balancer's addresses (kops' APIServerIPs), which exist only once
        # the balancer does.  kops waits for the balancer before it renders the workers' boot config; the task
        # graph here is built before the run, so the launch templates are written again with the addresses.
        # Measured in tests/integration/test_aws_dns_none.py: the second pass changes one object, the workers'
        # launch template, which without it would boot workers with no address for api.internal (they never
        # join); it costs that one create a second find of every object, and a run on a cluster whose balancer
        # exists (every later run, every check-mode run) never makes it.
        self.say(update, "waiting (up to %d s) for the control plane's new endpoint, whose addresses the workers' "
                 "launch templates pin" % self.deadline)
        cloud = self.new_cloud(update)  # a fresh cloud: no cached lookups of the first pass
        addresses = driver.control_plane_addresses(cloud, completed, wait=self.deadline)
        if not addresses:
            return Outcome(plan)
        self.say(update, "writing the launch templates again with the control plane's addresses %s"
                 % ", ".join(addresses))
        user_data = update.group_user_data(addresses)
        plan = merge_plans(plan, self._run_tasks(update, cloud, list(update.build_tasks(user_data).values()), False))
        # Karpenter's boot scripts carry the final user data (no instance of ours pins them, nor its node classes).
        final = karpenter_scripts(update.groups, user_data)
        if update.karpenter_nodes and any(node["user_data"] != user_data.get(name)
                                          for name, node in update.karpenter_nodes.items()):
            final += update.addon_files(driver.karpenter_nodes(lambda: cloud, completed, update.groups, user_data,
                                                               update.warn))
        changes = update.store.differing(final)
        if changes:
            update.store.apply(changes)
        return Outcome(plan, store_changed=bool(changes))

    def result(self, update, outcome, store_changed):
        return outcome.plan, update.completed, store_changed


class Terraform(Target):
    """kubernetes.tf and its data/ files in out_dir; with an s3:// store, the files kops manages through Terraform
    become aws_s3_object resources instead of being written (keys, secrets and the bootstrap addon, which holds the
    token, are still written directly)."""

    name = "terraform"

    def __init__(self, out_dir):
        self.out_dir = out_dir

    def store_objects(self, update, files, discovery, tasks):
        covered = update.driver.store_objects(
            update.cluster_name, update.store.config_base(),
            [(p, d) for p, d in files if p != nodeup_store.BOOTSTRAP_ADDON_PATH], tasks)
        return covered, update.driver.discovery_objects(update.completed, discovery, tasks, update.warn)

    def result(self, update, outcome, store_changed):
        driver, spec = update.driver, update.completed["spec"]
        text = terraform.render(outcome.tasks, driver.terraform_providers(region_of(spec), spec=spec),
                                variables=terraform_variables(update.completed))
        path, changed, text = _write_if_changed(os.path.join(self.out_dir, "kubernetes.tf"), text, update.dry_run)
        for relpath, data in terraform.data_files(outcome.tasks):
            before = _read_text(os.path.join(self.out_dir, relpath))
            file_changed = _write_if_changed(os.path.join(self.out_dir, relpath), data, update.dry_run)[1]
            after = _text(data)
            if file_changed and after is not None and "\n" in after:
                update.documents.append((TERRAFORM_FILE_KIND, relpath, before, after))
            changed = file_changed or changed
        return path, changed or store_changed, text


class CloudFormation(Target):
    """kubernetes.json, a CloudFormation template, in out_dir (the user data is in the template)."""

    name = "cloudformation"

    def __init__(self, out_dir):
        self.out_dir = out_dir

    def result(self, update, outcome, store_changed):
        text = cloudformation.render(outcome.tasks, description="kops cluster %s" % update.cluster_name)
        path, changed, text = _write_if_changed(os.path.join(self.out_dir, "kubernetes.json"), text, update.dry_run)
        return path, changed or store_changed, text


def _updated(service, cluster_name, target, dry_run, ssh_public_key, planned, warn, documents):
    """The pipeline under the cluster's lease (check mode and a planned cluster take none)."""
    with _lease(service, cluster_name, dry_run or planned is not None):
        return Update(service, cluster_name, target, dry_run, ssh_public_key, planned, warn, documents).run()


def apply_direct(service, cluster_name, dry_run, cloud_factory=None, workers=8, ssh_public_key=None,
                 deadline=runner.DEFAULT_DEADLINE, progress=None, cloud_options=None, planned=None, warn=None,
                 documents=None):
    """Reconcile the cluster's cloud objects; returns (plan, completed spec, store changed?).

    cloud_factory(cluster_name, region): the cloud to run against (tests); by default the
    driver's, with cloud_options ({"region": ..., "profile": ...}; region defaults to the spec's).
    planned: see load_completed (check mode only).
    warn(message): told what the run cannot do as kops would (see spec_warnings); ignored by default.
    documents: a list the nodeup configs this run writes anew are appended to (node_config_changes).
    A real run holds the cluster's lease in the store throughout, so a second run cannot race it.
    """
    target = Direct(cloud_factory, cloud_options, workers, deadline, progress)
    return _updated(service, cluster_name, target, dry_run, ssh_public_key, planned, warn, documents)


def _lease(service, cluster_name, dry_run):
    """The cluster's lease for a real run; a check-mode run takes none, but it too is refused while a delete runs
    (its plan would show the cluster's objects being recreated)."""
    if dry_run:
        service.cluster_store(cluster_name).refuse_while_deleting("cluster_update")
        return contextlib.nullcontext()
    return service.lease(cluster_name, owner="cluster_update")


def _ignore(_message):
    pass


# The kind the plan shows a group's nodeup config as (kops' dry run: ManagedFile/nodeupconfig-<group>).
NODEUP_CONFIG_KIND = "nodeup_config"


def node_config_changes(store, groups, node_changes):
    """[(NODEUP_CONFIG_KIND, group name, stored text or None, new text)] for each group whose nodeup config
    node_changes (nodeup_store.node_files') holds anew: what its nodes are handed changes, and their launch
    template's user data only pins its hash.  Read before the run writes anything."""
    written = dict(node_changes)
    changes = []
    for group in groups:
        path = nodeup_config.config_path(group)
        new = written.get(path)
        if new is None or store.matches(path, new):  # the listing's md5 spares reading an unchanged config
            continue
        old = store.read(path)  # None: a new group's
        if old != new:
            changes.append((NODEUP_CONFIG_KIND, objects.name_of(group), None if old is None else old.decode("utf-8"),
                            new.decode("utf-8")))
    return changes


def merge_plans(first, second):
    """One run's plan from two passes: the second pass's changes over the first's entries (an object created by
    the first pass stays reported as created)."""
    merged = {(entry.kind, entry.name): entry for entry in first}
    order = [(entry.kind, entry.name) for entry in first]
    for entry in second:
        key = (entry.kind, entry.name)
        if entry.action == runner.UNCHANGED and key in merged:
            continue
        if key not in merged:
            order.append(key)
        elif merged[key].action == runner.CREATE:
            entry = runner.PlanEntry(entry.kind, entry.name, runner.CREATE, entry.changes, entry.id, entry.shared)
        merged[key] = entry
    return [merged[key] for key in order]


def _warn_not_rendered(completed, groups, warn):
    """Never dropped silently: the cluster works without the addons kubeops.kops does not render, but not as kops
    would run it."""
    missing = addon_channel.not_rendered_for(completed, groups)
    if missing:
        warn("the spec asks for addons kubeops.kops does not render yet, so the bootstrap channel goes without them: "
             "%s (docs/addons.md; apply your own manifests for them)" % ", ".join(missing))
    for name, what in addon_channel.workers_without_for(completed, groups):
        warn("%s is applied, but workers on %s do not get %s: the bootstrap service that issues it verifies AWS "
             "identities only (docs/bootstrap-service.md)" % (name, completed["spec"].get("cloudProvider"), what))


# A rendered target (Terraform, CloudFormation) without AWS credentials: the account the termination handler's
# QUEUE_URL names until a run with credentials renders it again (the run warns so).
UNKNOWN_ACCOUNT = "000000000000"


def _render_account(driver, completed, cloud, warn):
    """_addon_account for a rendered target: UNKNOWN_ACCOUNT, with a warning, when the account cannot be asked (no
    credentials: Terraform for review, `make demo`); a direct apply has a cloud, and its lookup failing fails the run."""
    try:
        return _addon_account(driver, completed, cloud)
    except ValueError:
        warn("no AWS account could be asked (no credentials): node-termination-handler's QUEUE_URL and the "
             "service-account roles' ARNs and trust policies (IRSA) name account %s; render again with AWS credentials "
             "before applying" % UNKNOWN_ACCOUNT)
        return UNKNOWN_ACCOUNT


def _addon_account(driver, completed, cloud):
    """The account id (the driver's) when the addons or the model need it (the termination handler's SQS queue URL,
    the service-account roles' ARNs and trust policies), else None."""
    return driver.account_id(cloud()) if addon_channel.needs_account_id(completed) else None


def boot_artifacts_for(service, completed, store, dry_run):
    """The nodes' pinned boot artefacts (nodeconfig/boot_artifacts.py), uploaded where they are missing unless dry_run."""
    boot = boot_artifacts.build(completed, store.config_base())
    if boot.base == store.config_base().rstrip("/"):
        target = boot_artifacts.Prefixed(service.store, store.name + "/")
    else:
        target = boot_artifacts.open_base_store(boot.base)
    boot.uploaded = [] if dry_run else boot.upload(target)
    return boot


def group_user_data(driver, completed, groups, config_base, hashes, boot, node_changes=(), api_server_ips=()):
    """{instance group name: user data} for the launch templates, with the driver's boot environment.
    node_changes (nodeup_store.node_files'): the groups' nodeup configs, whose bootstrap service settings
    a worker's boot script carries to ask the service for its config; api_server_ips: the API balancer's
    addresses workers pin the control plane's names to (dns None: driver.control_plane_addresses)."""
    environment = driver.boot_environment(completed)
    documents = dict(node_changes)
    user_data = {}
    for group in groups:
        name = objects.name_of(group)
        document = documents.get(nodeup_config.config_path(group))
        settings = bootstrap.config_server(objects.load_yaml(document), api_server_ips=api_server_ips) if document else None
        data = bootstrap.bootstrap_user_data(completed, group, config_base, hashes.get(name),
                                             (boot.manifest_url, boot.manifest_sha256), environment=environment,
                                             config_server_settings=settings)
        if data is not None:
            user_data[name] = data
    return user_data


def karpenter_scripts(groups, user_data):
    """kops' nodeupscript-<group> for each Karpenter group: the boot script its EC2NodeClass gives the instances
    Karpenter launches (no launch template of ours carries it), at igconfig/node/<group>/nodeupscript.sh."""
    scripts = []
    for group in groups:
        name = objects.name_of(group)
        if (group.get("spec") or {}).get("manager") == "Karpenter" and user_data.get(name) is not None:
            path = nodeup_config.config_path(group).rsplit("/", 1)[0] + "/nodeupscript.sh"
            data = user_data[name]
            scripts.append((path, data.encode("utf-8") if isinstance(data, str) else data))
    return scripts


def discovery_documents(store, completed, node_changes):
    """The service-account issuer's discovery documents (pki/discovery.py) with the keyset this run writes, if new."""
    if not discovery.discovery_store(completed["spec"]):
        return []
    path = keystore.path(discovery.SIGNING_KEYSET)
    written = [data for changed, data in node_changes if changed == path]
    keyset = (objects.load_yaml_documents(written[0].decode("utf-8"), source=path)[0] if written
              else keystore.load(store, discovery.SIGNING_KEYSET))
    return discovery.documents(completed, keyset)


def managed_files(completed):
    """The state-store files update writes beside the cloud objects (kops' ManagedFile tasks):
    the completed spec, the kops version that applied it, and each etcd cluster's
    control spec that etcd-manager (here roles/protokube) reads to form the cluster."""
    files = [(layout.COMPLETED_SPEC, objects.dump_object(completed).encode("utf-8")),
             (layout.KOPS_VERSION, (channels.KOPS_VERSION + "\n").encode("utf-8"))]
    for etcd in completed["spec"].get("etcdClusters") or []:
        control = {"memberCount": len(etcd.get("etcdMembers") or []), "etcdVersion": etcd.get("version")}
        files.append((layout.ETCD_CLUSTER_SPEC % etcd["name"],
                      json.dumps(control, indent=2).encode("utf-8")))
    return files


def terraform_variables(completed):
    """The outputs kops' apply_cluster writes itself, for any cloud: cluster_name, region and, when the cluster
    has one (GCE), project.  Every other output is a task's (Task.terraform_outputs)."""
    spec = completed["spec"]
    variables = {"cluster_name": completed["metadata"]["name"], "region": region_of(spec)}
    if spec.get("project"):
        variables["project"] = spec["project"]
    return variables


# The kind the plan shows a text file of the Terraform output as (a launch template's user data).
TERRAFORM_FILE_KIND = "terraform_file"


def render_terraform(service, cluster_name, out_dir, dry_run, ssh_public_key=None, planned=None, warn=None,
                     documents=None):
    """Write <out_dir>/kubernetes.tf and its data/ files; returns (path, changed, text).
    documents: a list the nodeup configs and the data/ text files (user data) this run writes anew are appended to,
    as (kind, name, before or None, after)."""
    return _updated(service, cluster_name, Terraform(out_dir), dry_run, ssh_public_key, planned, warn, documents)


def _text(data):
    """data (bytes or str) as text, None when it is not UTF-8."""
    try:
        return data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError:
        return None


def _read_text(path):
    """The text of the file at path, None when there is none (or it is not text)."""
    try:
        with open(path, "rb") as handle:
            return _text(handle.read())
    except OSError:
        return None


def render_cloudformation(service, cluster_name, out_dir, dry_run, ssh_public_key=None, planned=None, warn=None,
                          documents=None):
    """Write <out_dir>/kubernetes.json (a CloudFormation template); returns (path, changed, text).
    documents: as render_terraform's, for the nodeup configs (the user data is in the template)."""
    return _updated(service, cluster_name, CloudFormation(out_dir), dry_run, ssh_public_key, planned, warn, documents)


def resolve_from_facts(tasks, facts):
    """What kops looks up in the cloud while it renders (the id of a hosted zone named by name, a shared VPC's
    egress-only gateway), from the cloud facts, for the tasks that take it (resolve_from_facts)."""
    for task in tasks:
        resolve = getattr(task, "resolve_from_facts", None)
        if resolve is not None:
            try:
                resolve(facts)
            except CloudFactsError:
                pass  # not found or not askable: the task renders without it (a data source, or one line naming it)


def _write_if_changed(path, text, dry_run):
    """Write text (str) or data (bytes) at path unless it is there already; (path, changed, text)."""
    binary = isinstance(text, bytes)
    try:
        with open(path, "rb" if binary else "r") as handle:
            changed = handle.read() != text
    except FileNotFoundError:
        changed = True
    except OSError as exc:
        raise UpdateError("out_dir: cannot read %s (%s); give a directory you can write" % (path, exc.strerror))
    if changed and not dry_run:
        try:
            atomic_write(path, 0o644, text)
        except OSError as exc:
            raise UpdateError("out_dir: cannot write %s (%s); give a directory you can write" % (path, exc.strerror))
    return path, changed, text
