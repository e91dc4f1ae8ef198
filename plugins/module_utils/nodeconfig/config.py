# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The nodeup config of an instance group: everything its nodes need, computed once.

kops' NodeUpConfigBuilder.BuildConfig and nodeup.NewConfig, with kops' field
names, plus our `kubeops` key (docs/nodeup-config.md).  Deliberate
differences: no etcdManifests/channelsManifest/staticManifests (etcd runs
from roles/protokube, described by kubeops.etcdClusters, not from
etcd-manager static pods), and workers keep CAs.kubernetes-ca because they
bootstrap against the API server instead of kops-controller's config server.
"""

from __future__ import annotations

import copy
import re
import posixpath

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects, quantity
from ansible_collections.kubeops.kops.plugins.module_utils import provider_names, semver, zones
from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names import aws as aws_names
from ansible_collections.kubeops.kops.plugins.module_utils.completion import instance_groups as group_defaults
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import credentials, etcd, node_labels
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig.generated import asset_data
from ansible_collections.kubeops.kops.plugins.module_utils.pki import keystore
from ansible_collections.kubeops.kops.plugins.module_utils.errors import NodeConfigError

ARCHITECTURES = ("amd64", "arm64")
CONFIG_PATH = "igconfig/%s/%s/nodeupconfig.yaml"
# kops' internal role names (v1alpha2 still says Master) for the kubeops section.
INTERNAL_ROLE = {objects.ROLE_CONTROL_PLANE: "ControlPlane"}
ROLE_ALIASES = {"ControlPlane": objects.ROLE_CONTROL_PLANE}
KUBELET_BOOTSTRAP_SECRET = "kubelet-bootstrap-token"
BOOTSTRAP_GROUP = "system:bootstrappers:kubeops:%s"
# The API server honours a bootstrap token only when its auth-extra-groups match this (Kubernetes'
# cluster-bootstrap BootstrapGroupPattern): no dots, so a cluster name's dots cannot be kept.
BOOTSTRAP_GROUP_PATTERN = re.compile(r"\Asystem:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]\Z")
# Release locations of what every node downloads (kops' defaults; spec fields override the versions).
# CNI plugins release by Kubernetes minor (kops' wellknownassets), newest first.
CNI_PLUGINS_VERSIONS = (((1, 36), "1.9.1"), ((1, 35), "1.8.0"), ((1, 34), "1.7.1"), ((0, 0), "1.6.2"))


def config_path(instance_group):
    role = (instance_group.get("spec") or {}).get("role") or objects.ROLE_NODE
    return CONFIG_PATH % (objects.ROLE_DIRS[role], objects.name_of(instance_group))


def config_path_of(instance_group_name, role):
    """config_path from a host's kops_instance_group and kops_role (v1alpha2's Master or kops' ControlPlane)."""
    directory = objects.ROLE_DIRS.get(ROLE_ALIASES.get(role, role))
    if not instance_group_name or "/" in instance_group_name or directory is None:
        raise NodeConfigError("no nodeup config for instance group %r with role %r" % (instance_group_name, role),
                              fix="give the host kops_instance_group (a group name) and kops_role (one of %s)"
                              % ", ".join(sorted(set(objects.ROLE_DIRS) | set(ROLE_ALIASES))))
    return CONFIG_PATH % (directory, instance_group_name)


def runs_api_server(role):
    return role in (objects.ROLE_CONTROL_PLANE, objects.ROLE_APISERVER)


