# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""cert-manager (certmanager.io), when spec.certManager.enabled and not managed: false: the controller, its
CA injector and its admission webhook in kube-system, on the control plane, with cert-manager's six CRDs
(upstream schemas: cert_manager_crds, generated).  Objects before kops' relabelling (channel.remap).

The Issuer a needsPKI addon gets is made by the channel applier (kube/channels.py, kops' installPKI), not
here; this addon only serves the cert-manager.io/v1 API it uses.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.addons.generated.cert_manager_crds import CRDS
from ansible_collections.kubeops.kops.plugins.module_utils.addons.core import (
    KUBE_SYSTEM, LINUX, binding, pinned_image, role, rule, service_account)

ADDON = "certmanager.io"
REPOSITORY = "quay.io/jetstack/cert-manager-"  # + controller, cainjector, webhook, acmesolver
CERT_MANAGER = "cert-manager.io"
ACME = "acme.cert-manager.io"
GATEWAY = "gateway.networking.k8s.io"
NETWORKING = "networking.k8s.io"
READ = ["get", "list", "watch"]
WEBHOOK_CA = "cert-manager-webhook-ca"
# (app label, app.kubernetes.io/name, app.kubernetes.io/component) of each part of the chart.
CAINJECTOR = ("cainjector", "cainjector", "cainjector")
CONTROLLER = ("cert-manager", "cert-manager", "controller")
WEBHOOK = ("webhook", "webhook", "webhook")
CRD_PART = ("cert-manager", "cert-manager", "crds")
APPROVER = ("cert-manager", "cert-manager", "cert-manager")  # how the chart labels its two signer roles and bindings
# The chart's placement, from kops' helm values: control-plane nodes only.
CONTROL_PLANE_AFFINITY = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "node-role.kubernetes.io/" + role_label, "operator": "Exists"}]}
    for role_label in ("control-plane", "master")]}}}
CONTROL_PLANE_TOLERATIONS = [{"key": "node-role.kubernetes.io/" + role_label, "operator": "Exists"}
                             for role_label in ("control-plane", "master")]
METRICS_PORT = {"containerPort": 9402, "name": "http-metrics", "protocol": "TCP"}
DROP_ALL = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}, "readOnlyRootFilesystem": True}
POD_NAMESPACE = {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}


def image(component):
    """The chart's image of one component, at the tag kops pins (image_data)."""
    return pinned_image(ADDON, REPOSITORY + component)


def version():
    """cert-manager's version, the tag of its controller image (the chart labels everything with it)."""
    return image("controller").rpartition(":")[2]


def labels(part, extra=None):
    app, name, component = part
    found = {"app": app, "app.kubernetes.io/name": name, "app.kubernetes.io/instance": "cert-manager",
             "app.kubernetes.io/component": component, "app.kubernetes.io/version": version()}
    found.update(extra or {})
    return found


def selector(part):
    return {"app.kubernetes.io/name": part[1], "app.kubernetes.io/instance": "cert-manager",
            "app.kubernetes.io/component": part[2]}


def check(facts):
    """Refuse what kops would render differently from us, or not at all."""
    config = facts.section("certManager")
    if config.get("hostedZoneIDs") and not facts.use_service_account_external_permissions:
        # Its Route53 role is made (addons/service_accounts.py) but only IRSA lets the pod assume it.
        facts.refuse(ADDON, "spec.certManager.hostedZoneIDs without spec.iam.useServiceAccountExternalPermissions "
                     "(kops forbids it: dns-01 validation needs the service account's own IAM role)",
                     "set spec.iam.useServiceAccountExternalPermissions: true or remove hostedZoneIDs")
    if config.get("image") and config["image"] != image("controller"):
        facts.refuse(ADDON, "spec.certManager.image %r (kops ignores it and runs %s)" % (config["image"], image("controller")),
                     "remove it; spec.assets.containerRegistry or containerProxy move every image")


def _crd(crd):
    """kops' CRD with the labels kops gives cert-manager's parts (the chart's own are not kept)."""
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"labels": labels(CRD_PART), "name": crd["metadata"]["name"]}, "spec": crd["spec"]}


