# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Cilium (networking.cilium.io), kops' default CNI: the agent DaemonSet, the operator Deployment, their RBAC
and the cilium-config ConfigMap built from spec.networking.cilium as kops does.  Objects before kops'
relabelling (channel.remap).  The features this does not render are refused by name (docs/addons.md)."""

from __future__ import annotations

# Spec switches whose objects are not rendered: (field, what it is).
REFUSED = (
    ("enablePrometheusMetrics", "the agent and operator metrics endpoints"),
    ("enableEncryption", "IPsec / WireGuard encryption"),
    ("debug", "debug logging"),
)
REFUSED_SECTIONS = (("gatewayAPI", "the Gateway API"),)
PART_OF = {"app.kubernetes.io/part-of": "cilium"}
# Hubble's settings in cilium-config (kops' template; the metrics ones only with spec hubble.metrics).
HUBBLE_CONFIG = {
    "enable-hubble": "true", "hubble-socket-path": "/var/run/cilium/hubble.sock",
    "hubble-network-policy-correlation-enabled": "true", "hubble-listen-address": ":4244", "hubble-disable-tls": "false",
    "hubble-tls-cert-file": "/var/lib/cilium/tls/hubble/server.crt",
    "hubble-tls-key-file": "/var/lib/cilium/tls/hubble/server.key",
    "hubble-tls-client-ca-files": "/var/lib/cilium/tls/hubble/client-ca.crt",
}
HUBBLE_METRICS_CONFIG = {"hubble-metrics-server": ":9965", "hubble-metrics-server-enable-tls": "false",
                         "enable-hubble-open-metrics": "false"}
HUBBLE_METRICS_PORT = 9965
# Envoy's settings, with the ingress controller (or the Gateway API).
ENVOY_CONFIG = {"enable-envoy-config": "true", "envoy-config-retry-interval": "15s", "envoy-secrets-namespace": "kube-system"}
INGRESS_CONFIG = {"enable-ingress-controller": "true", "enable-ingress-proxy-protocol": "false",
                  "ingress-secrets-namespace": "kube-system", "ingress-hostnetwork-enabled": "false",
                  "ingress-hostnetwork-shared-listener-port": "8080", "ingress-hostnetwork-nodelabelselector": ""}
# spec.networking.cilium.ingress fields written when set (kops tests the pointers: a false is written).
INGRESS_OPTIONS = (("enforceHttps", "enforce-ingress-https"), ("enableSecretsSync", "enable-ingress-secrets-sync"),
                   ("loadBalancerAnnotationPrefixes", "ingress-lb-annotation-prefixes"),
                   ("defaultLoadBalancerMode", "ingress-default-lb-mode"),
                   ("sharedLoadBalancerServiceName", "ingress-shared-lb-service-name"))
HUBBLE_RELAY_CONFIG = """cluster-name: "%s"
peer-service: "hubble-peer.kube-system.svc.cluster.local.:443"
listen-address: :4245
gops: true
gops-port: "9893"
retry-timeout:
sort-buffer-len-max:
sort-buffer-drain-timeout:
tls-hubble-client-cert-file: /var/lib/hubble-relay/tls/client.crt
tls-hubble-client-key-file: /var/lib/hubble-relay/tls/client.key
tls-hubble-server-ca-files: /var/lib/hubble-relay/tls/hubble-server-ca.crt

disable-server-tls: true
"""
# Removes the SNAT rules the AWS VPC CNI may have left behind before cilium takes the node over in ENI mode.
ENI_POST_START = """set -o errexit
set -o pipefail
set -o nounset

# When running in AWS ENI mode, it's likely that 'aws-node' has
# had a chance to install SNAT iptables rules. These can result
# in dropped traffic, so we should attempt to remove them.
# We do it using a 'postStart' hook since this may need to run
# for nodes which might have already been init'ed but may still
# have dangling rules. This is safe because there are no
# dependencies on anything that is part of the startup script
# itself, and can be safely run multiple times per node (e.g. in
# case of a restart).
if [[ "$(iptables-save | grep -E -c 'AWS-SNAT-CHAIN|AWS-CONNMARK-CHAIN')" != "0" ]];
then
    echo 'Deleting iptables rules created by the AWS CNI VPC plugin'
    iptables-save | grep -E -v 'AWS-SNAT-CHAIN|AWS-CONNMARK-CHAIN' | iptables-restore