def asset_urls(cluster_spec, ig_spec, arch):
    """The release URLs a node of this group downloads, in kops' order."""
    version = cluster_spec["kubernetesVersion"].lstrip("v")
    base = version.rstrip("/") if semver.is_base_url(version) else "https://dl.k8s.io/release/v" + version
    urls = ["%s/bin/linux/%s/kubelet" % (base, arch), "%s/bin/linux/%s/kubectl" % (base, arch)]
    # The kubelet's image credential provider of the cloud (Provider.credential_provider_url), if it has one.
    credential_provider = provider_names.declared_value(cluster_spec.get("cloudProvider"), "credential_provider_url",
                                                        None)
    if credential_provider:
        urls.append(credential_provider.format(arch=arch))
    if installs_cni_assets(cluster_spec):
        cni = cni_plugins_version(version)
        urls.append("https://github.com/containernetworking/plugins/releases/download/v%s/"
                    "cni-plugins-linux-%s-v%s.tgz" % (cni, arch, cni))
    containerd = containerd_config(cluster_spec, ig_spec) or {}
    if not containerd.get("skipInstall"):
        version = containerd.get("version")
        if version:
            urls.append("https://github.com/containerd/containerd/releases/download/v%s/containerd-%s-linux-%s.tar.gz"
                        % (version, version, arch))
        runc = (containerd.get("runc") or {}).get("version")
        if runc:
            urls.append("https://github.com/opencontainers/runc/releases/download/v%s/runc.%s" % (runc, arch))
    return urls


def cni_plugins_version(kubernetes_version):
    parsed = semver.kubernetes_version(kubernetes_version)
    minor = (parsed.major, parsed.minor)
    return next(cni for since, cni in CNI_PLUGINS_VERSIONS if minor >= since)


def installs_cni_assets(cluster_spec):
    # kops: every CNI but the ones that bring their own plugins binaries (none of the built-ins today).
    return bool(cluster_spec.get("networking"))


def mirrored(url, file_repository):
    """kops' assets.fileRepository: same path under the mirror, same hash."""
    if not file_repository:
        return url
    path = url.split("://", 1)[1].split("/", 1)[1]
    return "%s/%s" % (file_repository.rstrip("/"), path)


# kops' nodeupconfigbuilder: with kubernetesVersion a build URL, nodes load these components' images from the
# build's tarballs (<url>/bin/linux/<arch>/<component>.tar) instead of pulling them.
SIDELOADED_COMPONENTS = {objects.ROLE_CONTROL_PLANE: ("kube-proxy", "kube-apiserver", "kube-controller-manager",
                                                      "kube-scheduler"),
                         objects.ROLE_APISERVER: ("kube-proxy", "kube-apiserver")}


def sideloaded_images(cluster_spec, role, file_repository):
    """{arch: [{"sources": [url], "hash"?}]} (kops' NodeupConfig.Images), or None for a released version."""
    base = cluster_spec["kubernetesVersion"]
    if not semver.is_base_url(base):
        return None
    images = {}
    for arch in ARCHITECTURES:
        images[arch] = []
        for component in SIDELOADED_COMPONENTS.get(role, ("kube-proxy",)):
            url = "%s/bin/linux/%s/%s.tar" % (base.rstrip("/"), arch, component)
            image = {"sources": [mirrored(url, file_repository)]}
            if asset_data.SHA256.get(url):
                image["hash"] = asset_data.SHA256[url]
            images[arch].append(image)
    return images


def compact_asset(url, file_repository):
    digest = asset_data.SHA256.get(url)
    location = mirrored(url, file_repository)
    return "%s@%s" % (digest, location) if digest else location


def containerd_config(cluster_spec, ig_spec):
    """The cluster's containerd config with the group's merged over it (kops' buildContainerdConfig)."""
    merged = dict(cluster_spec.get("containerd") or {})
    for key, value in (ig_spec.get("containerd") or {}).items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = dict(merged[key], **value)
        else:
            merged[key] = value
    if not (ig_spec.get("containerd") or {}).get("gvisor"):
        merged.pop("gvisor", None)
    return merged or None


def filter_by_role(items, role):
    return [item for item in items or [] if not item.get("roles") or role in item["roles"]]