def _cluster_roles():
    controller_roles = {
        "issuers": [
            rule([CERT_MANAGER], ["issuers", "issuers/status"], ["update", "patch"]),
            rule([CERT_MANAGER], ["issuers"], READ),
            rule([""], ["secrets"], READ + ["create", "update", "delete"]),
            rule([""], ["events"], ["create", "patch"]),
        ],
        "clusterissuers": [
            rule([CERT_MANAGER], ["clusterissuers", "clusterissuers/status"], ["update", "patch"]),
            rule([CERT_MANAGER], ["clusterissuers"], READ),
            rule([""], ["secrets"], READ + ["create", "update", "delete"]),
            rule([""], ["events"], ["create", "patch"]),
        ],
        "certificates": [
            rule([CERT_MANAGER], ["certificates", "certificates/status", "certificaterequests",
                                  "certificaterequests/status"], ["update", "patch"]),
            rule([CERT_MANAGER], ["certificates", "certificaterequests", "clusterissuers", "issuers"], READ),
            # For the OwnerReferencesPermissionEnforcement admission controller.
            rule([CERT_MANAGER], ["certificates/finalizers", "certificaterequests/finalizers"], ["update"]),
            rule([ACME], ["orders"], ["create", "delete", "get", "list", "watch"]),
            rule([""], ["secrets"], READ + ["create", "update", "delete", "patch"]),
            rule([""], ["events"], ["create", "patch"]),
        ],
        "orders": [
            rule([ACME], ["orders", "orders/status"], ["update", "patch"]),
            rule([ACME], ["orders", "challenges"], READ),
            rule([CERT_MANAGER], ["clusterissuers", "issuers"], READ),
            rule([ACME], ["challenges"], ["create", "delete"]),
            rule([ACME], ["orders/finalizers"], ["update"]),
            rule([""], ["secrets"], READ),
            rule([""], ["events"], ["create", "patch"]),
        ],
        "challenges": [
            rule([ACME], ["challenges", "challenges/status"], ["update", "patch"]),
            rule([ACME], ["challenges"], READ),
            rule([CERT_MANAGER], ["issuers", "clusterissuers"], READ),
            rule([""], ["secrets"], READ),  # the ACME account key
            rule([""], ["events"], ["create", "patch"]),
            # HTTP-01: the solver's pods, services, ingresses and routes.
            rule([""], ["pods", "services"], READ + ["create", "delete"]),
            rule([NETWORKING], ["ingresses"], READ + ["create", "delete", "update"]),
            rule([GATEWAY], ["httproutes"], READ + ["create", "delete", "update"]),
            rule(["route.openshift.io"], ["routes/custom-host"], ["create"]),
            rule([ACME], ["challenges/finalizers"], ["update"]),
            rule([""], ["secrets"], READ),  # DNS-01 (the chart repeats the rule)
        ],
        "ingress-shim": [
            rule([CERT_MANAGER], ["certificates", "certificaterequests"], ["create", "update", "delete"]),
            rule([CERT_MANAGER], ["certificates", "certificaterequests", "issuers", "clusterissuers"], READ),
            rule([NETWORKING], ["ingresses"], READ),
            rule([NETWORKING], ["ingresses/finalizers"], ["update"]),
            rule([GATEWAY], ["gateways", "httproutes"], READ),
            rule([GATEWAY], ["gateways/finalizers", "httproutes/finalizers"], ["update"]),
            rule([""], ["events"], ["create", "patch"]),
        ],
    }
    aggregate = "rbac.authorization.k8s.io/aggregate-to-"
    cluster_roles = [("cert-manager-cainjector", CAINJECTOR, None, [
        rule([CERT_MANAGER], ["certificates"], READ),
        rule([""], ["secrets"], READ),
        rule([""], ["events"], ["get", "create", "update", "patch"]),
        rule(["admissionregistration.k8s.io"], ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"],
             READ + ["update", "patch"]),
        rule(["apiregistration.k8s.io"], ["apiservices"], READ + ["update", "patch"]),
        rule(["apiextensions.k8s.io"], ["customresourcedefinitions"], READ + ["update", "patch"]),
    ])]
    cluster_roles += [("cert-manager-controller-" + name, CONTROLLER, None, rules)
                      for name, rules in controller_roles.items()]
    cluster_roles += [
        ("cert-manager-cluster-view", CONTROLLER, {aggregate + "cluster-reader": "true"}, [
            rule([CERT_MANAGER], ["clusterissuers"], READ)]),
        ("cert-manager-view", CONTROLLER, {aggregate + kind: "true" for kind in ("view", "edit", "admin", "cluster-reader")}, [
            rule([CERT_MANAGER], ["certificates", "certificaterequests", "issuers"], READ),
            rule([ACME], ["challenges", "orders"], READ)]),
        ("cert-manager-edit", CONTROLLER, {aggregate + kind: "true" for kind in ("edit", "admin")}, [
            rule([CERT_MANAGER], ["certificates", "certificaterequests", "issuers"],
                 ["create", "delete", "deletecollection", "patch", "update"]),
            rule([CERT_MANAGER], ["certificates/status"], ["update"]),
            rule([ACME], ["challenges", "orders"], ["create", "delete", "deletecollection", "patch", "update"])]),
        ("cert-manager-controller-approve:cert-manager-io", APPROVER, None, [
            rule([CERT_MANAGER], ["signers"], ["approve"], names=["issuers.cert-manager.io/*",
                                                                  "clusterissuers.cert-manager.io/*"])]),
        ("cert-manager-controller-certificatesigningrequests", APPROVER, None, [
            rule(["certificates.k8s.io"], ["certificatesigningrequests"], READ + ["update"]),
            rule(["certificates.k8s.io"], ["certificatesigningrequests/status"], ["update", "patch"]),
            rule(["certificates.k8s.io"], ["signers"], ["sign"], names=["issuers.cert-manager.io/*",
                                                                        "clusterissuers.cert-manager.io/*"]),
            rule(["authorization.k8s.io"], ["subjectaccessreviews"], ["create"])]),
        ("cert-manager-webhook:subjectaccessreviews", WEBHOOK, None, [
            rule(["authorization.k8s.io"], ["subjectaccessreviews"], ["create"])]),
    ]
    return [role("ClusterRole", name, rules, labels=labels(part, extra)) for name, part, extra, rules in cluster_roles]


