# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""`kops update cluster`: completed spec -> AWS tasks -> engine -> target.

Targets: direct (reconcile through the AWS APIs), terraform (write
kubernetes.tf), and the dry run (check mode: find and compare only).
"""

from __future__ import annotations

import json
import os

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.completion import channels
from ansible_collections.kubeops.kops.plugins.module_utils.engine import cloudformation, runner, terraform
from ansible_collections.kubeops.kops.plugins.module_utils.engine.hcl import Expression
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import autoscaling
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import cluster as aws_model
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import sshkey
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import store_objects as store_objects_model
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws.network import region_of
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import bootstrap
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import store as nodeup_store
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import layout
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.base import Ref

TARGETS = ("direct", "terraform", "cloudformation")


class UpdateError(ValueError):
    pass


def load_completed(service, cluster_name):
    """(completed Cluster, instance groups) of a stored cluster, validated."""
    cluster, groups = service.read(cluster_name)
    if cluster is None:
        raise UpdateError("cluster %r not found in %s; create it first" % (cluster_name, service.store.url("")))
    completed = service.validate(cluster, groups)
    if completed["spec"].get("cloudProvider") != "aws":
        raise UpdateError("cluster %s: cloudProvider %s is not supported by cluster_update yet (aws only)"
                          % (cluster_name, completed["spec"].get("cloudProvider")))
    return completed, groups


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


def apply_direct(service, cluster_name, dry_run, cloud_factory, workers=8, ssh_public_key=None):
    """Reconcile the cluster's AWS objects; returns (plan, completed spec, store changed?)."""
    completed, groups = load_completed(service, cluster_name)
    keys, keys_changed = ssh_public_keys(service, cluster_name, ssh_public_key, dry_run)
    store = service.cluster_store(cluster_name)
    # Before the tasks: each launch template's user data pins its group's nodeup config hash.
    node_changes, hashes = nodeup_store.node_files(store, completed, groups)
    user_data = group_user_data(completed, groups, store.config_base(), hashes)
    tasks = list(aws_model.build_tasks(completed, groups, keys, user_data).values())
    cloud = cloud_factory(cluster_name, region_of(completed["spec"]))
    plan = runner.run(tasks, cloud, dry_run=dry_run, workers=workers)
    changes = [(path, data) for path, data in managed_files(completed) + node_changes if store.read(path) != data]
    if changes and not dry_run:
        store.apply(changes)
    return plan, completed, bool(changes) or keys_changed


def group_user_data(completed, groups, config_base, hashes):
    """{instance group name: boot script} for the launch templates (kops exports AWS_REGION to nodeup)."""
    region = region_of(completed["spec"])
    return {objects.name_of(group): bootstrap.bootstrap_user_data(
        completed, group, config_base, hashes[objects.name_of(group)], environment={"AWS_REGION": region})
        for group in groups if objects.name_of(group) in hashes}


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


def render_terraform(service, cluster_name, out_dir, dry_run, ssh_public_key=None):
    """Write <out_dir>/kubernetes.tf and its data/ files; returns (path, changed, text)."""
    completed, groups, tasks, store_changed = _tasks_for(service, cluster_name, ssh_public_key, dry_run,
                                                         store_objects=True)
    text = terraform.render(tasks, region_of(completed["spec"]), outputs=_outputs(completed, groups, tasks))
    path, changed, text = _write_if_changed(os.path.join(out_dir, "kubernetes.tf"), text, dry_run)
    for relpath, data in terraform.data_files(tasks):
        changed = _write_if_changed(os.path.join(out_dir, relpath), data, dry_run)[1] or changed
    return path, changed or store_changed, text


def render_cloudformation(service, cluster_name, out_dir, dry_run, ssh_public_key=None):
    """Write <out_dir>/kubernetes.json (a CloudFormation template); returns (path, changed, text)."""
    completed, _groups, tasks, store_changed = _tasks_for(service, cluster_name, ssh_public_key, dry_run)
    text = cloudformation.render(tasks, description="kops cluster %s" % cluster_name)
    path, changed, text = _write_if_changed(os.path.join(out_dir, "kubernetes.json"), text, dry_run)
    return path, changed or store_changed, text


def _tasks_for(service, cluster_name, ssh_public_key, dry_run, store_objects=False):
    """(completed spec, instance groups, tasks, whether the store changes) for a rendered target.

    The nodes of a Terraform / CloudFormation cluster boot from the same store
    files as a direct one, so (unless dry_run) the nodeup configs, new keysets
    and the bootstrap token are written to the store like apply_direct does;
    their hashes go into the launch templates' user data.  With store_objects
    (Terraform) and an s3:// store, the files kops manages through Terraform
    become aws_s3_object resources instead of being written (keys, secrets and
    the bootstrap addon, which holds the token, are still written directly).
    """
    completed, groups = load_completed(service, cluster_name)
    keys, keys_changed = ssh_public_keys(service, cluster_name, ssh_public_key, dry_run)
    store = service.cluster_store(cluster_name)
    node_changes, hashes = nodeup_store.node_files(store, completed, groups)
    files = managed_files(completed) + node_changes
    user_data = group_user_data(completed, groups, store.config_base(), hashes)
    tasks = aws_model.build_tasks(completed, groups, keys, user_data)
    covered = []
    if store_objects:
        covered = store_objects_model.build_store_objects(
            cluster_name, store.config_base(), [(p, d) for p, d in files if p != nodeup_store.BOOTSTRAP_ADDON_PATH],
            tasks)
    changes = [(path, data) for path, data in files if path not in covered and store.read(path) != data]
    if changes and not dry_run:
        store.apply(changes)
    return completed, groups, list(tasks.values()), bool(changes) or keys_changed