def _load_certificates(config, keysets, name):
    keyset = keysets.get(name)
    if keyset is None:
        raise NodeConfigError("keyset %s is missing from the state store" % name, fix="run kubeops.kops.keypair first")
    config["CAs"][name] = keystore.trusted_certificates_pem(keyset).decode("ascii")
    config["KeypairIDs"][name] = keyset["spec"]["primaryId"]


def _service_account_public_keys(keyset):
    """The keyset's trusted public keys as kops writes them (pki.PublicKey's PEM): the "RSA PUBLIC KEY" label around
    a PKIX SubjectPublicKeyInfo, which kube-apiserver's --service-account-key-file reads (its parser takes PKIX or a
    certificate, whatever the label; a PKCS#1 body is refused: "data does not contain any valid RSA or ECDSA public
    keys", as the real API server said)."""
    from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs
    from cryptography.hazmat.primitives import serialization
    import base64
    pems = []
    for item in keyset["spec"]["keys"]:
        if item.get("distrustTimestamp"):
            continue
        public = certs.load_certificate(base64.b64decode(item["publicMaterial"])).public_key()
        body = base64.b64encode(public.public_bytes(serialization.Encoding.DER,
                                                    serialization.PublicFormat.SubjectPublicKeyInfo)).decode("ascii")
        lines = [body[i:i + 64] for i in range(0, len(body), 64)]
        pems.append("-----BEGIN RSA PUBLIC KEY-----\n%s\n-----END RSA PUBLIC KEY-----\n" % "\n".join(lines))
    return "".join(pems)


def load_keysets(cluster_store, completed_cluster):
    """{keyset name: keyset} for every keyset of the cluster that exists in the store."""
    return {name: keyset for name in keystore.keyset_names(completed_cluster)
            for keyset in [keystore.load(cluster_store, name)] if keyset is not None}


