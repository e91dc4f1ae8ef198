# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The boot script in a launch template's user data (kops' bootstrapscript.go, the Ansible way).

kops' script downloads the nodeup binary and runs it.  Ours installs
ansible-core into a venv, fetches this collection and the group's nodeup
config from the state store, and runs playbooks/nodeup.yml locally
(`-c local`, ansible-pull style).  It stays small: EC2 caps user data at 16 KB.

The script carries the sha256 of the group's nodeup config (kops'
NodeupConfigHash), so a config change changes the launch template and the
rolling update replaces the group's instances, as with kops.
"""

from __future__ import annotations

import json
import shlex

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import config as nodeup_config

USER_DATA_LIMIT = 16384
COLLECTION_VERSION = "0.1.0"
# Where the collection comes from: Galaxy (or the Automation Hub ansible-galaxy is configured for) by
# default; a tarball URL (file://, s3://, gs://) for air-gapped clusters.
GALAXY_COLLECTION = "kubeops.kops==%s" % COLLECTION_VERSION
ANSIBLE_CORE = "ansible-core>=2.16,<2.20"
# What the collection needs on a node besides ansible-core (state store clients, PKI).
NODE_PYTHON_PACKAGES = ("boto3", "google-auth", "requests", "cryptography", "pyyaml")
# On boot the API server comes up in the same run (kubelet starts its static pod once etcd runs), so the
# addons wait for it longer than an SSH run does.
BOOT_NODEUP_VARS = {"nodeup_control_plane_python_packages": [], "nodeup_worker_python_packages": [],
                    "protokube_bootstrap_python": "/opt/kubeops/venv/bin/python", "protokube_bootstrap_packages": [],
                    "protokube_api_wait_timeout": 600}
AWS_BOOT_NODEUP_VARS = {"nodeup_etcd_peer_discovery": "aws", "protokube_etcd_volume_provider": "aws",
                        "protokube_api_dns_provider": "aws"}
# kops' socket buffer sysctls, set before anything downloads.
EARLY_SYSCTLS = ("net.core.rmem_max=16777216", "net.core.wmem_max=16777216",
                 "net.ipv4.tcp_rmem='4096 87380 16777216'", "net.ipv4.tcp_wmem='4096 87380 16777216'")

SCRIPT = """#!/bin/bash
# kubeops.kops boot: instance group {instance_group} of {cluster_name}
set -o errexit -o nounset -o pipefail

CONFIG_BASE={config_base}
CLUSTER_NAME={cluster_name_q}
INSTANCE_GROUP={instance_group_q}
NODEUP_CONFIG={nodeup_config}
NODEUP_CONFIG_HASH={nodeup_config_hash}
COLLECTION={collection}
PIP_ARGS={pip_args}
NODEUP_VARS={nodeup_vars}
INSTALL_DIR=/opt/kubeops
{environment}
{sysctls}

log() {{ echo "== kubeops boot: $* ==" >&2; }}

# Retry until it works, as kops' download-or-bust does: a node that cannot boot is useless anyway.
retry() {{
  local attempt
  for attempt in 1 2 3 4 5 6 7 8 9 10; do
    if "$@"; then return 0; fi
    log "attempt ${{attempt}} of '$*' failed; retrying in 10 s"
    sleep 10
  done
  return 1
}}

install_python() {{
  if python3 -c 'import venv, ensurepip' 2>/dev/null; then return 0; fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q && apt-get install -y -q python3-venv
}}

install_ansible() {{
  python3 -m venv "${{INSTALL_DIR}}/venv"
  # shellcheck disable=SC2086
  "${{INSTALL_DIR}}/venv/bin/pip" install -q ${{PIP_ARGS}} {python_packages}
}}

# fetch URL DEST: a state-store object (file://, s3://, gs://) to a local file.
fetch() {{
  case "$1" in
    file://*) cp "${{1#file://}}" "$2" ;;
    *) "${{INSTALL_DIR}}/venv/bin/python" - "$1" "$2" <<'PY'
import sys
url, dest = sys.argv[1], sys.argv[2]
scheme, rest = url.split("://", 1)
bucket, key = rest.split("/", 1)
if scheme == "s3":
    import boto3
    boto3.client("s3").download_file(bucket, key, dest)
elif scheme == "gs":
    import urllib.parse
    import google.auth
    from google.auth.transport.requests import AuthorizedSession
    credentials, _project = google.auth.default(scopes=["https://www.googleapis.com/auth/devstorage.read_only"])
    response = AuthorizedSession(credentials).get("https://storage.googleapis.com/storage/v1/b/%s/o/%s?alt=media"
                                                  % (bucket, urllib.parse.quote(key, safe="")))
    response.raise_for_status()
    open(dest, "wb").write(response.content)
else:
    sys.exit("unsupported state store URL %s" % url)
PY
    ;;
  esac
}}