fi
echo 'Done!'
"""
# The settings kops writes whatever the spec says.
# With spec.networking.cilium.etcdManaged: the kvstore is the cluster's "cilium" etcd (port 4003), read with
# the client certificate nodeup writes under /etc/kubernetes/pki/cilium.
ETCD_CONFIG = ("---\nendpoints:\n  - https://%s:4003\ntrusted-ca-file: '/var/lib/etcd-secrets/etcd-ca.crt'\n"
               "key-file: '/var/lib/etcd-secrets/etcd-client-cilium.key'\ncert-file: '/var/lib/etcd-secrets/etcd-client-cilium.crt'")
ETCD_MOUNTS = [{"mountPath": "/var/lib/etcd-config", "name": "etcd-config-path", "readOnly": True},
               {"mountPath": "/var/lib/etcd-secrets", "name": "etcd-secrets", "readOnly": True}]
ETCD_VOLUMES = [{"configMap": {"defaultMode": 256, "items": [{"key": "etcd-config", "path": "etcd.config"}],
                               "name": "cilium-config"}, "name": "etcd-config-path"},
                {"hostPath": {"path": "/etc/kubernetes/pki/cilium", "type": "Directory"}, "name": "etcd-secrets"}]
FIXED_CONFIG = {
    "agent-not-ready-taint-key": "node.cilium.io/agent-not-ready",
    "bpf-distributed-lru": "false",
    "bpf-events-drop-enabled": "true",
    "bpf-events-policy-verdict-enabled": "true",
    "bpf-events-trace-enabled": "true",
    "bpf-lb-acceleration": "disabled",
    "bpf-lb-algorithm-annotation": "false",
    "bpf-lb-external-clusterip": "false",
    "bpf-lb-map-max": "65536",
    "bpf-lb-mode-annotation": "false",
    "bpf-lb-source-range-all-types": "false",
    "bpf-map-dynamic-size-ratio": "0.0025",
    "bpf-policy-map-max": "16384",
    "bpf-policy-stats-map-max": "65536",
    "bpf-root": "/sys/fs/bpf",
    "cgroup-root": "/run/cilium/cgroupv2",
    "cilium-endpoint-gc-interval": "5m0s",
    "clustermesh-enable-endpoint-sync": "false",
    "clustermesh-enable-mcs-api": "false",
    "cni-log-file": "/var/run/cilium/cilium-cni.log",
    "custom-cni-conf": "false",
    "datapath-mode": "veth",
    "debug-verbose": "",
    "default-lb-service-ipam": "lbipam",
    "direct-routing-skip-unreachable": "false",
    "dnsproxy-socket-linger-timeout": "10",
    "egress-gateway-reconciliation-trigger-interval": "1s",
    "enable-auto-protect-node-port-range": "true",
    "enable-bpf-clock-probe": "false",
    "enable-endpoint-lockdown-on-policy-overflow": "false",
    "enable-health-check-loadbalancer-ip": "false",
    "enable-health-check-nodeport": "true",
    "enable-health-checking": "true",
    "enable-internal-traffic-policy": "true",
    "enable-ipv4-big-tcp": "false",
    "enable-ipv6-big-tcp": "false",
    "enable-ipv6-masquerade": "false",
    "enable-k8s-networkpolicy": "true",
    "enable-l2-neigh-discovery": "false",
    "enable-lb-ipam": "true",
    "enable-masquerade-to-route-source": "false",
    "enable-node-selector-labels": "false",
    "enable-non-default-deny-policies": "true",
    "enable-policy": "default",
    "enable-sctp": "false",
    "enable-source-ip-verification": "true",
    "enable-svc-source-range-check": "true",
    "enable-tcx": "true",
    "enable-vtep": "false",
    "enable-well-known-identities": "false",
    "enable-xt-socket-fallback": "true",
    "envoy-access-log-buffer-size": "4096",
    "envoy-base-id": "0",
    "envoy-keep-cap-netbindservice": "false",
    "external-envoy-proxy": "false",
    "health-check-icmp-failure-threshold": "3",
    "http-retry-count": "3",
    "http-stream-idle-timeout": "300",
    "identity-gc-interval": "15m0s",
    "identity-heartbeat-timeout": "30m0s",
    "identity-management-mode": "agent",
    "install-no-conntrack-iptables-rules": "false",
    "iptables-random-fully": "false",
    "k8s-require-ipv4-pod-cidr": "false",
    "k8s-require-ipv6-pod-cidr": "false",
    "max-connected-clusters": "255",
    "mesh-auth-enabled": "true",
    "mesh-auth-gc-interval": "5m0s",
    "mesh-auth-queue-size": "1024",
    "mesh-auth-rotated-identities-queue-size": "1024",
    "metrics-sampling-interval": "5m",
    "monitor-aggregation-flags": "all",
    "monitor-aggregation-interval": "5s",
    "nat-map-stats-entries": "32",
    "nat-map-stats-interval": "30s",
    "node-port-bind-protection": "true",
    "nodeport-addresses": "",
    "nodes-gc-interval": "5m0s",
    "policy-cidr-match-mode": "",
    "policy-default-local-cluster": "false",
    "procfs": "/host/proc",
    "proxy-connect-timeout": "2",
    "proxy-idle-timeout-seconds": "60",
    "proxy-initial-fetch-timeout": "30",
    "proxy-max-concurrent-retries": "128",
    "proxy-max-connection-duration-seconds": "0",
    "proxy-max-requests-per-connection": "0",
    "proxy-xff-num-trusted-hops-egress": "0",
    "proxy-xff-num-trusted-hops-ingress": "0",
    "remove-cilium-node-taints": "true",
    "set-cilium-is-up-condition": "true",
    "set-cilium-node-taints": "true",
    "synchronize-k8s-nodes": "true",
    "tofqdns-enable-dns-compression": "true",
    "tofqdns-endpoint-max-ip-per-hostname": "1000",
    "tofqdns-idle-connection-grace-period": "0s",
    "tofqdns-max-deferred-connection-deletes": "10000",
    "tofqdns-preallocate-identities": "true",
    "tofqdns-proxy-response-max-delay": "100ms",
    "unmanaged-pod-watcher-interval": "15",
    "vtep-cidr": "",
    "vtep-endpoint": "",
    "vtep-mac": "",
    "vtep-mask": "",
    "write-cni-conf-when-ready": "/host/etc/cni/net.d/05-cilium.conflist",
}


def _bool(value):
    return "true" if value else "false"


def refuse_unrendered(facts, cilium):
    for field, what in REFUSED:
        if cilium.get(field):
            facts.refuse("networking.cilium.io", "spec.networking.cilium.%s (%s)" % (field, what), "leave it unset")
    for field, what in REFUSED_SECTIONS:
        if (cilium.get(field) or {}).get("enabled"):
            facts.refuse("networking.cilium.io", "spec.networking.cilium.%s.enabled (%s)" % (field, what),
                         "leave it false")


def config_data(facts, cilium):
    """The cilium-config ConfigMap's data: the fixed settings, then those the spec decides."""
    data = dict(FIXED_CONFIG)
    ipv6 = facts.ipv6_only
    tunnel = cilium.get("tunnel") or "vxlan"
    data.update({
        "identity-allocation-mode": str(cilium.get("identityAllocationMode") or "crd"),
        "disable-endpoint-crd": _bool(cilium.get("disableEndpointCRD")),
        "identity-change-grace-period": str(cilium.get("identityChangeGracePeriod") or ""),
        "debug": _bool(cilium.get("debug")),
        "enable-ipv4": _bool(not ipv6),
        "enable-ipv6": _bool(ipv6),
        "monitor-aggregation": str(cilium.get("monitorAggregation") or ""),
        "preallocate-bpf-maps": _bool(cilium.get("preallocateBPFMaps")),
        "cluster-name": str(cilium.get("clusterName") or ""),
        "enable-l7-proxy": _bool(cilium.get("enableL7Proxy")),
        "enable-ipv4-masquerade": _bool(not cilium.get("disableMasquerade")),
        "enable-bpf-masquerade": _bool(cilium.get("enableBPFMasquerade") and not ipv6),
        "auto-direct-node-routes": _bool(cilium.get("autoDirectNodeRoutes")),
        "enable-local-redirect-policy": _bool(cilium.get("enableLocalRedirectPolicy")),
        "kube-proxy-replacement": _bool(cilium.get("enableNodePort")),
        "bpf-lb-sock": _bool(cilium.get("bpfLBSock")),
        "bpf-lb-sock-hostns-only": _bool(cilium.get("bpfLBSockHostNSOnly")),
        "enable-node-port": _bool(cilium.get("enableNodePort")),
        "enable-service-topology": _bool(cilium.get("enableServiceTopology")),
        "cni-exclusive": _bool(cilium.get("cniExclusive")),
        "enable-endpoint-health-checking": _bool(cilium.get("enableEndpointHealthChecking")),
        "enable-host-firewall": _bool(cilium.get("enableHostFirewall")),
        "operator-api-serve-addr": ("[::1]" if ipv6 else "127.0.0.1") + ":9234",
        "tofqdns-dns-reject-response-code": str(cilium.get("toFqdnsDnsRejectResponseCode") or ""),
    })
    if cilium.get("etcdManaged"):
        data.update({"kvstore": "etcd", "kvstore-opt": '{"etcd.config": "/var/lib/etcd-config/etcd.config"}',
                     "etcd-config": ETCD_CONFIG % api_internal_name(facts)})
    if cilium.get("clusterID"):
        data["cluster-id"] = str(cilium["clusterID"])
    if tunnel == "disabled":
        data["routing-mode"] = "native"
    else:
        data.update({"routing-mode": "tunnel", "tunnel-protocol": tunnel, "tunnel-source-port-range": "0-0",
                     "service-no-backend-response": "reject"})
    chaining = cilium.get("chainingMode")
    if chaining:
        data.update({"enable-host-legacy-routing": "true", "cni-chaining-mode": chaining})
        if chaining != "portmap":
            data["enable-local-node-route"] = "false"
    else:
        data["dnsproxy-enable-transparent-mode"] = "true"
    if cilium.get("ipam"):
        data.update({"ipam": cilium["ipam"], "ipam-cilium-node-update-rate": "15s", "cluster-pool-ipv4-mask-size": "24"})
        if cilium["ipam"] == "eni":
            data.update({"enable-endpoint-routes": "true", "auto-create-cilium-node-resource": "true",
                         "eni-tags": facts.cloud_labels})
    if hubble_enabled(cilium):
        data.update(HUBBLE_CONFIG)
        metrics = (cilium.get("hubble") or {}).get("metrics")
        if metrics:
            data.update(HUBBLE_METRICS_CONFIG, **{"hubble-metrics": " ".join(metrics)})
    if ingress_enabled(cilium):
        ingress = cilium.get("ingress") or {}
        data.update(ENVOY_CONFIG)
        data.update(INGRESS_CONFIG)
        for field, key in INGRESS_OPTIONS:
            if ingress.get(field) is not None:
                value = ingress[field]
                data[key] = _bool(value) if isinstance(value, bool) else str(value)
    data.update({key: str(value) for key, value in (cilium.get("extraConfig") or {}).items()})
    return data