def build_config(completed_cluster, instance_group, keysets, config_base, etcd_sha256=None, additional_objects=()):
    """The nodeup config document (a dict) for one completed instance group; additional_objects: the cluster's
    (kops' clusteraddons, api/objects.py), which the control plane's kube-scheduler configuration may come from."""
    cluster_spec = completed_cluster["spec"]
    ig_spec = instance_group["spec"]
    role = ig_spec.get("role") or objects.ROLE_NODE
    name = completed_cluster["metadata"]["name"]
    control_plane = role == objects.ROLE_CONTROL_PLANE
    api_server = runs_api_server(role)
    networking = cluster_spec.get("networking") or {}
    file_repository = (cluster_spec.get("assets") or {}).get("fileRepository")
    config = {
        "Assets": {arch: [compact_asset(u, file_repository) for u in asset_urls(cluster_spec, ig_spec, arch)]
                   for arch in ARCHITECTURES},
        "CAs": {},
        "ClusterName": name,
        "Hooks": [filter_by_role(ig_spec.get("hooks"), role) or None,
                  filter_by_role(cluster_spec.get("hooks"), role) or None],
        "KeypairIDs": {},
        "KubeletConfig": ig_spec.get("kubelet") or {},
        "KubernetesVersion": cluster_spec["kubernetesVersion"].lstrip("v"),
        "Networking": {"nonMasqueradeCIDR": cluster_spec.get("nonMasqueradeCIDR"),
                       "serviceClusterIPRange": cluster_spec.get("serviceClusterIPRange")},
        "UpdatePolicy": ig_spec.get("updatePolicy") or cluster_spec.get("updatePolicy") or "automatic",
        "usesNoneDNS": ((cluster_spec.get("topology") or {}).get("dns") or {}).get("type") == "None",
    }
    file_assets = filter_by_role(ig_spec.get("fileAssets"), role) + filter_by_role(cluster_spec.get("fileAssets"), role)
    images = sideloaded_images(cluster_spec, role, file_repository)
    if images:
        config["Images"] = images
    if installs_cni_assets(cluster_spec):
        config["InstallCNIAssets"] = True
    containerd = containerd_config(cluster_spec, ig_spec)
    if containerd:
        config["containerdConfig"] = containerd
    kube_proxy = cluster_spec.get("kubeProxy") or {}
    if kube_proxy.get("enabled") is not False and not (control_plane and cluster_spec.get("isolateMasters")):
        config["KubeProxy"] = kube_proxy
    # kops' NetworkingSpec.UsesKubenet: kubenet and the modes derived from it (containerd's CNI template, IP-MASQ).
    if any(mode in networking for mode in ("kubenet", "gce", "external", "kopeio")):
        config["UsesKubenet"] = True
    if "amazonvpc" in networking:
        config["Networking"]["amazonvpc"] = {}
    if "cilium" in networking:
        config["Networking"]["cilium"] = {k: v for k, v in (networking["cilium"] or {}).items() if k == "ipam"}
    if "calico" in networking:
        config["Networking"]["calico"] = {k: v for k, v in (networking["calico"] or {}).items()
                                          if k == "wireguardEnabled"}
    for plugin in ("flannel", "kuberouter", "kindnet"):
        if plugin in networking:
            config["Networking"][plugin] = {}
    if role != objects.ROLE_BASTION:
        _load_certificates(config, keysets, "kubernetes-ca")
        if control_plane:
            _load_certificates(config, keysets, "etcd-clients-ca")
            for cluster in cluster_spec.get("etcdClusters") or []:
                _load_certificates(config, keysets, "etcd-manager-ca-%s" % cluster["name"])
                _load_certificates(config, keysets, "etcd-peers-ca-%s" % cluster["name"])
        if api_server:
            _load_certificates(config, keysets, "apiserver-aggregator-ca")
            if "etcd-clients-ca" in keysets:
                _load_certificates(config, keysets, "etcd-clients-ca")
            config["KeypairIDs"]["service-account"] = keysets["service-account"]["spec"]["primaryId"]
    if api_server:
        api = cluster_spec.get("api") or {}
        api_config = {"publicName": cluster_spec.get("masterPublicName")}
        if cluster_spec.get("additionalSans"):
            api_config["additionalSANs"] = cluster_spec["additionalSans"]
        if "dns" in api:
            api_config["dns"] = {}
        if (api.get("loadBalancer") or {}).get("useForInternalApi"):
            api_config["loadBalancer"] = {"useForInternalApi": True}
        config["APIServerConfig"] = {
            "API": api_config, "ClusterDNSDomain": cluster_spec.get("clusterDNSDomain"),
            "KubeAPIServer": cluster_spec.get("kubeAPIServer") or {},
            "ServiceAccountPublicKeys": _service_account_public_keys(keysets["service-account"]),
        }
        if cluster_spec.get("authentication"):
            # kops' APIServerConfig.Authentication: the node writes the webhook config (aws, kopeio).
            config["APIServerConfig"]["Authentication"] = cluster_spec["authentication"]
        config["configStore"] = {"keypairs": cluster_spec.get("keyStore"), "secrets": cluster_spec.get("secretStore")}
    if control_plane:
        config["DNSZone"] = cluster_spec.get("dnsZone")
        config["ControlPlaneConfig"] = {"KubeControllerManager": cluster_spec.get("kubeControllerManager") or {},
                                        "KubeScheduler": cluster_spec.get("kubeScheduler") or {}}
        config["EtcdClusterNames"] = [c["name"] for c in cluster_spec.get("etcdClusters") or []]
        file_assets.append(kube_scheduler_config_asset(cluster_spec, additional_objects))
    if file_assets:
        config["FileAssets"] = file_assets
    sysctls = []
    for origin, values in (("instance group", ig_spec.get("sysctlParameters")),
                           ("cluster", cluster_spec.get("sysctlParameters"))):
        if values:
            sysctls += ["# Custom sysctl parameters from %s spec" % origin, ""] + list(values)
    if sysctls:
        config["SysctlParameters"] = sysctls
    cloud_config = cluster_spec.get("cloudConfig") or {}
    for field, key, api_only in provider_names.declared_value(cluster_spec.get("cloudProvider"), "cloud_config_fields",
                                                              ()):
        if cloud_config.get(field) not in (None, False, "", []) and (api_server or not api_only):
            config[key] = cloud_config[field]
    if ig_spec.get("volumeMounts"):
        config["VolumeMounts"] = ig_spec["volumeMounts"]
    config["kubeops"] = kubeops_section(completed_cluster, instance_group, config_base, etcd_sha256)
    if cluster_spec.get("cloudProvider") == "aws":
        config.update(warm_pool_settings(completed_cluster, instance_group, config))
    return config


