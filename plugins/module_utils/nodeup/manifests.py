# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Static pods of the control plane and kube-proxy, as kops' nodeup writes them.

kube-apiserver, kube-controller-manager and kube-scheduler on nodes whose config
carries APIServerConfig / ControlPlaneConfig, kube-proxy where the config has
KubeProxy.  Flags come from the spec's component config through kops' flag
table (flag_data.py) plus the file paths nodeup owns; pods have kops' probes,
host paths, priority and tolerations.  Manifests are written as kops writes
them (sigs.k8s.io/yaml: goyaml.py), byte for byte.

Where kops and this collection differ: a worker's kube-proxy authenticates
with the kubelet's own rotated client certificate (kops hands workers a
kube-proxy certificate from kops-controller, which we do not run); the RBAC
addon binds system:node-proxier to this cluster's nodes for it.
"""

from __future__ import annotations

import decimal
import ipaddress
import re

from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import goyaml
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup.generated import flag_data
from ansible_collections.kubeops.kops.plugins.module_utils.errors import NodeError

SRV = "/srv/kubernetes"
KAPI = SRV + "/kube-apiserver"
KCM = SRV + "/kube-controller-manager"
SCHEDULER = SRV + "/kube-scheduler"
KCM_KUBECONFIG = "/var/lib/kube-controller-manager/kubeconfig"
SCHEDULER_KUBECONFIG = "/var/lib/kube-scheduler/kubeconfig"
PROXY_KUBECONFIG = "/var/lib/kube-proxy/kubeconfig"
SCHEDULER_CONFIG = "/var/lib/kube-scheduler/config.yaml"
AUTHN_CONFIG = "/etc/kubernetes/authn.config"  # kube-apiserver's webhook authentication (authentication.aws/kopeio)
# Ours: with anonymousAuth false, the kubelet's probes of /livez, /readyz and /healthz (which carry no credential) are
# answered 401 and the API server is killed when its startup probe gives up (seen on a real kube-apiserver 1.36:
# tests/realk8s/test_cluster.py).  kops merges its kube-apiserver-healthcheck sidecar into the pod (a static
# manifest from the store, on port 3990) for that; we let anonymous requests reach those three paths only
# (KEP-4633's AuthenticationConfiguration, beta and on in 1.32, GA in 1.34), which needs no sidecar image.
HEALTH_AUTHN_CONFIG = KAPI + "/authentication-config.yaml"
HEALTH_PATHS = ("/healthz", "/livez", "/readyz")
ANONYMOUS_HEALTH_SINCE = (1, 32)
VOLUME_PLUGIN_DIR = "/usr/libexec/kubernetes/kubelet-plugins/volume/exec/"
KUBELET_CLIENT_CERT = "/var/lib/kubelet/pki/kubelet-client-current.pem"
# Where CA bundles live on the usual distributions (kops' SSLHostPaths).
SSL_HOST_PATHS = ("/etc/ssl", "/etc/pki/tls", "/etc/pki/ca-trust", "/usr/share/ssl", "/usr/ssl",
                  "/usr/lib/ssl", "/usr/local/openssl", "/var/ssl", "/etc/openssl")
TABLES = {name: getattr(flag_data, name) for name in
          ("KUBE_APISERVER", "KUBE_CONTROLLER_MANAGER", "KUBE_SCHEDULER", "KUBE_PROXY", "LEADER_ELECTION")}
GO_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ms|us|µs|ns|h|m|s)")
NANOSECONDS = {"h": 3600 * 10 ** 9, "m": 60 * 10 ** 9, "s": 10 ** 9, "ms": 10 ** 6, "us": 10 ** 3, "µs": 10 ** 3,
               "ns": 1}
QUANTITY_SUFFIX = {"m": decimal.Decimal("0.001"), "": decimal.Decimal(1), "k": decimal.Decimal(1000),
                   "M": decimal.Decimal(10) ** 6, "G": decimal.Decimal(10) ** 9, "Ki": decimal.Decimal(1024),
                   "Mi": decimal.Decimal(1024) ** 2, "Gi": decimal.Decimal(1024) ** 3}


def parse_go_duration(text):
    """Nanoseconds of a Go duration string (1m0s, 90s, 1.5h, 0)."""
    text = str(text).strip()
    sign = -1 if text.startswith("-") else 1
    body = text.lstrip("+-")
    if body == "0":
        return 0
    if not body or GO_DURATION_PART.sub("", body) != "":
        raise NodeError("%r is not a Go duration (for example 1m0s or 30s)" % text)
    total = sum(decimal.Decimal(number) * NANOSECONDS[unit] for number, unit in GO_DURATION_PART.findall(body))
    return sign * int(total)


def _trim(value):
    return format(value.normalize(), "f")


def format_go_duration(nanoseconds):
    """Go's time.Duration.String(): 1m0s, 1h30m0s, 500ms, 0s."""
    if nanoseconds == 0:
        return "0s"
    sign = "-" if nanoseconds < 0 else ""
    ns = abs(nanoseconds)
    if ns < 10 ** 9:
        for unit, size in (("ms", 10 ** 6), ("µs", 10 ** 3), ("ns", 1)):
            if ns >= size:
                return sign + _trim(decimal.Decimal(ns) / size) + unit
    hours, rest = divmod(ns, 3600 * 10 ** 9)
    minutes, rest = divmod(rest, 60 * 10 ** 9)
    seconds = _trim(decimal.Decimal(rest) / 10 ** 9)
    text = ""
    if hours:
        text += "%dh" % hours
    if hours or minutes:
        text += "%dm" % minutes
    return sign + text + seconds + "s"