def hubble_enabled(cilium):
    return bool((cilium.get("hubble") or {}).get("enabled"))


def ingress_enabled(cilium):
    return bool((cilium.get("ingress") or {}).get("enabled"))


def api_internal_name(facts):
    """kops APIInternalName: api.internal.<cluster> (kops ignores spec.masterInternalName)."""
    return "api.internal." + facts.name


def _insert_after(items, name, new):
    index = next(i for i, item in enumerate(items) if item["name"] == name)
    items[index + 1:index + 1] = [dict(item) for item in new]


def objects(facts):
    cilium = facts.networking.get("cilium") or {}
    refuse_unrendered(facts, cilium)
    if not cilium.get("version"):
        facts.refuse("networking.cilium.io", "a spec without spec.networking.cilium.version",
                     "complete the cluster spec first")
    registry = cilium.get("registry") or "quay.io"
    found = _objects(
        facts, cilium,
        agent_image="%s/cilium/cilium:%s" % (registry, cilium["version"]),
        operator_image="%s/cilium/operator:%s" % (registry, cilium["version"]),
        api_internal=api_internal_name(facts),
        localhost="::1" if facts.ipv6_only else "127.0.0.1",
        resources={"requests": {"cpu": str(cilium.get("cpuRequest") or "25m"),
                                "memory": str(cilium.get("memoryRequest") or "128Mi")}})
    agent = next(d for d in found if d["kind"] == "DaemonSet")
    operator = next(d for d in found if d["kind"] == "Deployment")
    if cilium.get("agentPodAnnotations"):
        agent["spec"]["template"]["metadata"]["annotations"].update(
            {key: str(value) for key, value in cilium["agentPodAnnotations"].items()})
    if cilium.get("operatorPodAnnotations"):
        operator["spec"]["template"]["metadata"]["annotations"] = {
            key: str(value) for key, value in cilium["operatorPodAnnotations"].items()}
    if cilium.get("etcdManaged"):
        _insert_after(agent["spec"]["template"]["spec"]["containers"][0]["volumeMounts"], "etc-cni-netd", ETCD_MOUNTS)
        _insert_after(agent["spec"]["template"]["spec"]["volumes"], "xtables-lock", ETCD_VOLUMES)
        operator["spec"]["template"]["spec"]["containers"][0]["volumeMounts"] += ETCD_MOUNTS
        operator["spec"]["template"]["spec"]["volumes"] += ETCD_VOLUMES
    if cilium.get("ipam") == "eni":
        agent_container = agent["spec"]["template"]["spec"]["containers"][0]
        agent_container["lifecycle"]["postStart"] = {"exec": {"command": ["bash", "-c", ENI_POST_START]}}
    if ingress_enabled(cilium):
        _add_ingress(found, cilium)
    if hubble_enabled(cilium):
        _add_hubble(found, cilium, agent, registry)
    return found


def _index(found, kind, name):
    return next(i for i, d in enumerate(found) if (d["kind"], d["metadata"]["name"]) == (kind, name))


def _insert_objects_after(found, kind, name, new):
    index = _index(found, kind, name)
    found[index + 1:index + 1] = new


def _secrets_role(name, verbs):
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"labels": dict(PART_OF), "name": name, "namespace": "kube-system"},
            "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": list(verbs)}]}


def _role_binding(name, role, account):
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"labels": dict(PART_OF), "name": name, "namespace": "kube-system"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": "kube-system"}]}


def _add_ingress(found, cilium):
    """kops' template with ingress.enabled: the operator reads ingresses, the agent and operator the secrets of
    kube-system (Envoy's), the IngressClass, and in shared mode the shared load balancer's Service."""
    ingress = cilium.get("ingress") or {}
    operator_rules = found[_index(found, "ClusterRole", "cilium-operator")]["rules"]
    leases = next(i for i, r in enumerate(operator_rules) if r["resources"] == ["leases"])
    operator_rules[leases + 1:leases + 1] = [
        {"apiGroups": ["networking.k8s.io"], "resources": ["ingresses", "ingressclasses"],
         "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["networking.k8s.io"], "resources": ["ingresses/status", "ingresses/finalizers"],
         "verbs": ["update"]}]
    _insert_objects_after(found, "Role", "cilium-config-agent", [
        _secrets_role("cilium-ingress-secrets", ["get", "list", "watch"]),
        _secrets_role("cilium-envoy-config-secrets", ["get", "list", "watch"]),
        _secrets_role("cilium-operator-ingress-secrets", ["create", "delete", "update", "patch"])])
    _insert_objects_after(found, "RoleBinding", "cilium-config-agent", [
        _role_binding("cilium-secrets", "cilium-ingress-secrets", "cilium"),
        _role_binding("cilium-envoy-config-secrets", "cilium-envoy-config-secrets", "cilium"),
        _role_binding("cilium-operator-ingress-secrets", "cilium-operator-ingress-secrets", "cilium-operator")])
    if ingress.get("defaultLoadBalancerMode") in (None, "", "shared"):
        service = {"apiVersion": "v1", "kind": "Service",
                   "metadata": {"labels": dict(PART_OF, **{"cilium.io/ingress": "true"}),
                                "name": ingress.get("sharedLoadBalancerServiceName") or "", "namespace": "kube-system"},
                   "spec": {"externalTrafficPolicy": "Cluster", "type": "LoadBalancer",
                            "ports": [{"name": "http", "port": 80, "protocol": "TCP"},
                                      {"name": "https", "port": 443, "protocol": "TCP"}]}}
        _insert_objects_after(found, "RoleBinding", "cilium-operator-ingress-secrets", [service])
    found.append({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": {"name": "cilium"},
                  "spec": {"controller": "cilium.io/ingress-controller"}})


def _certificate(name, common_name, usages):
    return {"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": {"name": name, "namespace": "kube-system"},
            "spec": {"commonName": common_name, "dnsNames": [common_name], "duration": "8760h0m0s", "isCA": False,
                     "issuerRef": {"kind": "Issuer", "name": "networking.cilium.io"},
                     "privateKey": {"rotationPolicy": "Always"}, "secretName": name, "usages": usages}}