def _write_if_changed(path, text, dry_run):
    """Write text (str) or data (bytes) at path unless it is there already; (path, changed, text)."""
    out_dir = os.path.dirname(path)
    binary = isinstance(text, bytes)
    try:
        with open(path, "rb" if binary else "r") as handle:
            changed = handle.read() != text
    except FileNotFoundError:
        changed = True
    if changed and not dry_run:
        os.makedirs(out_dir, exist_ok=True)
        temp = path + ".tmp"
        with open(temp, "wb" if binary else "w") as handle:
            handle.write(text)
        os.replace(temp, path)
    return path, changed, text


# Instance-group role -> (output prefix, security group prefix, IAM role prefix), as kops names its outputs.
OUTPUT_ROLES = ((objects.ROLE_CONTROL_PLANE, "master", "masters", "masters"), (objects.ROLE_NODE, "node", "nodes", "nodes"),
                (objects.ROLE_BASTION, "bastion", "bastion", "bastions"))
IPV6_CIDR_LENGTH = 'local.vpc_ipv6_cidr_block == "" ? null : tonumber(regex(".*/(\\\\d+)", local.vpc_ipv6_cidr_block)[0])'


def _outputs(completed, groups, tasks):
    """kops' outputs and locals: cluster, region, VPC, subnets, route tables, and per instance-group role
    its autoscaling groups, security groups (additional ones first), IAM role and, for nodes, subnets."""
    name = completed["metadata"]["name"]
    spec = completed["spec"]
    by_key = {task.key: task for task in tasks}

    def ref(kind, task_name, attribute="id"):
        return Ref(by_key["%s/%s" % (kind, task_name)], attribute).terraform()

    outputs = {"cluster_name": name, "region": region_of(spec), "vpc_id": ref("aws_vpc", name),
               "vpc_cidr_block": ref("aws_vpc", name, "cidr_block"),
               "vpc_ipv6_cidr_block": ref("aws_vpc", name, "ipv6_cidr_block"),
               "vpc_ipv6_cidr_length": Expression(IPV6_CIDR_LENGTH),
               "route_table_public_id": ref("aws_route_table", name)}
    for task in tasks:
        if task.kind == "aws_route_table" and task.name.startswith("private-"):
            outputs["route_table_%s_id" % task.name[:-len(name) - 1]] = ref("aws_route_table", task.name)
    for subnet in spec.get("subnets") or []:
        outputs["subnet_%s_id" % subnet["name"]] = ref("aws_subnet", "%s.%s" % (subnet["name"], name))
    for role, label, group_prefix, role_prefix in OUTPUT_ROLES:
        members = [g for g in groups if (g.get("spec") or {}).get("role") == role]
        asgs = sorted((by_key[k] for k in ("aws_autoscaling_group/" + autoscaling.group_object_name(name, g)
                                           for g in members) if k in by_key), key=lambda t: t.terraform_name)
        if asgs:
            outputs["%s_autoscaling_group_ids" % label] = [Ref(t).terraform() for t in asgs]
        if "aws_security_group/%s.%s" % (group_prefix, name) in by_key:
            extra = {sg for g in members for sg in g["spec"].get("additionalSecurityGroups") or []}
            if role == objects.ROLE_CONTROL_PLANE:  # kops lists the API load balancer's extra groups here too
                extra |= set(((spec.get("api") or {}).get("loadBalancer") or {}).get("additionalSecurityGroups") or [])
            extra = sorted(extra)
            outputs["%s_security_group_ids" % label] = extra + [ref("aws_security_group", "%s.%s" % (group_prefix, name))]
        if "aws_iam_role/%s.%s" % (role_prefix, name) in by_key:
            outputs["%s_role_arn" % role_prefix] = ref("aws_iam_role", "%s.%s" % (role_prefix, name), "arn")
            outputs["%s_role_name" % role_prefix] = ref("aws_iam_role", "%s.%s" % (role_prefix, name), "name")
        if role == objects.ROLE_NODE:
            subnets = sorted({s for g in members for s in g["spec"].get("subnets") or []})
            outputs["node_subnet_ids"] = [ref("aws_subnet", "%s.%s" % (s, name)) for s in subnets]
    return outputs
