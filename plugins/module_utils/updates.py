# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""`kops update cluster`: completed spec -> the provider's tasks -> engine -> target.

One pipeline for every cloud: load the cluster and complete it with its
instance groups once, write what the nodes read, ask the provider's driver
(providers/) for the tasks, then run them (direct; check mode = find and
compare only) or render them (terraform, cloudformation).  Nothing here
knows a particular cloud.
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
    """(completed Cluster, instance groups) of a stored cluster, validated.

    planned: (Cluster, instance groups) to use instead of the stored ones: what a check-mode
    create would write, so a new cluster's cloud can be planned before anything is stored.
    """
    cluster, groups = planned if planned else service.read(cluster_name)
    if cluster is None:
        raise UpdateError("cluster %r not found in %s; create it first" % (cluster_name, service.store.url("")))
    completed = service.validate(cluster, groups)
    return completed, service.completed_groups(cluster, groups)


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
    with _lease(service, cluster_name, dry_run or planned is not None):
        return _apply_direct(service, cluster_name, dry_run, cloud_factory, workers, ssh_public_key, deadline,
                             progress, cloud_options, planned, warn or _ignore,
                             [] if documents is None else documents)


def _lease(service, cluster_name, dry_run):
    """The cluster's lease for a real run; a check-mode run takes none, but it too is refused while a delete runs
    (its plan would show the cluster's objects being recreated)."""
    if dry_run:
        service.cluster_store(cluster_name).refuse_while_deleting("cluster_update")
        return contextlib.nullcontext()
    return service.lease(cluster_name, owner="cluster_update")


def _ignore(_message):
    pass


