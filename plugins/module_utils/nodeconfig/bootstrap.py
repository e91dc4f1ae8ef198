# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The boot script in a launch template's user data (kops' bootstrapscript.go, the Ansible way).

kops' script downloads the nodeup binary, pinned by its sha256, and runs it.
Ours downloads the boot manifest (nodeconfig/boot_artifacts.py) pinned by its
sha256 and, through it, this collection's tarball and the wheels of its
Python dependencies, each checked against its sha256 (boot_fetch.py, the
node's own python3, embedded here); installs them offline (pip --no-index,
ansible-galaxy --offline); gets the group's nodeup config, pinned by its
hash (kops' NodeupConfigHash: a config change changes the launch template,
so the rolling update replaces the group's instances), from the store on the
control plane, from the bootstrap service on AWS workers (kops' ConfigServer:
the worker proves its identity and never reads the store for it); and runs
playbooks/nodeup.yml locally (`-c local`, ansible-pull style).  Nothing
comes from PyPI or Galaxy.

As kops' AWSMultipartMIME: with the group's additionalUserData, the user data
is a MIME multipart archive, this script first (a bastion: only the
additional parts).  compressUserData (kops gzips and base64-encodes the big
part it embeds, the nodeup config) gzips and base64-encodes the downloader.
EC2 caps user data at 16 KB.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
import shlex
import urllib.parse

from ansible_collections.kubeops.kops.plugins.module_utils import provider_names
from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import boot_fetch
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import config as nodeup_config
from ansible_collections.kubeops.kops.plugins.module_utils.errors import NodeConfigError

# On boot the API server comes up in the same run (kubelet starts its static pod once etcd runs), so the
# addons wait for it longer than an SSH run does.
BOOT_NODEUP_VARS = {"nodeup_control_plane_python_packages": [], "nodeup_worker_python_packages": [],
                    "nodeup_node_python_packages": [],
                    "protokube_channel_python_packages": [], "protokube_bootstrap_python": "/opt/kubeops/venv/bin/python",
                    "protokube_bootstrap_packages": [], "protokube_api_wait_timeout": 600}
# On a cloud whose Provider has node_functions, control-plane nodes find their etcd peers and volume in the
# cloud's API and keep api.internal in its DNS (providers/<cloud>/node.py): these boot variables name the cloud.
NODE_FUNCTION_VARS = ("nodeup_etcd_peer_discovery", "protokube_etcd_volume_provider", "protokube_api_dns_provider")
# kops' socket buffer sysctls, set before anything downloads.
EARLY_SYSCTLS = ("net.core.rmem_max=16777216", "net.core.wmem_max=16777216",
                 "net.ipv4.tcp_rmem='4096 87380 16777216'", "net.ipv4.tcp_wmem='4096 87380 16777216'")
# kops' MIME framing (pkg/model/resources/nodeup.go): a fixed boundary, 7bit parts, CRLF as Go's multipart writer.
MIME_BOUNDARY = "MIMEBOUNDARY"

SCRIPT = """#!/bin/bash
# kubeops.kops boot: instance group {instance_group} of {cluster_name}
set -o errexit -o nounset -o pipefail

CLUSTER_NAME={cluster_name_q}
INSTANCE_GROUP={instance_group_q}
{config_source}
NODEUP_CONFIG_HASH={nodeup_config_hash}
BOOT_MANIFEST={boot_manifest}
BOOT_MANIFEST_HASH={boot_manifest_hash}
NODEUP_VARS={nodeup_vars}
INSTALL_DIR=/opt/kubeops
{environment}
{sysctls}

log() {{ echo "== kubeops boot: $* ==" >&2; }}

# Retry until it works, as kops' download-or-bust does; a download that is not what was pinned (exit 3) is final.
retry() {{
  local attempt status
  for attempt in $(seq "${{RETRY_ATTEMPTS:-10}}"); do
    status=0
    "$@" || status=$?
    if [[ ${{status}} -eq 0 ]]; then return 0; fi
    if [[ ${{status}} -eq 3 ]]; then log "refused: $*"; return 3; fi
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

# The downloader (nodeup/boot_fetch.py): python3's standard library only, every file checked against its sha256.
write_fetcher() {{
{fetcher}
}}

fetch() {{ python3 "${{INSTALL_DIR}}/boot_fetch.py" "$@"; }}
{config_functions}
install_offline() {{
  python3 -m venv "${{INSTALL_DIR}}/venv"
  "${{INSTALL_DIR}}/venv/bin/pip" install -q --no-index --find-links "${{INSTALL_DIR}}/boot/wheels" \\
    "${{INSTALL_DIR}}"/boot/wheels/*.whl
  "${{INSTALL_DIR}}/venv/bin/ansible-galaxy" collection install --offline --force -p "${{INSTALL_DIR}}/collections" \\
    "${{INSTALL_DIR}}/boot/collection.tar.gz"
}}

main() {{
  mkdir -p "${{INSTALL_DIR}}/conf" "${{INSTALL_DIR}}/boot" "${{INSTALL_DIR}}/collections"
  systemd-machine-id-setup 2>/dev/null || true
  retry install_python
  write_fetcher
  retry fetch manifest "${{BOOT_MANIFEST}}" "${{BOOT_MANIFEST_HASH}}" "${{INSTALL_DIR}}/boot"
  install_offline
{config_step}
  printf '%s\\n' "${{NODEUP_VARS}}" > "${{INSTALL_DIR}}/conf/nodeup-vars.json"

  log "running nodeup for ${{INSTANCE_GROUP}}"
  export ANSIBLE_COLLECTIONS_PATH="${{INSTALL_DIR}}/collections"
  "${{INSTALL_DIR}}/venv/bin/ansible-playbook" -c local -i localhost, \\
    "${{INSTALL_DIR}}/collections/ansible_collections/kubeops/kops/playbooks/nodeup.yml" \\
    -e ansible_python_interpreter="${{INSTALL_DIR}}/venv/bin/python" \\
    -e nodeup_hosts=localhost -e cluster_name="${{CLUSTER_NAME}}" -e instance_group="${{INSTANCE_GROUP}}" \\
    -e nodeup_config_path="${{INSTALL_DIR}}/conf/nodeupconfig.yaml" -e "@${{INSTALL_DIR}}/conf/nodeup-vars.json"
  log "done"
}}

# Run when executed (cloud-init runs the file); sourced, it only defines the functions (tests call them).
if [[ "${{BASH_SOURCE[0]}}" == "$0" ]]; then main; fi
"""


# A worker asks the control plane's bootstrap service for its nodeup config (kops' ConfigServer) instead of reading
# the store: the service reads it with the control plane's access and answers it to a verified instance only.
# The control plane may come up after the worker: asked every 10 s for 10 minutes; a refusal (exit 3) is final.
SERVICE_CONFIG_FUNCTIONS = """
fetch_config() {
  printf '%s\\n' "${CONFIG_SERVER}" > "${INSTALL_DIR}/conf/config-server.json"
  PYTHONPATH="${INSTALL_DIR}/collections" "${INSTALL_DIR}/venv/bin/python" -m \\
    ansible_collections.kubeops.kops.plugins.module_utils.nodeup.bootstrap_service node-config \\
    "${INSTALL_DIR}/conf/config-server.json" "${NODEUP_CONFIG_HASH}" "${INSTALL_DIR}/conf/nodeupconfig.yaml"
}
"""
SERVICE_CONFIG_STEP = "  RETRY_ATTEMPTS=60 retry fetch_config"
STORE_CONFIG_STEP = '  retry fetch file "${NODEUP_CONFIG}" "${NODEUP_CONFIG_HASH}" "${INSTALL_DIR}/conf/nodeupconfig.yaml"'


def config_server(nodeup_document, sts_endpoint=None, api_server_ips=()):
    """The boot script's settings for asking the bootstrap service (kops' BootConfig.ConfigServer): the server,
    the region its identity is signed for and the cluster CA it trusts; None when the group reads the store
    (control plane, or a worker on a cloud whose identities the service does not verify).

    api_server_ips: kops' BootConfig.APIServerIPs, the API load balancer's private addresses in a cluster without
    DNS (model/aws/kops_controller.py); the boot script pins the service's and the API's names to them."""
    service = (nodeup_document.get("kubeops") or {}).get("bootstrapService") or {}
    if not service or service.get("serverCert"):
        return None
    settings = {"server": service["server"], "region": service["region"],
                "caCert": nodeup_document["CAs"]["kubernetes-ca"]}
    if sts_endpoint:
        settings["stsEndpoint"] = sts_endpoint
    if api_server_ips:
        names = [urllib.parse.urlsplit(service["server"]).hostname, nodeup_document["kubeops"]["apiServer"]["host"]]
        settings["hosts"] = {name: sorted(api_server_ips) for name in names}
    return settings


def _hosts_block(hosts):
    """kops' UpdateEtcHostsTask for the names a worker reaches the control plane by (dns None): one line per
    address, every name on it, in a block of its own."""
    by_address = {}
    for name, addresses in sorted(hosts.items()):
        for address in addresses:
            by_address.setdefault(address, []).append(name)
    lines = ["%s\t%s" % (address, " ".join(names)) for address, names in sorted(by_address.items())]
    return ("  cat >> /etc/hosts <<'__EOF_HOSTS'\n# Begin host entries managed by kubeops.kops\n%s\n"
            "# End host entries managed by kubeops.kops\n__EOF_HOSTS\n" % "\n".join(lines))


def _join(config_base, relpath):
    return "%s/%s" % (config_base.rstrip("/"), relpath)


def fetcher_source():
    """boot_fetch.py without its license header and module docstring (they cost user data bytes)."""
    # Through the loader, not the file system: inside Ansible's module payload the package is a zip.
    text = boot_fetch.__loader__.get_source(boot_fetch.__name__)
    return re.sub(r'\A(?:#[^\n]*\n)*"""(?:.|\n)*?"""\n', "", text, count=1).lstrip("\n")


def gzip_base64(text):
    """kops' gzipBase64: gzip (no timestamp, so the same input gives the same user data), then base64."""
    return base64.b64encode(gzip.compress(text.encode("utf-8"), mtime=0)).decode("ascii")


def _fetcher_block(compress):
    target = '"${INSTALL_DIR}/boot_fetch.py"'
    if compress:
        return '  echo "%s" | base64 -d | gzip -d > %s' % (gzip_base64(fetcher_source()), target)
    return "  cat > %s <<'__EOF_BOOT_FETCH'\n%s__EOF_BOOT_FETCH" % (target, fetcher_source())


def boot_script(completed_cluster, instance_group, config_base, nodeup_config_hash, boot_manifest,
                environment=None, nodeup_vars=None, config_server_settings=None):
    """The bash boot script (str) of a group that runs nodeup; boot_manifest: (URL, sha256) of its boot manifest;
    config_server_settings (config_server()): the nodeup config comes from the bootstrap service, not the store."""
    name = completed_cluster["metadata"]["name"]
    group = objects.name_of(instance_group)
    if not nodeup_config_hash or not boot_manifest or not all(boot_manifest):
        raise NodeConfigError("instance group %s: the boot script needs the nodeup config's sha256 and the boot "
                              "manifest (URL and sha256)" % group)
    cloud = completed_cluster["spec"].get("cloudProvider")
    node_functions = provider_names.declared_value(cloud, "node_functions", False)
    defaults = dict(BOOT_NODEUP_VARS, **{variable: cloud for variable in NODE_FUNCTION_VARS if node_functions})
    nodeup_vars = dict(defaults, **(nodeup_vars or {}))
    if config_server_settings:
        settings = dict(config_server_settings)
        hosts = settings.pop("hosts", None)
        config_source = "CONFIG_SERVER=%s" % shlex.quote(json.dumps(settings, sort_keys=True))
        config_functions = SERVICE_CONFIG_FUNCTIONS
        config_step = (_hosts_block(hosts) if hosts else "") + SERVICE_CONFIG_STEP
    else:
        config_source = "NODEUP_CONFIG=%s" % shlex.quote(_join(config_base, nodeup_config.config_path(instance_group)))
        config_functions, config_step = "", STORE_CONFIG_STEP
    return SCRIPT.format(
        instance_group=group, cluster_name=name,
        cluster_name_q=shlex.quote(name), instance_group_q=shlex.quote(group),
        config_source=config_source, config_functions=config_functions, config_step=config_step,
        nodeup_config_hash=shlex.quote(nodeup_config_hash),
        boot_manifest=shlex.quote(boot_manifest[0]), boot_manifest_hash=shlex.quote(boot_manifest[1]),
        nodeup_vars=shlex.quote(json.dumps(nodeup_vars, sort_keys=True)),
        environment="\n".join("export %s=%s" % (k, shlex.quote(str(v))) for k, v in sorted((environment or {}).items())),
        sysctls="\n".join("sysctl -w %s || true" % s for s in EARLY_SYSCTLS),
        fetcher=_fetcher_block(bool(instance_group["spec"].get("compressUserData"))),
    )


def _mime_part(filename, content_type, content):
    headers = ('Content-Disposition: attachment; filename="%s"\r\nContent-Transfer-Encoding: 7bit\r\n'
               "Content-Type: %s\r\nMime-Version: 1.0\r\n\r\n" % (filename, content_type))
    return "--%s\r\n%s%s\r\n" % (MIME_BOUNDARY, headers, content)


def multipart(script, additional_user_data):
    """kops' AWSMultipartMIME: the script (None for a bastion) as nodeup.sh, then each additionalUserData part."""
    parts = [] if script is None else [_mime_part("nodeup.sh", "text/x-shellscript", script)]
    for index, part in enumerate(additional_user_data):
        missing = [field for field in ("name", "type", "content") if not part.get(field)]
        if missing:
            raise NodeConfigError("additionalUserData[%d]: %s required (name, type and content, as kops)"
                                  % (index, ", ".join(missing)))
        parts.append(_mime_part(part["name"], part["type"], part["content"]))
    return ('Content-Type: multipart/mixed; boundary="%s"\r\nMIME-Version: 1.0\r\n\r\n%s--%s--\r\n'
            % (MIME_BOUNDARY, "".join(parts), MIME_BOUNDARY))


def bootstrap_user_data(completed_cluster, instance_group, config_base, nodeup_config_hash=None, boot_manifest=None,
                        environment=None, nodeup_vars=None, config_server_settings=None):
    """The user data (str) of one instance group's launch template, or None (a bastion without additionalUserData).

    nodeup_config_hash: sha256 (hex) of the group's nodeupconfig.yaml; the node refuses a different one.
    boot_manifest: (URL, sha256) of the boot manifest (boot_artifacts.BootArtifacts).
    environment: exported variables (kops exports AWS_REGION on AWS).
    nodeup_vars: role variables for roles/nodeup and roles/protokube (overrides), passed as extra vars.
    config_server_settings: see config_server(); then the node asks the bootstrap service for its config.
    """
    group = objects.name_of(instance_group)
    additional = instance_group["spec"].get("additionalUserData") or []
    if (instance_group["spec"].get("role") or objects.ROLE_NODE) == objects.ROLE_BASTION:
        script = None
    else:
        script = boot_script(completed_cluster, instance_group, config_base, nodeup_config_hash, boot_manifest,
                             environment, nodeup_vars, config_server_settings)
    if script is None and not additional:
        return None
    user_data = multipart(script, additional) if additional else script
    size = len(user_data.encode("utf-8"))
    limit, what = provider_names.declared_value(completed_cluster["spec"].get("cloudProvider"), "user_data_limit",
                                                None) or (None, None)
    if limit is not None and size > limit:
        raise NodeConfigError("instance group %s: user data is %d bytes, over %s of %d" % (group, size, what, limit),
                              fix=None if instance_group["spec"].get("compressUserData")
                              else "compressUserData: true shrinks it")
    return user_data