# kops' buildWarmPoolImages: the images of these prefixes that a node pulls while it warms (the others: docker.io's
# rate limits, private ECR). Ours knows the kube-proxy image of the nodeup config; the addons' images (AWS CCM,
# CSI node drivers, the CNI's) are not in it.
WARM_POOL_IMAGE_PREFIXES = ("registry.k8s.io/kube-proxy:", "registry.k8s.io/provider-aws/",
                            "registry.k8s.io/sig-storage/csi-node-driver-registrar:",
                            "registry.k8s.io/sig-storage/livenessprobe:", "quay.io/calico/", "quay.io/cilium/",
                            "quay.io/coreos/flannel:", "quay.io/weaveworks/")


def warm_pool_settings(completed_cluster, instance_group, config):
    """kops' EnableLifecycleHook and WarmPoolImages for an AWS group (nodeup.NewConfig, buildWarmPoolImages), and
    the autoscaling group whose kops-warmpool hook the node completes (kubeops.warmPool)."""
    cluster_spec, ig_spec = completed_cluster["spec"], instance_group["spec"]
    settings = {}
    pool = group_defaults.resolve_warm_pool(cluster_spec.get("warmPool"), instance_group)
    if group_defaults.warm_pool_enabled(pool) and pool.get("enableLifecycleHook"):
        settings["EnableLifecycleHook"] = True
        config["kubeops"] = dict(config.get("kubeops") or {}, warmPool={
            "autoscalingGroup": aws_names.group_object_name(completed_cluster["metadata"]["name"], instance_group),
            "lifecycleHook": aws_names.WARM_POOL_HOOK})
    if (ig_spec.get("warmPool") is not None or cluster_spec.get("warmPool") is not None) and \
            ig_spec.get("role") not in (objects.ROLE_CONTROL_PLANE, "ControlPlane"):
        # Written even when empty (kops leaves it out then): its presence is what tells the node to ask whether
        # it is warming, and ours may miss addon images kops would list.
        images = set((ig_spec.get("warmPool") or {}).get("additionalImages") or [])
        proxy_image = (config.get("KubeProxy") or {}).get("image") or ""
        if proxy_image.startswith(WARM_POOL_IMAGE_PREFIXES):
            images.add(proxy_image)
        settings["WarmPoolImages"] = sorted(images)
    return settings


KUBE_SCHEDULER_CONFIG = "/var/lib/kube-scheduler/config.yaml"
KUBE_SCHEDULER_KUBECONFIG = "/var/lib/kube-scheduler/kubeconfig"


def kube_scheduler_config_asset(cluster_spec, additional_objects=()):
    """kops' static file for the scheduler (KubeSchedulerBuilder): the user's KubeSchedulerConfiguration (an
    additional object, api/objects.py) or an empty v1 one, with kops' kubeconfig and spec.kubeScheduler's qps and
    burst (their config tags) over it."""
    found = [o for o in additional_objects if objects.group_kind(o) == objects.KUBE_SCHEDULER_CONFIGURATION]
    config = copy.deepcopy(found[0]) if found else {"apiVersion": "kubescheduler.config.k8s.io/v1",
                                                    "kind": "KubeSchedulerConfiguration"}
    if not isinstance(config.get("clientConnection"), dict):
        config["clientConnection"] = {}
    connection = config["clientConnection"]
    connection["kubeconfig"] = KUBE_SCHEDULER_KUBECONFIG
    scheduler = cluster_spec.get("kubeScheduler") or {}
    if scheduler.get("qps") is not None:
        connection["qps"] = quantity.as_number(scheduler["qps"])
    if scheduler.get("burst"):
        connection["burst"] = int(scheduler["burst"])
    return {"content": objects.dump_object(config), "path": KUBE_SCHEDULER_CONFIG}