def _subject(name):
    return [{"kind": "ServiceAccount", "name": name, "namespace": KUBE_SYSTEM}]


def _cluster_role_bindings():
    bound = [("cert-manager-cainjector", CAINJECTOR, "cert-manager-cainjector")]
    bound += [("cert-manager-controller-" + name, CONTROLLER, "cert-manager")
              for name in ("issuers", "clusterissuers", "certificates", "orders", "challenges", "ingress-shim")]
    bound += [("cert-manager-controller-approve:cert-manager-io", APPROVER, "cert-manager"),
              ("cert-manager-controller-certificatesigningrequests", APPROVER, "cert-manager"),
              ("cert-manager-webhook:subjectaccessreviews", WEBHOOK, "cert-manager-webhook")]
    return [binding("ClusterRoleBinding", name, "ClusterRole", name, _subject(account), labels=labels(part))
            for name, part, account in bound]


def _roles_and_bindings():
    leases = ["coordination.k8s.io"]
    roles = [
        ("cert-manager-cainjector:leaderelection", CAINJECTOR, "cert-manager-cainjector", [
            rule(leases, ["leases"], ["get", "update", "patch"],
                 names=["cert-manager-cainjector-leader-election", "cert-manager-cainjector-leader-election-core"]),
            rule(leases, ["leases"], ["create"])]),
        ("cert-manager:leaderelection", CONTROLLER, "cert-manager", [
            rule(leases, ["leases"], ["get", "update", "patch"], names=["cert-manager-controller"]),
            rule(leases, ["leases"], ["create"])]),
        # The controller asks for tokens of its own service account (ambient credentials for issuers).
        ("cert-manager-tokenrequest", CONTROLLER, "cert-manager", [
            rule([""], ["serviceaccounts/token"], ["create"], names=["cert-manager"])]),
        ("cert-manager-webhook:dynamic-serving", WEBHOOK, "cert-manager-webhook", [
            rule([""], ["secrets"], READ + ["update"], names=[WEBHOOK_CA]),
            rule([""], ["secrets"], ["create"])]),  # create cannot be limited to one name
    ]
    found = [role("Role", name, rules, namespace=KUBE_SYSTEM, labels=labels(part)) for name, part, _sa, rules in roles]
    found += [binding("RoleBinding", name, "Role", name, _subject(account), namespace=KUBE_SYSTEM, labels=labels(part))
              for name, part, account, _rules in roles]
    return found