def format_quantity(value):
    """resource.Quantity as kops' flags write it (AsDec: 0.1, not 100m)."""
    match = re.match(r"^([+-]?\d+(?:\.\d+)?)([a-zA-Z]*)$", str(value).strip())
    if not match or match.group(2) not in QUANTITY_SUFFIX:
        raise NodeError("%r is not a quantity (for example 0.5 or 500m)" % value)
    return _trim(decimal.Decimal(match.group(1)) * QUANTITY_SUFFIX[match.group(2)])


def _scalar(kind, value):
    if kind == "bool":
        return "true" if value else "false"
    if kind == "duration":
        return format_go_duration(parse_go_duration(value))
    if kind == "quantity":
        return format_quantity(value)
    return str(value)


def build_flags(table, values):
    """kops' flagbuilder.BuildFlagsList: sorted --flag=value for a component config dict."""
    flags = []
    for field, flag, kind, options in TABLES[table] if isinstance(table, str) else table:
        present = field in values and values[field] is not None
        if flag is None:
            if present:
                flags.extend(build_flags(kind, values[field]))
            continue
        if kind == "list":
            items = [str(v) for v in values.get(field) or []]
            if items:
                flags.extend(["--%s=%s" % (flag, v) for v in items] if options.get("repeat")
                             else ["--%s=%s" % (flag, ",".join(items))])
            continue
        if kind == "map":
            pairs = sorted("%s=%s" % (k, v) for k, v in (values.get(field) or {}).items())
            if pairs:
                flags.append("--%s=%s" % (flag, ",".join(pairs)))
            continue
        if not present:
            if not options.get("always"):
                continue
            value = {"bool": False, "int": 0, "duration": "0s", "quantity": "0"}.get(kind, "")
        else:
            value = values[field]
        text = _scalar(kind, value)
        if kind == "string" and text == "" and not options.get("include_empty"):
            continue
        if text == options.get("empty"):
            continue
        flags.append("--%s=%s" % (flag, text))
    return sorted(flags)


def service_ip(service_cidr, index):
    """The index-th address of the service range (kops' WellKnownServiceIP: 1 is the API server)."""
    network = ipaddress.ip_network(service_cidr, strict=False)
    return str(network.network_address + index)


