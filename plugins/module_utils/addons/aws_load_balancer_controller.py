# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The AWS Load Balancer Controller (kops' aws-load-balancer-controller.addons.k8s.io, id k8s-1.19).

What kops renders for spec.awsLoadBalancerController.enabled on AWS: the
chart's CRDs (aws_load_balancer_controller_crds, generated from kops), its
RBAC, a webhook Service, the controller Deployment on the control plane with
host networking (so it uses the control-plane instance role: kops grants that
role the controller's permissions), a cert-manager Issuer and Certificate for
the webhook's serving certificate, the `alb` IngressClass and its params, and
the mutating and validating webhooks whose CA cert-manager injects.

With spec.iam.useServiceAccountExternalPermissions kops renders its variant
k8s-1.19-irsa: the controller runs on any node (no host networking, no
control-plane tolerations or affinity, a preferred anti-affinity between
replicas) as its own IAM role (addons/service_accounts.py wires the token).
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.addons import aws, service_accounts
from ansible_collections.kubeops.kops.plugins.module_utils.addons.generated.aws_load_balancer_controller_crds import CRDS
from ansible_collections.kubeops.kops.plugins.module_utils.addons.facts import AddonError
from ansible_collections.kubeops.kops.plugins.module_utils.addons.generated.image_data import IMAGES

ADDON = "aws-load-balancer-controller.addons.k8s.io"
NAME = "aws-load-balancer-controller"
NAMESPACE = "kube-system"
CHART_VERSION = "3.3.0"  # the eks-charts release kops' template was built from (its labels say so)
IMAGE = "public.ecr.aws/eks/aws-load-balancer-controller"
WEBHOOK_SERVICE = "aws-load-balancer-webhook-service"
SERVING_CERT = "aws-load-balancer-serving-cert"
ISSUER = "aws-load-balancer-selfsigned-issuer"
WEBHOOK_SECRET = "aws-load-balancer-webhook-tls"
LEADER = "aws-load-balancer-controller-leader"
METRICS_PORT = 9442
HEALTH_PORT = 61779
# kops' defaults for the spec's resource fields (LoadBalancerControllerSpec).
RESOURCES = {("limits", "cpu"): ("cpuLimit", "200m"), ("limits", "memory"): ("memoryLimit", "500Mi"),
             ("requests", "cpu"): ("cpuRequest", "100m"), ("requests", "memory"): ("memoryRequest", "200Mi")}
CHART_LABELS = {"app.kubernetes.io/instance": NAME, "app.kubernetes.io/name": NAME,
                "app.kubernetes.io/version": "v" + CHART_VERSION, "helm.sh/chart": "%s-%s" % (NAME, CHART_VERSION)}
SELECTOR = {"app.kubernetes.io/component": "controller", "app.kubernetes.io/name": NAME}
NOT_THE_CONTROLLER = {"key": "app.kubernetes.io/name", "operator": "NotIn", "values": [NAME]}
CONTROL_PLANE_TOLERATIONS = [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists"},
                             {"key": "node-role.kubernetes.io/master", "operator": "Exists"}]


def _meta(name, namespaced=True, **labels):
    metadata = {"labels": dict(CHART_LABELS, **labels), "name": name}
    if namespaced:
        metadata["namespace"] = NAMESPACE
    return metadata


def _rule(groups, resources, verbs, names=None):
    rule = {"apiGroups": groups, "resources": resources, "verbs": verbs}
    if names:
        rule["resourceNames"] = names
    return rule


READ = ["get", "list", "watch"]
READ_PATCH = ["get", "list", "patch", "watch"]
PATCH_UPDATE = ["patch", "update"]
GET_PATCH_UPDATE = ["get", "patch", "update"]
GATEWAY_CONFIGS = ["listenerruleconfigurations", "loadbalancerconfigurations", "targetgroupconfigurations"]
ROUTES = ["grpcroutes", "httproutes", "listenersets", "tcproutes", "tlsroutes", "udproutes"]
CLUSTER_RULES = [
    _rule([""], ["configmaps"], ["create", "delete", "get", "update"]),
    _rule([""], ["endpoints", "namespaces", "nodes", "pods"], READ),
    _rule([""], ["events"], ["create", "patch"]),
    _rule([""], ["pods/status", "services/status"], PATCH_UPDATE),
    _rule([""], ["services"], ["get", "list", "patch", "update", "watch"]),
    _rule(["aga.k8s.aws"], ["globalaccelerators"], READ_PATCH),
    _rule(["aga.k8s.aws"], ["globalaccelerators/finalizers", "globalaccelerators/status"], PATCH_UPDATE),
    _rule(["discovery.k8s.io"], ["endpointslices"], READ),
    _rule(["elbv2.k8s.aws"], ["albtargetcontrolconfigs"], ["get"]),
    _rule(["elbv2.k8s.aws"], ["ingressclassparams"], READ),
    _rule(["elbv2.k8s.aws"], ["targetgroupbindings"], ["create", "delete", "get", "list", "patch", "update", "watch"]),
    _rule(["elbv2.k8s.aws"], ["targetgroupbindings/status"], PATCH_UPDATE),
    _rule(["extensions", "networking.k8s.io"], ["ingresses"], ["get", "list", "patch", "update", "watch"]),
    _rule(["extensions", "networking.k8s.io"], ["ingresses/status"], PATCH_UPDATE),
    _rule(["gateway.k8s.aws"], GATEWAY_CONFIGS, READ_PATCH),
    _rule(["gateway.k8s.aws"], [r + "/finalizers" for r in GATEWAY_CONFIGS], PATCH_UPDATE),
    _rule(["gateway.k8s.aws"], [r + "/status" for r in GATEWAY_CONFIGS], GET_PATCH_UPDATE),
    _rule(["gateway.networking.k8s.io"], ["gatewayclasses", "gateways", "referencegrants"], READ_PATCH),
    _rule(["gateway.networking.k8s.io"], ["gatewayclasses/finalizers", "gateways/finalizers"], PATCH_UPDATE),
    _rule(["gateway.networking.k8s.io"], sorted(["gatewayclasses/status", "gateways/status"]
                                                + [r + "/status" for r in ROUTES]), GET_PATCH_UPDATE),
    _rule(["gateway.networking.k8s.io"], ROUTES, READ),
    _rule(["gateway.networking.k8s.io"], [r + "/finalizers" for r in ROUTES], ["update"]),
    _rule(["networking.k8s.io"], ["ingressclasses"], READ),
]
LEADER_ELECTION_RULES = [
    _rule([""], ["configmaps"], ["create"]),
    _rule([""], ["configmaps"], ["get", "patch", "update"], names=[LEADER]),
    _rule(["coordination.k8s.io"], ["leases"], ["create"]),
    _rule(["coordination.k8s.io"], ["leases"], ["get", "update", "patch"], names=[LEADER]),
]


def _webhook(name, path, rules, failure="Fail", namespace_selector=None, object_selector=None, **extra):
    """One admission webhook served by the controller's webhook Service (None selectors are left out)."""
    webhook = {"admissionReviewVersions": ["v1beta1"],
               "clientConfig": {"service": {"name": WEBHOOK_SERVICE, "namespace": NAMESPACE, "path": path}},
               "failurePolicy": failure, "name": name, "rules": rules, "sideEffects": "None"}
    if namespace_selector:
        webhook["namespaceSelector"] = {"matchExpressions": namespace_selector}
    if object_selector:
        webhook["objectSelector"] = {"matchExpressions": object_selector}
    webhook.update(extra)
    return webhook


def _on(group, version, resource, operations=("CREATE",)):
    return [{"apiGroups": [group], "apiVersions": [version], "operations": list(operations), "resources": [resource]}]


PODS = _on("", "v1", "pods")
TARGET_GROUP_BINDINGS = _on("elbv2.k8s.aws", "v1beta1", "targetgroupbindings", ("CREATE", "UPDATE"))
TARGET_CONTROL = "elbv2.k8s.aws/alb-target-control-agent-inject"
TARGET_CONTROL_NAMESPACE = "elbv2.k8s.aws/alb-target-control-agent-injection"
MUTATING_WEBHOOKS = [
    _webhook("mpod.elbv2.k8s.aws", "/mutate-v1-pod", PODS, failure="Ignore",
             namespace_selector=[{"key": "elbv2.k8s.aws/pod-readiness-gate-inject", "operator": "In",
                                  "values": ["enabled"]}],
             object_selector=[NOT_THE_CONTROLLER]),
    _webhook("quicid.elbv2.k8s.aws", "/mutate-v1-pod-server-id", PODS,
             namespace_selector=[{"key": "elbv2.k8s.aws/quic-server-id-inject", "operator": "In",
                                  "values": ["enabled"]}],
             object_selector=[NOT_THE_CONTROLLER]),
    # kops excludes kube-system so the Services it manages never go through the controller.
    _webhook("mservice.elbv2.k8s.aws", "/mutate-v1-service", _on("", "v1", "services"),
             namespace_selector=[{"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": [NAMESPACE]}],
             object_selector=[NOT_THE_CONTROLLER]),
    _webhook("alb-target-control.namespace.elbv2.k8s.aws", "/mutate-alb-target-control-namespace-v1-pod", PODS,
             namespace_selector=[{"key": TARGET_CONTROL_NAMESPACE, "operator": "In", "values": ["enabled"]}],
             object_selector=[NOT_THE_CONTROLLER, {"key": TARGET_CONTROL, "operator": "NotIn", "values": ["false"]}]),
    _webhook("alb-target-control.object.elbv2.k8s.aws", "/mutate-alb-target-control-object-v1-pod", PODS,
             namespace_selector=[{"key": TARGET_CONTROL_NAMESPACE, "operator": "DoesNotExist"}],
             object_selector=[NOT_THE_CONTROLLER, {"key": TARGET_CONTROL, "operator": "In", "values": ["true"]}]),
    _webhook("mtargetgroupbinding.elbv2.k8s.aws", "/mutate-elbv2-k8s-aws-v1beta1-targetgroupbinding",
             TARGET_GROUP_BINDINGS),
]
VALIDATING_WEBHOOKS = [
    _webhook("vingressclassparams.elbv2.k8s.aws", "/validate-elbv2-k8s-aws-v1beta1-ingressclassparams",
             _on("elbv2.k8s.aws", "v1beta1", "ingressclassparams", ("CREATE", "UPDATE")),
             object_selector=[NOT_THE_CONTROLLER]),
    _webhook("vtargetgroupbinding.elbv2.k8s.aws", "/validate-elbv2-k8s-aws-v1beta1-targetgroupbinding",
             TARGET_GROUP_BINDINGS),
    # The chart writes both selectors as explicit nulls here; kops keeps them, and so does its manifestHash.
    _webhook("vingress.elbv2.k8s.aws", "/validate-networking-v1-ingress",
             _on("networking.k8s.io", "v1", "ingresses", ("CREATE", "UPDATE")),
             matchPolicy="Equivalent", namespaceSelector=None, objectSelector=None),
]


def needs_cert_manager(facts):
    """kops' validation: the controller's webhook certificate comes from cert-manager."""
    if not (facts.section("certManager") or {}).get("enabled"):
        raise AddonError("addon %s: spec.awsLoadBalancerController.enabled requires cert-manager (it issues the "
                         "controller's webhook certificate); set spec.certManager.enabled: true" % ADDON)


def _bool(value):
    return "true" if value else "false"


def _image(config):
    return "%s:%s" % (IMAGE, config.get("version") or IMAGES[ADDON][IMAGE])


def _resources(config):
    resources = {}
    for (kind, resource), (field, default) in RESOURCES.items():
        resources.setdefault(kind, {})[resource] = str(config.get(field) or default)
    return resources


def _container(facts, config):
    return {
        "args": ["--cluster-name=%s" % facts.name, "--ingress-class=alb", "--aws-region=%s" % facts.region,
                 "--metrics-bind-addr=:%d" % METRICS_PORT,
                 "--enable-waf=%s" % _bool(config.get("enableWAF")),
                 "--enable-wafv2=%s" % _bool(config.get("enableWAFv2")),
                 "--enable-shield=%s" % _bool(config.get("enableShield")),
                 "--default-tags=%s" % facts.cloud_labels],
        "env": [{"name": "NODENAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}}],
        "image": _image(config),
        "imagePullPolicy": "IfNotPresent",
        "livenessProbe": {"failureThreshold": 2, "httpGet": {"path": "/healthz", "port": HEALTH_PORT, "scheme": "HTTP"},
                          "initialDelaySeconds": 30, "timeoutSeconds": 10},
        "name": NAME,
        "ports": [{"containerPort": 9443, "name": "webhook-server", "protocol": "TCP"},
                  {"containerPort": METRICS_PORT, "name": "metrics-server", "protocol": "TCP"}],
        "readinessProbe": {"failureThreshold": 2, "httpGet": {"path": "/readyz", "port": HEALTH_PORT, "scheme": "HTTP"},
                           "initialDelaySeconds": 10, "successThreshold": 1, "timeoutSeconds": 10},
        "resources": _resources(config),
        "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True, "runAsNonRoot": True},
        "volumeMounts": [{"mountPath": "/tmp/k8s-webhook-server/serving-certs", "name": "cert", "readOnly": True}],
    }


def _deployment(facts, config):
    pod = {
        "containers": [_container(facts, config)],
        "priorityClassName": "system-cluster-critical",
        "securityContext": {"fsGroup": 65534},
        "serviceAccountName": NAME,
        "terminationGracePeriodSeconds": 10,
        "volumes": [{"name": "cert", "secret": {"defaultMode": 420, "secretName": WEBHOOK_SECRET}}],
    }
    spec = {"replicas": 1, "revisionHistoryLimit": 10, "selector": {"matchLabels": dict(SELECTOR)}}
    if service_accounts.irsa(facts.spec):
        # kops' k8s-1.19-irsa: its own role through the projected token, so it may run on any node.
        pod["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
            "podAffinityTerm": {"labelSelector": {"matchExpressions": [
                {"key": "app.kubernetes.io/name", "operator": "In", "values": [NAME]}]},
                "topologyKey": "kubernetes.io/hostname"},
            "weight": 100}]}}
    else:
        pod.update(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": aws.CONTROL_PLANE_AFFINITY_TERMS}}},
            hostNetwork=True, tolerations=CONTROL_PLANE_TOLERATIONS)
        # maxSurge 0: host networking on the control plane, so a second pod could not bind the ports.
        spec["strategy"] = {"rollingUpdate": {"maxSurge": 0}, "type": "RollingUpdate"}
    spec["template"] = {
        "metadata": {"annotations": {"prometheus.io/port": str(METRICS_PORT), "prometheus.io/scrape": "true"},
                     "labels": dict(SELECTOR, **{"app.kubernetes.io/instance": NAME})},
        "spec": pod,
    }
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta(NAME), "spec": spec}