def _service(name, part, ports):
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"labels": labels(part), "name": name, "namespace": KUBE_SYSTEM},
            "spec": {"ports": ports, "selector": selector(part), "type": "ClusterIP"}}


def _deployment(name, part, container, pod_spec=None):
    pod = {"affinity": CONTROL_PLANE_AFFINITY, "containers": [container], "enableServiceLinks": False,
           "nodeSelector": LINUX, "priorityClassName": "system-cluster-critical",
           "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
           "serviceAccountName": name, "tolerations": CONTROL_PLANE_TOLERATIONS}
    pod.update(pod_spec or {})
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"labels": labels(part), "name": name, "namespace": KUBE_SYSTEM},
            "spec": {"replicas": 1, "selector": {"matchLabels": selector(part)}, "template": {
                "metadata": {"annotations": {"prometheus.io/path": "/metrics", "prometheus.io/port": "9402",
                                             "prometheus.io/scrape": "true"},
                             "labels": labels(part)},
                "spec": pod}}}


def _controller(facts):
    config = facts.section("certManager")
    args = ["--v=2", "--cluster-resource-namespace=$(POD_NAMESPACE)", "--leader-election-namespace=kube-system",
            "--acme-http01-solver-image=" + image("acmesolver"), "--max-concurrent-challenges=60",
            "--enable-certificate-owner-ref=true"]
    if config.get("defaultIssuer"):
        args += ["--default-issuer-name=" + config["defaultIssuer"], "--default-issuer-kind=ClusterIssuer",
                 "--default-issuer-group=cert-manager.io"]
    # A Go template ranges over a map in key order; Go prints a bool as true/false.
    args += ["--feature-gates=%s=%s" % (gate, "true" if enabled else "false")
             for gate, enabled in sorted((config.get("featureGates") or {}).items())]
    env = [POD_NAMESPACE]
    if facts.provider == "aws":  # the Route53 dns-01 solver's STS region (no other source with IRSA)
        env.append({"name": "AWS_REGION", "value": facts.region})
    container = {"args": args, "env": env, "image": image("controller"), "imagePullPolicy": "IfNotPresent",
                 "livenessProbe": {"failureThreshold": 8, "httpGet": {"path": "/livez", "port": "http-healthz",
                                                                      "scheme": "HTTP"},
                                   "initialDelaySeconds": 10, "periodSeconds": 10, "successThreshold": 1,
                                   "timeoutSeconds": 15},
                 "name": "cert-manager-controller",
                 "ports": [METRICS_PORT, {"containerPort": 9403, "name": "http-healthz", "protocol": "TCP"}],
                 "securityContext": DROP_ALL}
    pod_spec = {}
    if config.get("nameservers"):
        pod_spec = {"dnsConfig": {"nameservers": [str(n) for n in config["nameservers"]]}, "dnsPolicy": "None"}
    return _deployment("cert-manager", CONTROLLER, container, pod_spec)


def _webhook_probe(path, delay, period):
    return {"failureThreshold": 3, "httpGet": {"path": path, "port": "healthcheck", "scheme": "HTTP"},
            "initialDelaySeconds": delay, "periodSeconds": period, "successThreshold": 1, "timeoutSeconds": 1}