class Pod(object):
    """A static pod being built: one container, host-path volumes added in order."""

    def __init__(self, name, labels, image, command_args, resources, annotations=None):
        self.container = {"name": name, "image": image, "command": ["/go-runner"], "args": command_args,
                          "resources": resources, "volumeMounts": []}
        self.volumes = []
        self.document = {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "kube-system", "labels": labels},
            "spec": {"containers": [self.container], "hostNetwork": True, "volumes": self.volumes,
                     "priorityClassName": "system-cluster-critical",
                     "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"}]},
            "status": {},
        }
        if annotations:
            self.document["metadata"]["annotations"] = annotations

    def host_path(self, name, path, read_write=False, host_type=None, mount_path=None):
        mount = {"name": name, "mountPath": mount_path or path}
        if not read_write:
            mount["readOnly"] = True
        self.container["volumeMounts"].append(mount)
        source = {"path": path}
        if host_type:
            source["type"] = host_type
        self.volumes.append({"name": name, "hostPath": source})

    def ssl_paths(self):
        for path in SSL_HOST_PATHS:
            self.host_path(path.replace("/", ""), path)


def _resources(config, default_cpu):
    requests, limits = {}, {}
    cpu = config.get("cpuRequest") or default_cpu
    if cpu:
        requests["cpu"] = cpu
    if config.get("memoryRequest"):
        requests["memory"] = config["memoryRequest"]
    for field, key in (("cpuLimit", "cpu"), ("memoryLimit", "memory")):
        if config.get(field):
            limits[key] = config[field]
    resources = {"requests": requests}
    if limits:
        resources["limits"] = limits
    return resources


def _probe(path, port, scheme, **timing):
    handler = {"host": "127.0.0.1", "path": path, "port": port}
    if scheme:
        handler["scheme"] = scheme
    return dict({"httpGet": handler}, **timing)


def _go_runner_args(log, binary, flags):
    return ["--log-file=%s" % log, "--also-stdout", binary] + sorted(flags)


def _minor(version):
    parts = str(version or "").rsplit("/", maxsplit=1)[-1].lstrip("v").split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return None


def health_authentication_config(config):
    """The AuthenticationConfiguration that lets the kubelet's probes reach the health paths anonymously (text), or
    None where it does not apply: anonymous requests allowed anyway, the user's own --authentication-config, OIDC
    flags (which kube-apiserver refuses beside a config file), or a Kubernetes before 1.32."""
    kapi = (config.get("APIServerConfig") or {}).get("KubeAPIServer") or {}
    minor = _minor(config.get("KubernetesVersion") or kapi.get("image", "").rpartition(":")[2])
    if kapi.get("anonymousAuth") is not False or kapi.get("authenticationConfigFile") or kapi.get("oidcIssuerURL"):
        return None
    if minor is None or minor < ANONYMOUS_HEALTH_SINCE:
        return None
    conditions = "".join("  - path: %s\n" % path for path in HEALTH_PATHS)
    return ("apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\n"
            "anonymous:\n  enabled: true\n  conditions:\n%s" % conditions)


def api_internal_name(config):
    return "api.internal.%s" % config["ClusterName"]