def _apply_direct(service, cluster_name, dry_run, cloud_factory, workers, ssh_public_key, deadline, progress,
                  cloud_options, planned, warn, documents):
    def say(line):  # a real run's phases on the console (module_utils/waits.py); a dry run is quick and quiet
        if not dry_run:
            waits.notice(line)
    say("reading %s from the state store and rendering what its nodes read" % cluster_name)
    completed, groups = load_completed(service, cluster_name, planned)
    _warn_not_rendered(completed, groups, warn)
    driver = driver_for(completed["spec"])
    keys, keys_changed = ssh_public_keys(service, cluster_name, ssh_public_key, dry_run)
    store = service.cluster_store(cluster_name)
    options = dict(cloud_options or {})
    # A region other than the zones' would plan a second cluster there: refused before any call.
    provider_for(completed["spec"]).check_region(options.get("region"), completed)
    region = options.pop("region", None) or region_of(completed["spec"])

    def new_cloud():
        return cloud_factory(cluster_name, region) if cloud_factory else driver.cloud(cluster_name, region,
                                                                                      spec=completed["spec"], **options)
    cloud = new_cloud()
    # Before anything derives a name from the completed spec: whether a look-alike cluster holds kops' names.
    names_plan = driver.choose_names(cloud, store, completed, dry_run)
    for entry in names_plan:
        if entry.action != "unchanged":
            warn(entry.name)
    # Before the tasks: each launch template's user data pins its group's nodeup config hash.
    node_changes, hashes = nodeup_store.node_files(store, completed, groups,
                                                   getattr(service.facts, "etcd_sha256", None), warn)
    documents.extend(node_config_changes(store, groups, node_changes))
    boot = boot_artifacts_for(service, completed, store, dry_run)
    # The store first (kops' keypair and managed-file tasks come before the launch templates that pin them): every
    # object a node's user data pins (nodeup configs, the keysets they carry, the boot artefacts above) is stored
    # before any launch template, group or instance can refer to it, so a run killed after the groups launched
    # leaves no instance pinned to a config the store lacks, and the next run finds and reuses the same CAs.
    account = _addon_account(completed, lambda: cloud)
    # Without DNS the workers' user data pins the control plane's addresses (kops' APIServerIPs), once they exist.
    addresses = driver.control_plane_addresses(cloud, completed)
    user_data = group_user_data(driver, completed, groups, store.config_base(), hashes, boot, node_changes, addresses)
    # Karpenter's EC2NodeClasses carry the boot scripts of its groups (kops' nodeupscript as userData).
    karpenter_nodes = driver.karpenter_nodes(lambda: cloud, completed, groups, user_data, warn)
    addon_changes = addon_channel.store_files(completed, groups, node_changes, account_id=account,
                                              karpenter_nodes=karpenter_nodes)
    changes = store.differing(managed_files(completed) + node_changes + addon_changes)
    if changes and not dry_run:
        say("writing %d file(s) the nodes read to the state store" % len(changes))
        store.apply(changes)
    if not dry_run:
        nodeup_store.refresh_keyset_bundle(store, completed)
    tasks = list(driver.build_tasks(completed, groups, keys, user_data, account_id=account).values())
    # What earlier runs made that no query by tag finds (AWS's service-account IAM) comes from the cluster's record.
    made = driver.recall_made_objects(cloud, store, tasks, dry_run)
    say("reconciling %d cloud object(s), %d at a time (gives up after %d s)" % (len(tasks), workers, deadline))
    plan = runner.run(tasks, cloud, dry_run=dry_run, workers=workers, deadline=deadline, progress=progress,
                      kinds=driver.task_classes())
    driver.record_made_objects(store, made, dry_run)
    if not dry_run and not addresses and driver.made_control_plane_endpoint(plan, completed):
        say("waiting (up to %d s) for the control plane's new endpoint, whose addresses the workers' launch "
            "templates pin" % deadline)
        addresses = driver.control_plane_addresses(new_cloud(), completed, wait=deadline)
        if addresses:
            say("writing the launch templates again with the control plane's addresses %s" % ", ".join(addresses))
            # The endpoint was made by this run: kops waits for it before rendering the workers' boot config;
            # here a second pass writes the launch templates again with its addresses (a fresh cloud: no cached
            # lookups of the first pass).
            user_data = group_user_data(driver, completed, groups, store.config_base(), hashes, boot, node_changes,
                                        addresses)
            tasks = list(driver.build_tasks(completed, groups, keys, user_data, account_id=account).values())
            second_cloud = new_cloud()
            made = driver.recall_made_objects(second_cloud, store, tasks, False)
            plan = merge_plans(plan, runner.run(tasks, second_cloud, dry_run=False, workers=workers, deadline=deadline,
                                                progress=progress, kinds=driver.task_classes()))
            driver.record_made_objects(store, made, False)
    # Karpenter's boot scripts carry the final user data; no instance of ours pins them (nor its node classes,
    # rendered again when the second pass changed the scripts).
    final_scripts = karpenter_scripts(groups, user_data)
    if karpenter_nodes and any(node["user_data"] != user_data.get(name) for name, node in karpenter_nodes.items()):
        karpenter_nodes = driver.karpenter_nodes(new_cloud, completed, groups, user_data, warn)
        final_scripts += addon_channel.store_files(completed, groups, node_changes, account_id=account,
                                                   karpenter_nodes=karpenter_nodes)
    script_changes = store.differing(final_scripts)
    if script_changes and not dry_run:
        store.apply(script_changes)
    published = discovery_store.publish(completed, discovery_documents(store, completed, node_changes), dry_run, warn)
    return names_plan + plan, completed, bool(changes) or bool(script_changes) or keys_changed or bool(boot.uploaded) or published


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


def _render_account(completed, cloud, warn):
    """_addon_account for a rendered target: UNKNOWN_ACCOUNT, with a warning, when the account cannot be asked (no
    credentials: Terraform for review, `make demo`); a direct apply has a cloud, and its lookup failing fails the run."""
    try:
        return _addon_account(completed, cloud)
    except ValueError:
        warn("no AWS account could be asked (no credentials): node-termination-handler's QUEUE_URL and the "
             "service-account roles' ARNs and trust policies (IRSA) name account %s; render again with AWS credentials "
             "before applying" % UNKNOWN_ACCOUNT)
        return UNKNOWN_ACCOUNT