def kubeops_section(completed_cluster, instance_group, config_base, etcd_sha256=None):
    """Our additions (docs/nodeup-config.md): what kops' nodeup would derive on the node."""
    cluster_spec = completed_cluster["spec"]
    name = completed_cluster["metadata"]["name"]
    role = instance_group["spec"].get("role") or objects.ROLE_NODE
    section = {
        "instanceGroup": objects.name_of(instance_group),
        "role": INTERNAL_ROLE.get(role, role),
        "configBase": config_base,
        "apiServer": {"host": "127.0.0.1" if runs_api_server(role) else api_internal_name(cluster_spec, name),
                      "port": 443 if runs_api_server(role) else api_port(cluster_spec)},
        # What the node labeller on the control plane keeps on this group's Nodes (docs/node-labels.md).
        "nodeLabels": node_labels.node_labels(completed_cluster, instance_group),
    }
    provider = cluster_spec.get("cloudProvider")
    if provider_names.declared_value(provider, "credential_provider_url", None):
        # What kops' nodeup reads from its cloud: the kubelet's image credential provider (ECR's needs the region).
        section["cloud"] = {"provider": provider, "region": zones.region_of(cluster_spec)}
    bootstrap = credentials.bootstrap_settings(completed_cluster, instance_group)
    if bootstrap:
        section["bootstrapService"] = bootstrap
    elif role == objects.ROLE_NODE:
        # No identity the bootstrap service can verify on this cloud (it verifies AWS instances): the kubelet
        # bootstraps with the cluster's token (docs/bootstrap-service.md, "Other clouds").
        section["kubeletBootstrap"] = {"tokenSecret": KUBELET_BOOTSTRAP_SECRET, "group": bootstrap_group(name)}
    if role == objects.ROLE_CONTROL_PLANE:
        section["etcdClusters"] = etcd.etcd_clusters(completed_cluster, instance_group, config_base, etcd_sha256)
    labeller = node_labels.labeller_settings(completed_cluster, instance_group)
    if labeller:
        section["nodeLabeller"] = labeller
    return section


def bootstrap_group(cluster_name):
    """The group this cluster's bootstrap token authenticates as: system:bootstrappers:kubeops:<cluster name>, its
    dots (and anything else BOOTSTRAP_GROUP_PATTERN refuses) as dashes. With the dots, the API server refused every
    kubelet that presented the token ("invalid bearer token"): its authenticator ignores a token whose group is not
    valid."""
    return BOOTSTRAP_GROUP % re.sub(r"[^a-z0-9:-]", "-", cluster_name.lower()).strip("-:")


def api_internal_name(cluster_spec, cluster_name):
    api = cluster_spec.get("api") or {}
    if (api.get("loadBalancer") or {}).get("useForInternalApi") and cluster_spec.get("masterPublicName"):
        return cluster_spec["masterPublicName"]
    return "api.internal.%s" % cluster_name


def api_port(cluster_spec):
    return int((cluster_spec.get("kubeAPIServer") or {}).get("securePort") or 443)


def store_files(completed_cluster, instance_groups, keysets, config_base, dump):
    """[(cluster-relative path, bytes)] of every group's nodeup config; dump(dict) -> str."""
    files = []
    for ig in instance_groups:
        document = build_config(completed_cluster, ig, keysets, config_base)
        files.append((config_path(ig), dump(document).encode("utf-8")))
    return files


def join(config_base, relpath):
    return posixpath.join(config_base.rstrip("/"), relpath)