def kube_apiserver_pod(config):
    """kube-apiserver's static pod (kops' KubeAPIServerBuilder.buildPod)."""
    api_config = config["APIServerConfig"]
    kapi = dict(api_config.get("KubeAPIServer") or {})
    if kapi.get("admissionControl"):
        kapi["enableAdmissionPlugins"], kapi["admissionControl"] = list(kapi["admissionControl"]), []
    kapi.setdefault("clientCAFile", SRV + "/ca.crt")
    kapi.update({
        "serviceAccountKeyFile": list(kapi.get("serviceAccountKeyFile") or []) + [KAPI + "/service-account.pub"],
        "etcdCaFile": KAPI + "/etcd-ca.crt", "etcdCertFile": KAPI + "/etcd-client.crt",
        "etcdKeyFile": KAPI + "/etcd-client.key",
        "requestheaderClientCAFile": KAPI + "/apiserver-aggregator-ca.crt",
        "proxyClientCertFile": KAPI + "/apiserver-aggregator.crt",
        "proxyClientKeyFile": KAPI + "/apiserver-aggregator.key",
        "tlsCertFile": KAPI + "/server.crt", "tlsPrivateKeyFile": KAPI + "/server.key",
        "kubeletClientCertificate": KAPI + "/kubelet-api.crt", "kubeletClientKey": KAPI + "/kubelet-api.key",
    })
    kapi.setdefault("serviceAccountSigningKeyFile", KAPI + "/service-account.key")
    if health_authentication_config(config):
        # The config says who is anonymous; kube-apiserver refuses --anonymous-auth beside it.
        kapi.pop("anonymousAuth")
        kapi["authenticationConfigFile"] = HEALTH_AUTHN_CONFIG
    authentication = api_config.get("Authentication") or {}
    if authentication.get("aws") is not None:
        kapi["authenticationTokenWebhookConfigFile"] = AUTHN_CONFIG
    if not config.get("ControlPlaneConfig"):
        _etcd_by_name(kapi, config["ClusterName"])
    # Extra issuers follow the sorted flags: the first --service-account-issuer is the one that signs.
    issuers = ["--service-account-issuer=%s" % issuer for issuer in kapi.get("additionalServiceAccountIssuers") or []]
    args = _go_runner_args("/var/log/kube-apiserver.log", "/usr/local/bin/kube-apiserver",
                           build_flags("KUBE_APISERVER", kapi)) + issuers
    port = int(kapi.get("securePort") or 443)
    insecure = int(kapi.get("insecurePort") or 0)
    probe_port, scheme = (insecure, None) if insecure else (port, "HTTPS")
    pod = Pod("kube-apiserver", {"k8s-app": "kube-apiserver"}, kapi.get("image"), args, _resources(kapi, "150m"),
              annotations=_apiserver_annotations(config))
    pod.container.update({
        "livenessProbe": _probe("/livez", probe_port, scheme, initialDelaySeconds=10, timeoutSeconds=15,
                                failureThreshold=8, periodSeconds=10),
        "readinessProbe": _probe("/healthz", probe_port, scheme, timeoutSeconds=15, failureThreshold=3,
                                 periodSeconds=1),
        "startupProbe": _probe("/livez", probe_port, scheme, initialDelaySeconds=10, timeoutSeconds=300,
                               failureThreshold=30, periodSeconds=10),
        "ports": [{"name": "https", "containerPort": port, "hostPort": port}],
    })
    if insecure:
        pod.container["ports"].append({"name": "local", "containerPort": insecure, "hostPort": insecure})
    if kapi.get("env"):
        pod.container["env"] = kapi["env"]
    pod.host_path("logfile", "/var/log/kube-apiserver.log", read_write=True)
    pod.ssl_paths()
    pod.host_path("kubernetesca", SRV + "/ca.crt")
    pod.host_path("srvkapi", KAPI)
    pod.host_path("srvsshproxy", "/srv/sshproxy")
    audit_log = kapi.get("auditLogPath")
    if audit_log and audit_log != "-":
        pod.host_path("auditlogpathdir", audit_log.rsplit("/", 1)[0] or "/", read_write=True)
    if kapi.get("auditPolicyFile"):
        directory = kapi["auditPolicyFile"].rsplit("/", 1)[0] or "/"
        if directory != KAPI:
            pod.host_path("auditconfigdir", directory)
    if authentication.get("aws") is not None or authentication.get("kopeio") is not None:
        pod.host_path("authn-config", AUTHN_CONFIG)
    return pod.document


def _etcd_by_name(kapi, cluster_name):
    """An API server without etcd beside it (role APIServer) reaches etcd by name, as kops' buildPod rewrites it:
    main.etcd.internal.<cluster>, events.etcd.internal.<cluster> (leases.etcd.internal.<cluster> for a leases
    override), which nodeup maps in /etc/hosts to the address that forwards etcd (kops' BootConfig.EtcdIPs)."""
    kapi["etcdServers"] = [server.replace("127.0.0.1", "main.etcd.internal." + cluster_name)
                           for server in kapi.get("etcdServers") or []]
    overrides = []
    for override in kapi.get("etcdServersOverrides") or []:
        for prefix, member in (("/events", "events"), ("coordination.k8s.io/leases", "leases")):
            if override.startswith(prefix):
                override = override.replace("127.0.0.1", "%s.etcd.internal.%s" % (member, cluster_name))
        overrides.append(override)
    kapi["etcdServersOverrides"] = overrides