def _addon_account(completed, cloud):
    """The AWS account id when the addons or the model need it (the termination handler's SQS queue URL, the
    service-account roles' ARNs and trust policies), else None."""
    return addon_channel.account_of(cloud()) if addon_channel.needs_account_id(completed) else None


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
    documents = [] if documents is None else documents
    with _lease(service, cluster_name, dry_run or planned is not None):
        completed, _groups, tasks, store_changed = _tasks_for(service, cluster_name, ssh_public_key, dry_run,
                                                              store_objects=True, planned=planned, target="terraform",
                                                              warn=warn or _ignore, documents=documents)
    driver = driver_for(completed["spec"])
    text = terraform.render(tasks, driver.terraform_providers(region_of(completed["spec"]), spec=completed["spec"]),
                            variables=terraform_variables(completed))
    path, changed, text = _write_if_changed(os.path.join(out_dir, "kubernetes.tf"), text, dry_run)
    for relpath, data in terraform.data_files(tasks):
        before = _read_text(os.path.join(out_dir, relpath))
        file_changed = _write_if_changed(os.path.join(out_dir, relpath), data, dry_run)[1]
        after = _text(data)
        if file_changed and after is not None and "\n" in after:
            documents.append((TERRAFORM_FILE_KIND, relpath, before, after))
        changed = file_changed or changed
    return path, changed or store_changed, text


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
    with _lease(service, cluster_name, dry_run or planned is not None):
        completed, _groups, tasks, store_changed = _tasks_for(service, cluster_name, ssh_public_key, dry_run,
                                                              planned=planned, target="cloudformation",
                                                              warn=warn or _ignore, documents=documents)
    text = cloudformation.render(tasks, description="kops cluster %s" % cluster_name)
    path, changed, text = _write_if_changed(os.path.join(out_dir, "kubernetes.json"), text, dry_run)
    return path, changed or store_changed, text


def _tasks_for(service, cluster_name, ssh_public_key, dry_run, store_objects=False, planned=None, target=None,
               warn=_ignore, documents=None):
    """(completed spec, instance groups, tasks, whether the store changes) for a rendered target.

    The nodes of a Terraform / CloudFormation cluster boot from the same store
    files as a direct one, so (unless dry_run) the nodeup configs, new keysets
    and the bootstrap token are written to the store like apply_direct does;
    their hashes go into the launch templates' user data.  With store_objects
    (Terraform) and an s3:// store, the files kops manages through Terraform
    become aws_s3_object resources instead of being written (keys, secrets and
    the bootstrap addon, which holds the token, are still written directly).
    """
    completed, groups = load_completed(service, cluster_name, planned)
    driver = driver_for(completed["spec"])
    if target not in driver.targets:  # refused before anything is written
        rendered = " or ".join(t for t in driver.targets if t != "direct")
        raise UpdateError("target=%s: a %s cluster %s" % (
            target, driver.provider.upper(), "applies directly or renders as " + rendered if rendered else
            "has nothing in a cloud to render; use target: direct, which writes the state store's files"))
    _warn_not_rendered(completed, groups, warn)
    keys, keys_changed = ssh_public_keys(service, cluster_name, ssh_public_key, dry_run)
    store = service.cluster_store(cluster_name)
    driver.recorded_names(store, completed)
    node_changes, hashes = nodeup_store.node_files(store, completed, groups,
                                                   getattr(service.facts, "etcd_sha256", None), warn)
    if documents is not None:
        documents.extend(node_config_changes(store, groups, node_changes))
    account = _render_account(
        completed, lambda: driver.cloud(cluster_name, region_of(completed["spec"]), spec=completed["spec"]), warn)
    boot = boot_artifacts_for(service, completed, store, dry_run)
    user_data = group_user_data(driver, completed, groups, store.config_base(), hashes, boot, node_changes)
    # Karpenter's node classes name their images' root devices: asked of the cloud when cloud lookups are on.
    looks_up = getattr(service.facts, "looks_up", False)
    karpenter_nodes = driver.karpenter_nodes(
        lambda: driver.cloud(cluster_name, region_of(completed["spec"]), spec=completed["spec"]) if looks_up else None,
        completed, groups, user_data, warn)
    files = managed_files(completed) + node_changes + addon_channel.store_files(
        completed, groups, node_changes, account_id=account, karpenter_nodes=karpenter_nodes)
    files += karpenter_scripts(groups, user_data)
    tasks = driver.build_tasks(completed, groups, keys, user_data, account_id=account)
    resolve_from_facts(tasks.values(), service.facts)
    documents = discovery_documents(store, completed, node_changes)
    covered, published = [], []
    if store_objects:
        covered = driver.store_objects(
            cluster_name, store.config_base(), [(p, d) for p, d in files if p != nodeup_store.BOOTSTRAP_ADDON_PATH],
            tasks)
        published = driver.discovery_objects(completed, documents, tasks, warn)
    changes = store.differing([(path, data) for path, data in files if path not in covered])
    if changes and not dry_run:
        store.apply(changes)
    if not dry_run:
        nodeup_store.refresh_keyset_bundle(store, completed)
    documents = [d for d in documents if d[0] not in published]
    discovery_changed = discovery_store.publish(completed, documents, dry_run, warn)
    return (completed, groups, list(tasks.values()),
            bool(changes) or keys_changed or bool(boot.uploaded) or discovery_changed)


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