def _add_hubble(found, cilium, agent, registry):
    """kops' template with hubble.enabled: the agent serves Hubble over TLS (its server certificate, and with
    metrics the metrics port and Service), the peer Service, and hubble-relay (its ServiceAccount, config,
    Service, two replicas beside the agents, its client certificate); both certificates from the addon's
    cert-manager Issuer (the channel's needsPKI)."""
    metrics = (cilium.get("hubble") or {}).get("metrics")
    cluster_name = str(cilium.get("clusterName") or "")
    relay_labels = {"app.kubernetes.io/name": "hubble-relay", "app.kubernetes.io/part-of": "cilium",
                    "k8s-app": "hubble-relay"}
    pod = agent["spec"]["template"]["spec"]
    container = pod["containers"][0]
    ports = [{"containerPort": 4244, "hostPort": 4244, "name": "peer-service", "protocol": "TCP"}]
    if metrics:
        ports.append({"containerPort": HUBBLE_METRICS_PORT, "hostPort": HUBBLE_METRICS_PORT, "name": "hubble-metrics",
                      "protocol": "TCP"})
    container["ports"] = ports + list(container.get("ports") or [])
    _insert_after(container["volumeMounts"], "xtables-lock",
                  [{"mountPath": "/var/lib/cilium/tls/hubble", "name": "hubble-tls", "readOnly": True}])
    pod["volumes"].append({"name": "hubble-tls", "projected": {"defaultMode": 0o400, "sources": [{"secret": {
        "items": [{"key": "tls.crt", "path": "server.crt"}, {"key": "tls.key", "path": "server.key"},
                  {"key": "ca.crt", "path": "client-ca.crt"}],
        "name": "hubble-server-certs", "optional": True}}]}})
    _insert_objects_after(found, "ServiceAccount", "cilium-operator", [
        {"apiVersion": "v1", "automountServiceAccountToken": False, "kind": "ServiceAccount",
         "metadata": {"name": "hubble-relay", "namespace": "kube-system"}}])
    _insert_objects_after(found, "ConfigMap", "cilium-config", [
        {"apiVersion": "v1", "data": {"config.yaml": HUBBLE_RELAY_CONFIG % cluster_name}, "kind": "ConfigMap",
         "metadata": {"name": "hubble-relay-config", "namespace": "kube-system"}}])
    services = [{"apiVersion": "v1", "kind": "Service",
                 "metadata": {"labels": dict(relay_labels), "name": "hubble-relay", "namespace": "kube-system"},
                 "spec": {"ports": [{"port": 80, "protocol": "TCP", "targetPort": "grpc"}],
                          "selector": {"k8s-app": "hubble-relay"}, "type": "ClusterIP"}}]
    if metrics:
        services.append({"apiVersion": "v1", "kind": "Service", "metadata": {
            "annotations": {"prometheus.io/port": str(HUBBLE_METRICS_PORT), "prometheus.io/scrape": "true"},
            "labels": {"app.kubernetes.io/name": "hubble", "app.kubernetes.io/part-of": "cilium", "k8s-app": "hubble"},
            "name": "hubble-metrics", "namespace": "kube-system"}, "spec": {
                "clusterIP": "None", "ports": [{"name": "hubble-metrics", "port": HUBBLE_METRICS_PORT, "protocol": "TCP",
                                                "targetPort": "hubble-metrics"}],
                "selector": {"k8s-app": "cilium"}, "type": "ClusterIP"}})
    services.append({"apiVersion": "v1", "kind": "Service", "metadata": {
        "labels": {"app.kubernetes.io/name": "hubble-peer", "app.kubernetes.io/part-of": "cilium", "k8s-app": "cilium"},
        "name": "hubble-peer", "namespace": "kube-system"}, "spec": {
            "internalTrafficPolicy": "Local",
            "ports": [{"name": "peer-service", "port": 443, "protocol": "TCP", "targetPort": 4244}],
            "selector": {"k8s-app": "cilium"}}})
    # After the last RBAC object (and the ingress' shared Service), before the agent's DaemonSet.
    _insert_objects_after(found, found[_index(found, "DaemonSet", "cilium") - 1]["kind"],
                          found[_index(found, "DaemonSet", "cilium") - 1]["metadata"]["name"], services)
    grpc = {"port": 4222}
    relay = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {
        "labels": dict(relay_labels), "name": "hubble-relay", "namespace": "kube-system"}, "spec": {
            "replicas": 2, "selector": {"matchLabels": {"k8s-app": "hubble-relay"}},
            "strategy": {"rollingUpdate": {"maxUnavailable": 1}, "type": "RollingUpdate"},
            "template": {"metadata": {"labels": dict(relay_labels)}, "spec": {
                "affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"k8s-app": "cilium"}}, "topologyKey": "kubernetes.io/hostname"}]}},
                "automountServiceAccountToken": False,
                "containers": [{
                    "args": ["serve"], "command": ["hubble-relay"],
                    "image": "%s/cilium/hubble-relay:%s" % (registry, cilium["version"]),
                    "imagePullPolicy": "IfNotPresent",
                    "livenessProbe": {"failureThreshold": 12, "grpc": dict(grpc), "initialDelaySeconds": 10,
                                      "periodSeconds": 10, "timeoutSeconds": 10},
                    "name": "hubble-relay", "ports": [{"containerPort": 4245, "name": "grpc"}],
                    "readinessProbe": {"grpc": dict(grpc), "timeoutSeconds": 3},
                    "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
                                        "runAsGroup": 65532, "runAsNonRoot": True, "runAsUser": 65532,
                                        "seccompProfile": {"type": "RuntimeDefault"}},
                    "startupProbe": {"failureThreshold": 20, "grpc": dict(grpc), "initialDelaySeconds": 10,
                                     "periodSeconds": 3},
                    "terminationMessagePolicy": "FallbackToLogsOnError",
                    "volumeMounts": [{"mountPath": "/etc/hubble-relay", "name": "config", "readOnly": True},
                                     {"mountPath": "/var/lib/hubble-relay/tls", "name": "tls", "readOnly": True}],
                }],
                "nodeSelector": {"kubernetes.io/os": "linux"},
                "priorityClassName": None,  # the chart's empty value, kept by kops' template
                "restartPolicy": "Always",
                "securityContext": {"fsGroup": 65532, "seccompProfile": {"type": "RuntimeDefault"}},
                "serviceAccountName": "hubble-relay", "terminationGracePeriodSeconds": 1,
                "volumes": [
                    {"configMap": {"items": [{"key": "config.yaml", "path": "config.yaml"}], "name": "hubble-relay-config"},
                     "name": "config"},
                    {"name": "tls", "projected": {"defaultMode": 0o400, "sources": [{"secret": {
                        "items": [{"key": "tls.crt", "path": "client.crt"}, {"key": "tls.key", "path": "client.key"},
                                  {"key": "ca.crt", "path": "hubble-server-ca.crt"}],
                        "name": "hubble-relay-client-certs"}}]}},
                ],
            }}}}
    _insert_objects_after(found, "Deployment", "cilium-operator", [relay])
    found.append(_certificate("hubble-relay-client-certs", "hubble-relay-client",
                              ["signing", "key encipherment", "client auth"]))
    found.append(_certificate("hubble-server-certs", "*.%s.hubble-grpc.cilium.io" % cluster_name.replace(".", "-"),
                              ["signing", "key encipherment", "server auth", "client auth"]))