def kube_scheduler_config(config):
    """kops' embedded KubeSchedulerConfiguration (nodeup's fallback when the config has no static file for it):
    the kubeconfig, and the client connection's qps and burst from kubeScheduler."""
    scheduler = config["ControlPlaneConfig"].get("KubeScheduler") or {}
    connection = {"kubeconfig": SCHEDULER_KUBECONFIG}
    if scheduler.get("burst"):
        connection["burst"] = int(scheduler["burst"])
    if scheduler.get("qps") is not None:
        connection["qps"] = float(format_quantity(scheduler["qps"]))
    return goyaml.dumps({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                         "clientConnection": connection})


def _apiserver_annotations(config):
    annotations = {"kubectl.kubernetes.io/default-container": "kube-apiserver"}
    if config.get("usesNoneDNS"):
        return annotations
    api = config["APIServerConfig"].get("API") or {}
    if not (api.get("loadBalancer") or {}).get("useForInternalApi"):
        annotations["dns.alpha.kubernetes.io/internal"] = api_internal_name(config)
    if "dns" in api and api.get("publicName"):
        annotations["dns.alpha.kubernetes.io/external"] = api["publicName"]
    return annotations


def kube_controller_manager_pod(config):
    """kube-controller-manager's static pod (kops' KubeControllerManagerBuilder.buildPod)."""
    kcm = dict(config["ControlPlaneConfig"].get("KubeControllerManager") or {})
    kcm.update({"rootCAFile": SRV + "/ca.crt", "serviceAccountPrivateKeyFile": KCM + "/service-account.key"})
    kcm.setdefault("tlsCertFile", KCM + "/server.crt")
    kcm.setdefault("tlsPrivateKeyFile", KCM + "/server.key")
    volume_plugins = (config.get("KubeletConfig") or {}).get("volumePluginDirectory") or VOLUME_PLUGIN_DIR
    flags = build_flags("KUBE_CONTROLLER_MANAGER", kcm) + [
        "--kubeconfig=" + KCM_KUBECONFIG, "--authentication-kubeconfig=" + KCM_KUBECONFIG,
        "--authorization-kubeconfig=" + KCM_KUBECONFIG,
        "--cluster-signing-cert-file=%s/ca.crt" % KCM, "--cluster-signing-key-file=%s/ca.key" % KCM,
        "--flex-volume-plugin-dir=" + volume_plugins]
    pod = Pod("kube-controller-manager", {"k8s-app": "kube-controller-manager"}, kcm.get("image"),
              _go_runner_args("/var/log/kube-controller-manager.log", "/usr/local/bin/kube-controller-manager",
                              flags), _resources(kcm, "100m"))
    pod.container["livenessProbe"] = _probe("/healthz", 10257, "HTTPS", initialDelaySeconds=15, timeoutSeconds=15)
    pod.host_path("logfile", "/var/log/kube-controller-manager.log", read_write=True)
    pod.ssl_paths()
    pod.host_path("cabundle", SRV + "/ca.crt")
    pod.host_path("srvkcm", KCM)
    pod.host_path("varlibkcm", "/var/lib/kube-controller-manager")
    pod.host_path("volplugins", volume_plugins, read_write=True)
    return pod.document