def _webhook_configuration(kind, rules, extra):
    webhook = {"admissionReviewVersions": ["v1"],
               "clientConfig": {"service": {"name": "cert-manager-webhook", "namespace": KUBE_SYSTEM,
                                            "path": "/" + ("mutate" if kind.startswith("Mutating") else "validate")}},
               "failurePolicy": "Fail",
               # Only v1 resources are served; Equivalent sends other versions here converted to v1.
               "matchPolicy": "Equivalent", "name": "webhook.cert-manager.io", "rules": rules,
               "sideEffects": "None", "timeoutSeconds": 30}
    webhook.update(extra)
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
            "metadata": {"annotations": {"cert-manager.io/inject-ca-from-secret": KUBE_SYSTEM + "/" + WEBHOOK_CA},
                         "labels": labels(WEBHOOK), "name": "cert-manager-webhook"},
            "webhooks": [webhook]}


def objects(facts):
    check(facts)
    return (
        [dict(service_account(name, labels=labels(part)), automountServiceAccountToken=True)
         for name, part in (("cert-manager-cainjector", CAINJECTOR), ("cert-manager", CONTROLLER),
                            ("cert-manager-webhook", WEBHOOK))]
        + [_crd(crd) for crd in CRDS]
        + _cluster_roles() + _cluster_role_bindings() + _roles_and_bindings()
        + [
            _service("cert-manager-cainjector", CAINJECTOR, [{"name": "http-metrics", "port": 9402, "protocol": "TCP"}]),
            _service("cert-manager", CONTROLLER, [{"name": "tcp-prometheus-servicemonitor", "port": 9402, "protocol": "TCP",
                                                   "targetPort": "http-metrics"}]),
            _service("cert-manager-webhook", WEBHOOK, [
                {"name": "https", "port": 443, "protocol": "TCP", "targetPort": "https"},
                {"name": "metrics", "port": 9402, "protocol": "TCP", "targetPort": "http-metrics"}]),
            _deployment("cert-manager-cainjector", CAINJECTOR, {
                "args": ["--v=2", "--leader-election-namespace=kube-system"], "env": [POD_NAMESPACE],
                "image": image("cainjector"), "imagePullPolicy": "IfNotPresent", "name": "cert-manager-cainjector",
                "ports": [METRICS_PORT], "securityContext": DROP_ALL}),
            _controller(facts),
            _deployment("cert-manager-webhook", WEBHOOK, {
                "args": ["--v=2", "--secure-port=10250", "--dynamic-serving-ca-secret-namespace=$(POD_NAMESPACE)",
                         "--dynamic-serving-ca-secret-name=" + WEBHOOK_CA]
                + ["--dynamic-serving-dns-names=cert-manager-webhook" + suffix
                   for suffix in ("", ".$(POD_NAMESPACE)", ".$(POD_NAMESPACE).svc")],
                "env": [POD_NAMESPACE], "image": image("webhook"), "imagePullPolicy": "IfNotPresent",
                "livenessProbe": _webhook_probe("/livez", 60, 10), "name": "cert-manager-webhook",
                "ports": [{"containerPort": 10250, "name": "https", "protocol": "TCP"},
                          {"containerPort": 6080, "name": "healthcheck", "protocol": "TCP"}, METRICS_PORT],
                "readinessProbe": _webhook_probe("/healthz", 5, 5), "securityContext": DROP_ALL}),
            _webhook_configuration("MutatingWebhookConfiguration", [
                {"apiGroups": [CERT_MANAGER], "apiVersions": ["v1"], "operations": ["CREATE"],
                 "resources": ["certificaterequests"]}], {}),
            _webhook_configuration("ValidatingWebhookConfiguration", [
                {"apiGroups": [CERT_MANAGER, ACME], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
                 "resources": ["*/*"]}],
                {"namespaceSelector": {"matchExpressions": [{"key": "cert-manager.io/disable-validation",
                                                             "operator": "NotIn", "values": ["true"]}]}}),
        ]
    )