def _objects(facts, cilium, agent_image, operator_image, api_internal, localhost, resources):  # pylint: disable=too-many-arguments
    """The objects in kops' default configuration; objects() adds what the spec changes."""
    return [
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {
                "labels": {
                    "app.kubernetes.io/name": "cilium-operator",
                    "app.kubernetes.io/part-of": "cilium",
                    "io.cilium/app": "operator",
                    "name": "cilium-operator",
                },
                "name": "cilium-operator",
                "namespace": "kube-system",
            },
            "spec": {
                "maxUnavailable": 1,
                "selector": {"matchLabels": {"io.cilium/app": "operator", "name": "cilium-operator"}},
            },
        },
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "cilium", "namespace": "kube-system"}},
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "cilium-operator", "namespace": "kube-system"},
        },
        {
            "apiVersion": "v1",
            "data": config_data(facts, cilium),
            "kind": "ConfigMap",
            "metadata": {"name": "cilium-config", "namespace": "kube-system"},
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"labels": {"app.kubernetes.io/part-of": "cilium"}, "name": "cilium"},
            "rules": [
                {"apiGroups": ["networking.k8s.io"], "resources": ["networkpolicies"], "verbs": ["get", "list", "watch"]},
                {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["get", "list", "watch"]},
                {
                    "apiGroups": [""],
                    "resources": ["namespaces", "services", "pods", "endpoints", "nodes", "secrets"],
                    "verbs": ["get", "list", "watch"],
                },
                {
                    "apiGroups": ["apiextensions.k8s.io"],
                    "resources": ["customresourcedefinitions"],
                    "verbs": ["list", "watch", "get"],
                },
                {
                    "apiGroups": ["cilium.io"],
                    "resources": [
                        "ciliumloadbalancerippools",
                        "ciliumbgppeeringpolicies",
                        "ciliumbgpnodeconfigs",
                        "ciliumbgpadvertisements",
                        "ciliumbgppeerconfigs",
                        "ciliumclusterwideenvoyconfigs",
                        "ciliumclusterwidenetworkpolicies",
                        "ciliumegressgatewaypolicies",
                        "ciliumendpoints",
                        "ciliumendpointslices",
                        "ciliumenvoyconfigs",
                        "ciliumidentities",
                        "ciliumlocalredirectpolicies",
                        "ciliumnetworkpolicies",
                        "ciliumnodes",
                        "ciliumnodeconfigs",
                        "ciliumcidrgroups",
                        "ciliuml2announcementpolicies",
                        "ciliumpodippools",
                    ],
                    "verbs": ["list", "watch"],
                },
                {
                    "apiGroups": ["cilium.io"],
                    "resources": ["ciliumidentities", "ciliumendpoints", "ciliumnodes"],
                    "verbs": ["create"],
                },
                {"apiGroups": ["cilium.io"], "resources": ["ciliumidentities"], "verbs": ["update"]},
                {"apiGroups": ["cilium.io"], "resources": ["ciliumendpoints"], "verbs": ["delete", "get"]},
                {
                    "apiGroups": ["cilium.io"],
                    "resources": ["ciliumnodes", "ciliumnodes/status"],
                    "verbs": ["get", "update"],
                },
                {
                    "apiGroups": ["cilium.io"],
                    "resources": [
                        "ciliumendpoints/status",
                        "ciliumendpoints",
                        "ciliuml2announcementpolicies/status",
                        "ciliumbgpnodeconfigs/status",
                    ],
                    "verbs": ["patch"],
                },
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"labels": {"app.kubernetes.io/part-of": "cilium"}, "name": "cilium-operator"},
            "rules": [
                {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch", "delete"]},
                {"apiGroups": [""], "resourceNames": ["cilium-config"], "resources": ["configmaps"], "verbs": ["patch"]},
                {"apiGroups": [""], "resources": ["nodes"], "verbs": ["list", "watch"]},
                {"apiGroups": [""], "resources": ["nodes", "nodes/status"], "verbs": ["patch"]},
                {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["get", "list", "watch"]},
                {"apiGroups": [""], "resources": ["services/status"], "verbs": ["update", "patch"]},
                {"apiGroups": [""], "resources": ["namespaces", "secrets"], "verbs": ["get", "list", "watch"]},
                {
                    "apiGroups": [""],
                    "resources": ["services", "endpoints"],
                    "verbs": ["get", "list", "watch", "create", "update", "delete", "patch"],
                },
                {
                    "apiGroups": ["cilium.io"],
                    "resources": ["ciliumnetworkpolicies", "ciliumclusterwidenetworkpolicies"],
                    "verbs": ["create", "update", "deletecollection", "patch", "get", "list", "watch"],
                },
                {
                    "apiGroups": ["cilium.io"],
                    "resources": ["ciliumnetworkpolicies/status", "ciliumclusterwidenetworkpolicies/status"],
                    "verbs": ["patch", "update"],
                },
                {
                    "apiGroups": ["cilium.io"],
                    "resources": ["ciliumendpoints", "ciliumidentities"],
                    "verbs": ["delete", "list", "watch"],
                },
                {"apiGroups": ["cilium.io"], "resources": ["ciliumidentities"], "verbs": ["update"]},
                {
                    "apiGroups": ["cilium.io"],
                    "resources": ["ciliumnodes"],
                    "verbs": ["create", "update", "get", "list", "watch", "delete"],
                },
                {"apiGroups": ["cilium.io"], "resources": ["ciliumnodes/status"], "verbs": ["update"]},
                {
                    "apiGroups": ["cilium.io"],
                    "resources": [
                        "ciliumendpointslices",
                        "ciliumenvoyconfigs",
                        "ciliumbgppeerconfigs",
                        "ciliumbgpadvertisements",
                        "ciliumbgpnodeconfigs",
                    ],
                    "verbs": ["create", "update", "get", "list", "watch", "delete", "patch"],
                },
                {
                    "apiGroups": ["cilium.io"],
                    "resources": ["ciliumbgpclusterconfigs/status", "ciliumbgppeerconfigs/status"],
                    "verbs": ["update"],
                },
                {
                    "apiGroups": ["apiextensions.k8s.io"],
                    "resources": ["customresourcedefinitions"],
                    "verbs": ["create", "get", "list", "watch"],
                },
                {
                    "apiGroups": ["apiextensions.k8s.io"],
                    "resourceNames": [
                        "ciliumloadbalancerippools.cilium.io",
                        "ciliumbgppeeringpolicies.cilium.io",
                        "ciliumbgpclusterconfigs.cilium.io",
                        "ciliumbgppeerconfigs.cilium.io",
                        "ciliumbgpadvertisements.cilium.io",
                        "ciliumbgpnodeconfigs.cilium.io",
                        "ciliumbgpnodeconfigoverrides.cilium.io",
                        "ciliumclusterwideenvoyconfigs.cilium.io",
                        "ciliumclusterwidenetworkpolicies.cilium.io",
                        "ciliumegressgatewaypolicies.cilium.io",
                        "ciliumendpoints.cilium.io",
                        "ciliumendpointslices.cilium.io",
                        "ciliumenvoyconfigs.cilium.io",
                        "ciliumidentities.cilium.io",
                        "ciliumlocalredirectpolicies.cilium.io",
                        "ciliumnetworkpolicies.cilium.io",
                        "ciliumnodes.cilium.io",
                        "ciliumnodeconfigs.cilium.io",
                        "ciliumcidrgroups.cilium.io",
                        "ciliuml2announcementpolicies.cilium.io",
                        "ciliumpodippools.cilium.io",
                        "ciliumgatewayclassconfigs.cilium.io",
                    ],
                    "resources": ["customresourcedefinitions"],
                    "verbs": ["update"],
                },
                {
                    "apiGroups": ["cilium.io"],
                    "resources": [
                        "ciliumloadbalancerippools",
                        "ciliumpodippools",
                        "ciliumbgppeeringpolicies",
                        "ciliumbgpclusterconfigs",
                        "ciliumbgpnodeconfigoverrides",
                        "ciliumbgppeerconfigs",
                    ],
                    "verbs": ["get", "list", "watch"],
                },
                {"apiGroups": ["cilium.io"], "resources": ["ciliumpodippools"], "verbs": ["create"]},
                {"apiGroups": ["cilium.io"], "resources": ["ciliumloadbalancerippools/status"], "verbs": ["patch"]},
                {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create", "get", "update"]},
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"labels": {"app.kubernetes.io/part-of": "cilium"}, "name": "cilium"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cilium"},
            "subjects": [{"kind": "ServiceAccount", "name": "cilium", "namespace": "kube-system"}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"labels": {"app.kubernetes.io/part-of": "cilium"}, "name": "cilium-operator"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cilium-operator"},
            "subjects": [{"kind": "ServiceAccount", "name": "cilium-operator", "namespace": "kube-system"}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {
                "labels": {"app.kubernetes.io/part-of": "cilium"},
                "name": "cilium-config-agent",
                "namespace": "kube-system",
            },
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {
                "labels": {"app.kubernetes.io/part-of": "cilium"},
                "name": "cilium-config-agent",
                "namespace": "kube-system",
            },
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cilium-config-agent"},
            "subjects": [{"kind": "ServiceAccount", "name": "cilium", "namespace": "kube-system"}],
        },
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {
                "labels": {
                    "app.kubernetes.io/name": "cilium-agent",
                    "app.kubernetes.io/part-of": "cilium",
                    "k8s-app": "cilium",
                    "kubernetes.io/cluster-service": "true",
                },
                "name": "cilium",
                "namespace": "kube-system",
            },
            "spec": {
                "selector": {"matchLabels": {"k8s-app": "cilium", "kubernetes.io/cluster-service": "true"}},
                "template": {
                    "metadata": {
                        "annotations": {
                            "container.apparmor.security.beta.kubernetes.io/apply-sysctl-overwrites": "unconfined",
                            "container.apparmor.security.beta.kubernetes.io/cilium-agent": "unconfined",
                            "container.apparmor.security.beta.kubernetes.io/clean-cilium-state": "unconfined",
                            "container.apparmor.security.beta.kubernetes.io/mount-cgroup": "unconfined",
                            "kubectl.kubernetes.io/default-container": "cilium-agent",
                        },
                        "labels": {
                            "app.kubernetes.io/name": "cilium-agent",
                            "app.kubernetes.io/part-of": "cilium",
                            "k8s-app": "cilium",
                            "kubernetes.io/cluster-service": "true",
                        },
                    },
                    "spec": {
                        "affinity": {
                            "podAntiAffinity": {
                                "requiredDuringSchedulingIgnoredDuringExecution": [
                                    {
                                        "labelSelector": {"matchLabels": {"k8s-app": "cilium"}},
                                        "topologyKey": "kubernetes.io/hostname",
                                    },
                                ],
                            },
                        },
                        "automountServiceAccountToken": True,
                        "containers": [
                            {
                                "args": ["--config-dir=/tmp/cilium/config-map"],
                                "command": ["cilium-agent"],
                                "env": [
                                    {
                                        "name": "K8S_NODE_NAME",
                                        "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}},
                                    },
                                    {
                                        "name": "CILIUM_K8S_NAMESPACE",
                                        "valueFrom": {
                                            "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                                        },
                                    },
                                    {"name": "CILIUM_CLUSTERMESH_CONFIG", "value": "/var/lib/cilium/clustermesh/"},
                                    {
                                        "name": "GOMEMLIMIT",
                                        "valueFrom": {"resourceFieldRef": {"divisor": "1", "resource": "limits.memory"}},
                                    },
                                    {"name": "KUBE_CLIENT_BACKOFF_BASE", "value": "1"},
                                    {"name": "KUBE_CLIENT_BACKOFF_DURATION", "value": "120"},
                                    {
                                        "name": "KUBERNETES_SERVICE_HOST",
                                        "value": api_internal,
                                    },
                                    {"name": "KUBERNETES_SERVICE_PORT", "value": "443"},
                                ],
                                "image": agent_image,
                                "imagePullPolicy": "IfNotPresent",
                                "lifecycle": {"preStop": {"exec": {"command": ["/cni-uninstall.sh"]}}},
                                "livenessProbe": {
                                    "failureThreshold": 10,
                                    "httpGet": {
                                        "host": localhost,
                                        "httpHeaders": [
                                            {"name": "brief", "value": "true"},
                                            {"name": "require-k8s-connectivity", "value": "true"},
                                        ],
                                        "path": "/healthz",
                                        "port": 9879,
                                        "scheme": "HTTP",
                                    },
                                    "periodSeconds": 30,
                                    "successThreshold": 1,
                                    "timeoutSeconds": 5,
                                },
                                "name": "cilium-agent",
                                "ports": None,
                                "readinessProbe": {
                                    "failureThreshold": 3,
                                    "httpGet": {
                                        "host": localhost,
                                        "httpHeaders": [{"name": "brief", "value": "true"}],
                                        "path": "/healthz",
                                        "port": 9879,
                                        "scheme": "HTTP",
                                    },
                                    "periodSeconds": 30,
                                    "successThreshold": 1,
                                    "timeoutSeconds": 5,
                                },
                                "resources": resources,
                                "securityContext": {
                                    "capabilities": {
                                        "add": [
                                            "CHOWN",
                                            "KILL",
                                            "NET_ADMIN",
                                            "NET_RAW",
                                            "IPC_LOCK",
                                            "SYS_MODULE",
                                            "SYS_ADMIN",
                                            "SYS_RESOURCE",
                                            "DAC_OVERRIDE",
                                            "FOWNER",
                                            "SETGID",
                                            "SETUID",
                                        ],
                                        "drop": ["ALL"],
                                    },
                                    "seLinuxOptions": {"level": "s0", "type": "spc_t"},
                                },
                                "startupProbe": {
                                    "failureThreshold": 300,
                                    "httpGet": {
                                        "host": localhost,
                                        "httpHeaders": [{"name": "brief", "value": "true"}],
                                        "path": "/healthz",
                                        "port": 9879,
                                        "scheme": "HTTP",
                                    },
                                    "initialDelaySeconds": 5,
                                    "periodSeconds": 2,
                                    "successThreshold": 1,
                                },
                                "terminationMessagePolicy": "FallbackToLogsOnError",
                                "volumeMounts": [
                                    {"mountPath": "/host/proc/sys/net", "name": "host-proc-sys-net"},
                                    {"mountPath": "/host/proc/sys/kernel", "name": "host-proc-sys-kernel"},
                                    {
                                        "mountPath": "/sys/fs/bpf",
                                        "mountPropagation": "HostToContainer",
                                        "name": "bpf-maps",
                                    },
                                    {"mountPath": "/run/cilium/cgroupv2", "name": "cilium-cgroup"},
                                    {"mountPath": "/var/run/cilium", "name": "cilium-run"},
                                    {
                                        "mountPath": "/var/run/cilium/netns",
                                        "mountPropagation": "HostToContainer",
                                        "name": "cilium-netns",
                                    },
                                    {"mountPath": "/host/etc/cni/net.d", "name": "etc-cni-netd"},
                                    {
                                        "mountPath": "/var/lib/cilium/clustermesh",
                                        "name": "clustermesh-secrets",
                                        "readOnly": True,
                                    },
                                    {"mountPath": "/lib/modules", "name": "lib-modules", "readOnly": True},
                                    {"mountPath": "/run/xtables.lock", "name": "xtables-lock"},
                                    {"mountPath": "/tmp", "name": "tmp"},
                                ],
                            },
                        ],
                        "hostNetwork": True,
                        "initContainers": [
                            {
                                "command": ["cilium-dbg", "build-config"],
                                "env": [
                                    {
                                        "name": "K8S_NODE_NAME",
                                        "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}},
                                    },
                                    {
                                        "name": "CILIUM_K8S_NAMESPACE",
                                        "valueFrom": {
                                            "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                                        },
                                    },
                                    {
                                        "name": "KUBERNETES_SERVICE_HOST",
                                        "value": api_internal,
                                    },
                                    {"name": "KUBERNETES_SERVICE_PORT", "value": "443"},
                                ],
                                "image": agent_image,
                                "imagePullPolicy": "IfNotPresent",
                                "name": "config",
                                "terminationMessagePolicy": "FallbackToLogsOnError",
                                "volumeMounts": [{"mountPath": "/tmp", "name": "tmp"}],
                            },
                            {
                                "command": [
                                    "sh",
                                    "-ec",
                                    ("cp /usr/bin/cilium-mount /hostbin/cilium-mount;\n"
                                     "nsenter --cgroup=/hostproc/1/ns/cgroup --mount=/hostproc/1/ns/mnt \"${BIN_PATH}/cilium-mount\" $CGROUP_ROOT;\n"
                                     "rm /hostbin/cilium-mount\n"),
                                ],
                                "env": [
                                    {"name": "CGROUP_ROOT", "value": "/run/cilium/cgroupv2"},
                                    {"name": "BIN_PATH", "value": "/opt/cni/bin"},
                                ],
                                "image": agent_image,
                                "imagePullPolicy": "IfNotPresent",
                                "name": "mount-cgroup",
                                "securityContext": {
                                    "capabilities": {"add": ["SYS_ADMIN", "SYS_CHROOT", "SYS_PTRACE"], "drop": ["ALL"]},
                                    "seLinuxOptions": {"level": "s0", "type": "spc_t"},
                                },
                                "terminationMessagePolicy": "FallbackToLogsOnError",
                                "volumeMounts": [
                                    {"mountPath": "/hostproc", "name": "hostproc"},
                                    {"mountPath": "/hostbin", "name": "cni-path"},
                                ],
                            },
                            {
                                "command": [
                                    "sh",
                                    "-ec",
                                    ("cp /usr/bin/cilium-sysctlfix /hostbin/cilium-sysctlfix;\n"
                                     "nsenter --mount=/hostproc/1/ns/mnt \"${BIN_PATH}/cilium-sysctlfix\";\n"
                                     "rm /hostbin/cilium-sysctlfix\n"),
                                ],
                                "env": [{"name": "BIN_PATH", "value": "/opt/cni/bin"}],
                                "image": agent_image,
                                "imagePullPolicy": "IfNotPresent",
                                "name": "apply-sysctl-overwrites",
                                "securityContext": {
                                    "capabilities": {"add": ["SYS_ADMIN", "SYS_CHROOT", "SYS_PTRACE"], "drop": ["ALL"]},
                                    "seLinuxOptions": {"level": "s0", "type": "spc_t"},
                                },
                                "terminationMessagePolicy": "FallbackToLogsOnError",
                                "volumeMounts": [
                                    {"mountPath": "/hostproc", "name": "hostproc"},
                                    {"mountPath": "/hostbin", "name": "cni-path"},
                                ],
                            },
                            {
                                "args": ["mount | grep \"/sys/fs/bpf type bpf\" || mount -t bpf bpf /sys/fs/bpf"],
                                "command": ["/bin/bash", "-c", "--"],
                                "image": agent_image,
                                "imagePullPolicy": "IfNotPresent",
                                "name": "mount-bpf-fs",
                                "securityContext": {"privileged": True},
                                "terminationMessagePolicy": "FallbackToLogsOnError",
                                "volumeMounts": [
                                    {"mountPath": "/sys/fs/bpf", "mountPropagation": "Bidirectional", "name": "bpf-maps"},
                                ],
                            },
                            {
                                "command": ["/init-container.sh"],
                                "env": [
                                    {
                                        "name": "CILIUM_ALL_STATE",
                                        "valueFrom": {
                                            "configMapKeyRef": {
                                                "key": "clean-cilium-state",
                                                "name": "cilium-config",
                                                "optional": True,
                                            },
                                        },
                                    },
                                    {
                                        "name": "CILIUM_BPF_STATE",
                                        "valueFrom": {
                                            "configMapKeyRef": {
                                                "key": "clean-cilium-bpf-state",
                                                "name": "cilium-config",
                                                "optional": True,
                                            },
                                        },
                                    },
                                    {
                                        "name": "WRITE_CNI_CONF_WHEN_READY",
                                        "valueFrom": {
                                            "configMapKeyRef": {
                                                "key": "write-cni-conf-when-ready",
                                                "name": "cilium-config",
                                                "optional": True,
                                            },
                                        },
                                    },
                                    {
                                        "name": "KUBERNETES_SERVICE_HOST",
                                        "value": api_internal,
                                    },
                                    {"name": "KUBERNETES_SERVICE_PORT", "value": "443"},
                                ],
                                "image": agent_image,
                                "imagePullPolicy": "IfNotPresent",
                                "name": "clean-cilium-state",
                                "securityContext": {
                                    "capabilities": {
                                        "add": ["NET_ADMIN", "SYS_MODULE", "SYS_ADMIN", "SYS_RESOURCE"],
                                        "drop": ["ALL"],
                                    },
                                    "seLinuxOptions": {"level": "s0", "type": "spc_t"},
                                },
                                "terminationMessagePolicy": "FallbackToLogsOnError",
                                "volumeMounts": [
                                    {"mountPath": "/sys/fs/bpf", "name": "bpf-maps"},
                                    {
                                        "mountPath": "/run/cilium/cgroupv2",
                                        "mountPropagation": "HostToContainer",
                                        "name": "cilium-cgroup",
                                    },
                                    {"mountPath": "/var/run/cilium", "name": "cilium-run"},
                                ],
                            },
                            {
                                "command": ["/install-plugin.sh"],
                                "image": agent_image,
                                "imagePullPolicy": "IfNotPresent",
                                "name": "install-cni-binaries",
                                "resources": {"requests": {"cpu": "100m", "memory": "10Mi"}},
                                "securityContext": {
                                    "capabilities": {"drop": ["ALL"]},
                                    "seLinuxOptions": {"level": "s0", "type": "spc_t"},
                                },
                                "terminationMessagePolicy": "FallbackToLogsOnError",
                                "volumeMounts": [{"mountPath": "/host/opt/cni/bin", "name": "cni-path"}],
                            },
                        ],
                        "nodeSelector": {"kubernetes.io/os": "linux"},
                        "priorityClassName": "system-node-critical",
                        "restartPolicy": "Always",
                        "securityContext": {"seccompProfile": {"type": "Unconfined"}},
                        "serviceAccountName": "cilium",
                        "terminationGracePeriodSeconds": 1,
                        "tolerations": [{"operator": "Exists"}],
                        "volumes": [
                            {"emptyDir": {}, "name": "tmp"},
                            {"hostPath": {"path": "/var/run/cilium", "type": "DirectoryOrCreate"}, "name": "cilium-run"},
                            {"hostPath": {"path": "/var/run/netns", "type": "DirectoryOrCreate"}, "name": "cilium-netns"},
                            {"hostPath": {"path": "/sys/fs/bpf", "type": "DirectoryOrCreate"}, "name": "bpf-maps"},
                            {"hostPath": {"path": "/proc", "type": "Directory"}, "name": "hostproc"},
                            {
                                "hostPath": {"path": "/run/cilium/cgroupv2", "type": "DirectoryOrCreate"},
                                "name": "cilium-cgroup",
                            },
                            {"hostPath": {"path": "/opt/cni/bin", "type": "DirectoryOrCreate"}, "name": "cni-path"},
                            {"hostPath": {"path": "/etc/cni/net.d", "type": "DirectoryOrCreate"}, "name": "etc-cni-netd"},
                            {"hostPath": {"path": "/lib/modules"}, "name": "lib-modules"},
                            {"hostPath": {"path": "/run/xtables.lock", "type": "FileOrCreate"}, "name": "xtables-lock"},
                            {
                                "name": "clustermesh-secrets",
                                "projected": {
                                    "defaultMode": 256,
                                    "sources": [
                                        {"secret": {"name": "cilium-clustermesh", "optional": True}},
                                        {
                                            "secret": {
                                                "items": [
                                                    {"key": "tls.key", "path": "common-etcd-client.key"},
                                                    {"key": "tls.crt", "path": "common-etcd-client.crt"},
                                                    {"key": "ca.crt", "path": "common-etcd-client-ca.crt"},
                                                ],
                                                "name": "clustermesh-apiserver-remote-cert",
                                                "optional": True,
                                            },
                                        },
                                        {
                                            "secret": {
                                                "items": [
                                                    {"key": "tls.key", "path": "local-etcd-client.key"},
                                                    {"key": "tls.crt", "path": "local-etcd-client.crt"},
                                                    {"key": "ca.crt", "path": "local-etcd-client-ca.crt"},
                                                ],
                                                "name": "clustermesh-apiserver-local-cert",
                                                "optional": True,
                                            },
                                        },
                                    ],
                                },
                            },
                            {"hostPath": {"path": "/proc/sys/net", "type": "Directory"}, "name": "host-proc-sys-net"},
                            {
                                "hostPath": {"path": "/proc/sys/kernel", "type": "Directory"},
                                "name": "host-proc-sys-kernel",
                            },
                        ],
                    },
                },
                "updateStrategy": {"type": "OnDelete"},
            },
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {
                "labels": {
                    "app.kubernetes.io/name": "cilium-operator",
                    "app.kubernetes.io/part-of": "cilium",
                    "io.cilium/app": "operator",
                    "name": "cilium-operator",
                },
                "name": "cilium-operator",
                "namespace": "kube-system",
            },
            "spec": {
                "replicas": facts.control_plane_controller_replicas(False),
                "selector": {"matchLabels": {"io.cilium/app": "operator", "name": "cilium-operator"}},
                "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "50%"}, "type": "RollingUpdate"},
                "template": {
                    "metadata": {
                        "labels": {
                            "app.kubernetes.io/name": "cilium-operator",
                            "app.kubernetes.io/part-of": "cilium",
                            "io.cilium/app": "operator",
                            "name": "cilium-operator",
                        },
                    },
                    "spec": {
                        "affinity": {
                            "nodeAffinity": {
                                "requiredDuringSchedulingIgnoredDuringExecution": {
                                    "nodeSelectorTerms": [
                                        {
                                            "matchExpressions": [
                                                {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists"},
                                            ],
                                        },
                                        {
                                            "matchExpressions": [
                                                {"key": "node-role.kubernetes.io/master", "operator": "Exists"},
                                            ],
                                        },
                                    ],
                                },
                            },
                            "podAntiAffinity": {
                                "requiredDuringSchedulingIgnoredDuringExecution": [
                                    {
                                        "labelSelector": {"matchLabels": {"io.cilium/app": "operator"}},
                                        "topologyKey": "kubernetes.io/hostname",
                                    },
                                ],
                            },
                        },
                        "automountServiceAccountToken": True,
                        "containers": [
                            {
                                "args": [
                                    "--config-dir=/tmp/cilium/config-map",
                                    "--debug=$(CILIUM_DEBUG)",
                                    "--eni-tags=" + facts.cloud_labels,
                                ],
                                "command": ["cilium-operator"],
                                "env": [
                                    {
                                        "name": "K8S_NODE_NAME",
                                        "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}},
                                    },
                                    {
                                        "name": "CILIUM_K8S_NAMESPACE",
                                        "valueFrom": {
                                            "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                                        },
                                    },
                                    {
                                        "name": "CILIUM_DEBUG",
                                        "valueFrom": {
                                            "configMapKeyRef": {
                                                "key": "debug",
                                                "name": "cilium-config",
                                                "optional": True,
                                            },
                                        },
                                    },
                                    {
                                        "name": "KUBERNETES_SERVICE_HOST",
                                        "value": api_internal,
                                    },
                                    {"name": "KUBERNETES_SERVICE_PORT", "value": "443"},
                                ],
                                "image": operator_image,
                                "imagePullPolicy": "IfNotPresent",
                                "livenessProbe": {
                                    "httpGet": {"host": localhost, "path": "/healthz", "port": 9234, "scheme": "HTTP"},
                                    "initialDelaySeconds": 60,
                                    "periodSeconds": 10,
                                    "timeoutSeconds": 3,
                                },
                                "name": "cilium-operator",
                                "readinessProbe": {
                                    "failureThreshold": 5,
                                    "httpGet": {"host": localhost, "path": "/healthz", "port": 9234, "scheme": "HTTP"},
                                    "initialDelaySeconds": 0,
                                    "periodSeconds": 5,
                                    "timeoutSeconds": 3,
                                },
                                "resources": resources,
                                "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
                                "terminationMessagePolicy": "FallbackToLogsOnError",
                                "volumeMounts": [
                                    {
                                        "mountPath": "/tmp/cilium/config-map",
                                        "name": "cilium-config-path",
                                        "readOnly": True,
                                    },
                                ],
                            },
                        ],
                        "hostNetwork": True,
                        "nodeSelector": {"kubernetes.io/os": "linux"},
                        "priorityClassName": "system-cluster-critical",
                        "restartPolicy": "Always",
                        "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
                        "serviceAccountName": "cilium-operator",
                        "tolerations": [
                            {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists"},
                            {"key": "node-role.kubernetes.io/master", "operator": "Exists"},
                            {"key": "node.kubernetes.io/not-ready", "operator": "Exists"},
                            {"key": "node.cloudprovider.kubernetes.io/uninitialized", "operator": "Exists"},
                            {"key": "node.cilium.io/agent-not-ready", "operator": "Exists"},
                        ],
                        "volumes": [{"configMap": {"name": "cilium-config"}, "name": "cilium-config-path"}],
                    },
                },
            },
        },
    ]