def kube_scheduler_pod(config):
    """kube-scheduler's static pod (kops' KubeSchedulerBuilder.buildPod)."""
    scheduler = dict(config["ControlPlaneConfig"].get("KubeScheduler") or {})
    scheduler.setdefault("tlsCertFile", SCHEDULER + "/server.crt")
    scheduler.setdefault("tlsPrivateKeyFile", SCHEDULER + "/server.key")
    flags = build_flags("KUBE_SCHEDULER", scheduler) + [
        "--config=" + SCHEDULER_CONFIG, "--authentication-tolerate-lookup-failure=false",
        "--authentication-skip-lookup=false", "--authentication-kubeconfig=" + SCHEDULER_KUBECONFIG,
        "--authorization-kubeconfig=" + SCHEDULER_KUBECONFIG]
    pod = Pod("kube-scheduler", {"k8s-app": "kube-scheduler"}, scheduler.get("image"),
              _go_runner_args("/var/log/kube-scheduler.log", "/usr/local/bin/kube-scheduler", flags),
              _resources(scheduler, "100m"))
    pod.container["livenessProbe"] = _probe("/healthz", 10259, "HTTPS", initialDelaySeconds=15, timeoutSeconds=15)
    pod.host_path("varlibkubescheduler", "/var/lib/kube-scheduler")
    pod.host_path("srvscheduler", SCHEDULER)
    pod.host_path("logfile", "/var/log/kube-scheduler.log", read_write=True)
    return pod.document


def kube_proxy_pod(config, control_plane):
    """kube-proxy's static pod (kops' KubeProxyBuilder.buildPod)."""
    proxy = dict(config["KubeProxy"])
    if not proxy.get("master"):
        api = (config.get("kubeops") or {}).get("apiServer") or {}
        host = "127.0.0.1" if control_plane else api.get("host") or api_internal_name(config)
        port = 443 if control_plane else int(api.get("port") or 443)
        proxy["master"] = "https://%s" % host if port == 443 else "https://%s:%d" % (host, port)
    if proxy.get("conntrackMaxPerCore") is None:
        proxy["conntrackMaxPerCore"] = 131072
    flags = build_flags("KUBE_PROXY", proxy) + ["--kubeconfig=" + PROXY_KUBECONFIG, "--oom-score-adj=-998"]
    pod = Pod("kube-proxy", {"k8s-app": "kube-proxy", "kubernetes.io/managed-by": "nodeup", "tier": "node"},
              proxy.get("image"), _go_runner_args("/var/log/kube-proxy.log", "/usr/local/bin/kube-proxy", flags),
              _resources(proxy, None))
    pod.container["securityContext"] = {"privileged": True}
    pod.document["spec"]["priorityClassName"] = "system-node-critical"
    pod.host_path("logfile", "/var/log/kube-proxy.log", read_write=True)
    pod.host_path("kubeconfig", "/var/lib/kube-proxy")
    pod.host_path("modules", "/lib/modules")
    pod.host_path("ssl-certs-hosts", "/usr/share/ca-certificates", mount_path="/etc/ssl/certs")
    pod.host_path("iptableslock", "/run/xtables.lock", read_write=True, host_type="FileOrCreate")
    if not control_plane:
        # The kubelet's rotated client certificate (kubeconfig below) lives here.
        pod.host_path("kubeletpki", "/var/lib/kubelet/pki")
    return pod.document


def remap_image(image, arch):
    """kops' nodeup RemapImage: a side-loaded build's image is named for amd64 (registry.k8s.io/<component>-amd64);
    a node of another architecture runs its own (-arm64)."""
    if image and arch and arch != "amd64":
        return image.replace("-amd64", "-" + arch, 1)
    return image


def static_pods(config, arch="amd64"):
    """{manifest file name: pod} for a node's nodeup config, on a node of this architecture (amd64, arm64)."""
    control_plane = bool(config.get("ControlPlaneConfig"))
    pods = {}
    if config.get("APIServerConfig"):
        pods["kube-apiserver"] = kube_apiserver_pod(config)
    if config.get("ControlPlaneConfig"):
        pods["kube-controller-manager"] = kube_controller_manager_pod(config)
        pods["kube-scheduler"] = kube_scheduler_pod(config)
    if config.get("KubeProxy"):
        pods["kube-proxy"] = kube_proxy_pod(config, control_plane)
    for pod in pods.values():
        for container in pod["spec"]["containers"]:
            container["image"] = remap_image(container["image"], arch)
    return pods