verify_nodeup_config() {{
  local actual
  actual=$(sha256sum "$1" | cut -d' ' -f1)
  if [[ "${{actual}}" != "${{NODEUP_CONFIG_HASH}}" ]]; then
    log "nodeup config hash ${{actual}} is not ${{NODEUP_CONFIG_HASH}}: the store changed after this template was made"
    return 1
  fi
}}

mkdir -p "${{INSTALL_DIR}}/conf" "${{INSTALL_DIR}}/collections"
systemd-machine-id-setup 2>/dev/null || true
retry install_python
retry install_ansible
case "${{COLLECTION}}" in
  *://*) retry fetch "${{COLLECTION}}" "${{INSTALL_DIR}}/collection.tar.gz"
         COLLECTION="${{INSTALL_DIR}}/collection.tar.gz" ;;
esac
retry "${{INSTALL_DIR}}/venv/bin/ansible-galaxy" collection install --force -p "${{INSTALL_DIR}}/collections" \\
  "${{COLLECTION}}"
retry fetch "${{NODEUP_CONFIG}}" "${{INSTALL_DIR}}/conf/nodeupconfig.yaml"
if [[ -n "${{NODEUP_CONFIG_HASH}}" ]]; then retry verify_nodeup_config "${{INSTALL_DIR}}/conf/nodeupconfig.yaml"; fi

printf '%s\n' "${{NODEUP_VARS}}" > "${{INSTALL_DIR}}/conf/nodeup-vars.json"

log "running nodeup for ${{INSTANCE_GROUP}}"
export ANSIBLE_COLLECTIONS_PATH="${{INSTALL_DIR}}/collections"
"${{INSTALL_DIR}}/venv/bin/ansible-playbook" -c local -i localhost, \\
  "${{INSTALL_DIR}}/collections/ansible_collections/kubeops/kops/playbooks/nodeup.yml" \\
  -e ansible_python_interpreter="${{INSTALL_DIR}}/venv/bin/python" \\
  -e nodeup_hosts=localhost -e cluster_name="${{CLUSTER_NAME}}" -e instance_group="${{INSTANCE_GROUP}}" \\
  -e nodeup_config_path="${{INSTALL_DIR}}/conf/nodeupconfig.yaml" -e "@${{INSTALL_DIR}}/conf/nodeup-vars.json"
log "done"
"""


def _join(config_base, relpath):
    return "%s/%s" % (config_base.rstrip("/"), relpath)


def bootstrap_user_data(completed_cluster, instance_group, config_base, nodeup_config_hash="",
                        pip_args="", environment=None, collection=GALAXY_COLLECTION, nodeup_vars=None):
    """The boot script (str) for the nodes of one instance group.

    nodeup_config_hash: sha256 (hex) of the group's nodeupconfig.yaml; the
    node refuses a different one.  pip_args: extra pip arguments, e.g.
    ``--no-index --find-links http://mirror/wheels`` where PyPI is out of reach.
    environment: exported variables (kops exports AWS_REGION on AWS).
    collection: a Galaxy requirement, or the URL of the collection tarball.
    nodeup_vars: role variables for roles/nodeup and roles/protokube (overrides, e.g.
    nodeup_distro_packages), passed to the playbook as extra vars.
    """
    name = completed_cluster["metadata"]["name"]
    group = objects.name_of(instance_group)
    exports = dict(environment or {})
    # The boot venv brings cryptography, PyYAML and botocore (NODE_PYTHON_PACKAGES): no distribution packages
    # for them, and the bootstrap service runs on it.
    # On AWS, control-plane nodes find their etcd peers and volume in EC2 and keep api.internal in Route53.
    defaults = dict(BOOT_NODEUP_VARS)
    if completed_cluster["spec"].get("cloudProvider") == "aws":
        defaults.update(AWS_BOOT_NODEUP_VARS)
    nodeup_vars = dict(defaults, **(nodeup_vars or {}))
    script = SCRIPT.format(
        instance_group=group, cluster_name=name,
        config_base=shlex.quote(config_base), cluster_name_q=shlex.quote(name), instance_group_q=shlex.quote(group),
        nodeup_config=shlex.quote(_join(config_base, nodeup_config.config_path(instance_group))),
        nodeup_config_hash=shlex.quote(nodeup_config_hash), collection=shlex.quote(collection),
        pip_args=shlex.quote(pip_args), nodeup_vars=shlex.quote(json.dumps(nodeup_vars, sort_keys=True)),
        environment="\n".join("export %s=%s" % (k, shlex.quote(str(v))) for k, v in sorted(exports.items())),
        sysctls="\n".join("sysctl -w %s || true" % s for s in EARLY_SYSCTLS),
        python_packages=" ".join(shlex.quote(p) for p in (ANSIBLE_CORE,) + NODE_PYTHON_PACKAGES),
    )
    if len(script.encode("utf-8")) > USER_DATA_LIMIT:
        raise ValueError("instance group %s: user data is %d bytes, over EC2's %d"
                         % (group, len(script.encode("utf-8")), USER_DATA_LIMIT))
    return script