def objects(facts):
    """The addon's objects in kops' order, before the channel's relabelling."""
    needs_cert_manager(facts)
    config = facts.section("awsLoadBalancerController")
    subject = [{"kind": "ServiceAccount", "name": NAME, "namespace": NAMESPACE}]
    inject_ca = {"cert-manager.io/inject-ca-from": "%s/%s" % (NAMESPACE, SERVING_CERT)}
    return [dict(crd) for crd in CRDS] + [
        {"apiVersion": "v1", "automountServiceAccountToken": True, "kind": "ServiceAccount", "metadata": _meta(NAME)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
         "metadata": _meta(NAME + "-leader-election-role"), "rules": LEADER_ELECTION_RULES},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": _meta(NAME + "-role", namespaced=False), "rules": CLUSTER_RULES},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": _meta(NAME + "-leader-election-rolebinding"),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": NAME + "-leader-election-role"},
         "subjects": subject},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": _meta(NAME + "-rolebinding", namespaced=False),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": NAME + "-role"},
         "subjects": subject},
        {"apiVersion": "v1", "kind": "Service",
         "metadata": _meta(WEBHOOK_SERVICE, **{"app.kubernetes.io/component": "webhook",
                                               "prometheus.io/service-monitor": "false"}),
         "spec": {"ports": [{"name": "webhook-server", "port": 443, "targetPort": "webhook-server"}],
                  "selector": dict(SELECTOR)}},
        _deployment(facts, config),
        {"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": _meta(SERVING_CERT),
         "spec": {"dnsNames": ["%s.%s.svc" % (WEBHOOK_SERVICE, NAMESPACE),
                               "%s.%s.svc.cluster.local" % (WEBHOOK_SERVICE, NAMESPACE)],
                  "duration": "8760h0m0s", "issuerRef": {"kind": "Issuer", "name": ISSUER},
                  "renewBefore": "720h0m0s", "secretName": WEBHOOK_SECRET}},
        {"apiVersion": "cert-manager.io/v1", "kind": "Issuer", "metadata": _meta(ISSUER), "spec": {"selfSigned": {}}},
        {"apiVersion": "elbv2.k8s.aws/v1beta1", "kind": "IngressClassParams", "metadata": _meta("alb", namespaced=False)},
        {"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": _meta("alb", namespaced=False),
         "spec": {"controller": "ingress.k8s.aws/alb"}},
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
         "metadata": dict(_meta("aws-load-balancer-webhook", namespaced=False), annotations=inject_ca),
         "webhooks": MUTATING_WEBHOOKS},
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
         "metadata": dict(_meta("aws-load-balancer-webhook", namespaced=False), annotations=inject_ca),
         "webhooks": VALIDATING_WEBHOOKS},
    ]
