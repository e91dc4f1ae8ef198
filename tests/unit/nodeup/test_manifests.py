"""Static pods and control-plane credentials from kops' own nodeup configs (minimal-aws, minimal_gce)."""

from __future__ import annotations


import kubernetes_validate
import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import credentials, files, goyaml, manifests

from tests.conformance import kops_fixtures

KAPI = "/srv/kubernetes/kube-apiserver"
CONFIGS = [("minimal-aws", "master-us-test-1a"), ("minimal-aws", "nodes"),
           ("minimal_gce", "master-us-test1-a"), ("minimal_gce", "nodes")]


def _kops_config(name, group):
    """kops' own nodeupconfig.yaml for a group of a fixture (S3 object on AWS, storage object on GCE)."""
    matches = sorted((kops_fixtures.UPDATE_CLUSTER / name / "data").glob("*nodeupconfig-%s_content" % group))
    assert matches, "no nodeupconfig fixture for %s/%s" % (name, group)
    return yaml.safe_load(matches[0].read_text())


def test_kube_apiserver_arguments_are_kops():
    """kops' nodeup, given this nodeupconfig, runs kube-apiserver with exactly these arguments, but for anonymous
    requests: kops' --anonymous-auth=false becomes an authentication config that lets only the health paths in
    (test_anonymous_requests_reach_only_the_health_paths)."""
    pod = manifests.kube_apiserver_pod(_kops_config("minimal-aws", "master-us-test-1a"))
    container = pod["spec"]["containers"][0]
    assert container["command"] == ["/go-runner"]
    assert container["args"] == [
        "--log-file=/var/log/kube-apiserver.log", "--also-stdout", "/usr/local/bin/kube-apiserver",
        "--allow-privileged=true", "--api-audiences=kubernetes.svc.default",
        "--apiserver-count=1", "--authentication-config=%s/authentication-config.yaml" % KAPI,
        "--authorization-mode=Node,RBAC", "--bind-address=0.0.0.0",
        "--client-ca-file=/srv/kubernetes/ca.crt",
        "--enable-admission-plugins=DefaultStorageClass,DefaultTolerationSeconds,LimitRanger,"
        "MutatingAdmissionWebhook,NamespaceLifecycle,NodeRestriction,ResourceQuota,RuntimeClass,ServiceAccount,"
        "ValidatingAdmissionPolicy,ValidatingAdmissionWebhook",
        "--etcd-cafile=%s/etcd-ca.crt" % KAPI, "--etcd-certfile=%s/etcd-client.crt" % KAPI,
        "--etcd-keyfile=%s/etcd-client.key" % KAPI, "--etcd-servers-overrides=/events#https://127.0.0.1:4002",
        "--etcd-servers=https://127.0.0.1:4001",
        "--kubelet-client-certificate=%s/kubelet-api.crt" % KAPI, "--kubelet-client-key=%s/kubelet-api.key" % KAPI,
        "--kubelet-preferred-address-types=InternalIP,Hostname,ExternalIP",
        "--proxy-client-cert-file=%s/apiserver-aggregator.crt" % KAPI,
        "--proxy-client-key-file=%s/apiserver-aggregator.key" % KAPI,
        "--requestheader-allowed-names=aggregator",
        "--requestheader-client-ca-file=%s/apiserver-aggregator-ca.crt" % KAPI,
        "--requestheader-extra-headers-prefix=X-Remote-Extra-", "--requestheader-group-headers=X-Remote-Group",
        "--requestheader-username-headers=X-Remote-User", "--secure-port=443",
        "--service-account-issuer=https://api.internal.minimal-aws.example.com",
        "--service-account-jwks-uri=https://api.internal.minimal-aws.example.com/openid/v1/jwks",
        "--service-account-key-file=%s/service-account.pub" % KAPI,
        "--service-account-signing-key-file=%s/service-account.key" % KAPI,
        "--service-cluster-ip-range=100.64.0.0/13", "--storage-backend=etcd3",
        "--tls-cert-file=%s/server.crt" % KAPI, "--tls-private-key-file=%s/server.key" % KAPI, "--v=2"]
    assert container["image"] == "registry.k8s.io/kube-apiserver:v1.34.0"
    assert container["ports"] == [{"name": "https", "containerPort": 443, "hostPort": 443}]
    assert container["startupProbe"]["httpGet"] == {"host": "127.0.0.1", "path": "/livez", "port": 443,
                                                    "scheme": "HTTPS"}
    assert pod["metadata"]["annotations"] == {
        "dns.alpha.kubernetes.io/external": "api.minimal-aws.example.com",
        "dns.alpha.kubernetes.io/internal": "api.internal.minimal-aws.example.com",
        "kubectl.kubernetes.io/default-container": "kube-apiserver"}
    mounts = {m["name"]: m for m in container["volumeMounts"]}
    assert "readOnly" not in mounts["logfile"] and mounts["srvkapi"]["readOnly"] is True
    assert [v["name"] for v in pod["spec"]["volumes"]] == [m["name"] for m in container["volumeMounts"]]


def test_controller_manager_scheduler_and_proxy_arguments_are_kops():
    config = _kops_config("minimal-aws", "master-us-test-1a")
    kcm = manifests.kube_controller_manager_pod(config)["spec"]["containers"][0]["args"][3:]
    assert kcm == sorted(kcm)
    assert kcm == [
        "--allocate-node-cidrs=true", "--attach-detach-reconcile-sync-period=1m0s",
        "--authentication-kubeconfig=/var/lib/kube-controller-manager/kubeconfig",
        "--authorization-kubeconfig=/var/lib/kube-controller-manager/kubeconfig",
        "--cloud-provider=external", "--cluster-cidr=100.96.0.0/11", "--cluster-name=minimal-aws.example.com",
        "--cluster-signing-cert-file=/srv/kubernetes/kube-controller-manager/ca.crt",
        "--cluster-signing-key-file=/srv/kubernetes/kube-controller-manager/ca.key",
        "--configure-cloud-routes=false",
        "--flex-volume-plugin-dir=/usr/libexec/kubernetes/kubelet-plugins/volume/exec/",
        "--kubeconfig=/var/lib/kube-controller-manager/kubeconfig", "--leader-elect=true",
        "--root-ca-file=/srv/kubernetes/ca.crt",
        "--service-account-private-key-file=/srv/kubernetes/kube-controller-manager/service-account.key",
        "--tls-cert-file=/srv/kubernetes/kube-controller-manager/server.crt",
        "--tls-private-key-file=/srv/kubernetes/kube-controller-manager/server.key",
        "--use-service-account-credentials=true", "--v=2"]
    scheduler = manifests.kube_scheduler_pod(config)["spec"]["containers"][0]["args"][3:]
    assert scheduler == [
        "--authentication-kubeconfig=/var/lib/kube-scheduler/kubeconfig", "--authentication-skip-lookup=false",
        "--authentication-tolerate-lookup-failure=false",
        "--authorization-kubeconfig=/var/lib/kube-scheduler/kubeconfig",
        "--config=/var/lib/kube-scheduler/config.yaml", "--leader-elect=true",
        "--tls-cert-file=/srv/kubernetes/kube-scheduler/server.crt",
        "--tls-private-key-file=/srv/kubernetes/kube-scheduler/server.key", "--v=2"]
    # The control plane's kube-proxy talks to its own API server; a worker's to the internal API name.
    proxy = manifests.kube_proxy_pod(config, control_plane=True)["spec"]["containers"][0]
    assert proxy["args"][3:] == ["--cluster-cidr=100.96.0.0/11", "--conntrack-max-per-core=131072",
                                 "--kubeconfig=/var/lib/kube-proxy/kubeconfig", "--master=https://127.0.0.1",
                                 "--oom-score-adj=-998", "--v=2"]
    worker = manifests.kube_proxy_pod(_kops_config("minimal-aws", "nodes"), control_plane=False)
    assert "--master=https://api.internal.minimal-aws.example.com" in worker["spec"]["containers"][0]["args"]
    assert worker["spec"]["priorityClassName"] == "system-node-critical"


@pytest.mark.parametrize("name, group", CONFIGS)
def test_static_pods_validate_against_kubernetes_schemas(name, group):
    config = _kops_config(name, group)
    pods = manifests.static_pods(config)
    expected = {"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy"} \
        if "ControlPlaneConfig" in config else {"kube-proxy"}
    assert set(pods) == expected
    version = config["KubernetesVersion"].rsplit(".", 1)[0] + ".0"
    for pod in pods.values():
        # The file as node_files writes it (kops' YAML), read back as the kubelet reads it: the same pod, and
        # valid; strict: no unknown fields anywhere.
        document = yaml.safe_load(goyaml.dumps(pod))
        assert document == pod
        kubernetes_validate.validate(document, version, strict=True)


def test_schema_validation_catches_a_broken_pod():
    pod = manifests.kube_scheduler_pod(_kops_config("minimal-aws", "master-us-test-1a"))
    pod["spec"]["containers"][0]["volumeMount"] = []
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(pod, "1.34.0", strict=True)


@pytest.mark.parametrize("table, values, expected", [
    ("KUBE_PROXY", {}, ["--v=0"]),  # kube-proxy's logLevel is a plain int32: always written
    ("KUBE_APISERVER", {}, ["--secure-port=0"]),  # logLevel has flag-empty 0, securePort does not
    ("KUBE_APISERVER", {"securePort": 443, "logLevel": 4, "eventTTL": "3600s", "auditWebhookBatchThrottleQps": "500m",
                        "featureGates": {"B": "false", "A": "true"}, "serviceAccountKeyFile": ["a", "b"]},
     ["--audit-webhook-batch-throttle-qps=0.5", "--event-ttl=1h0m0s", "--feature-gates=A=true,B=false",
      "--secure-port=443", "--service-account-key-file=a", "--service-account-key-file=b", "--v=4"]),
    ("KUBE_SCHEDULER", {"logLevel": 2, "leaderElection": {"leaderElect": False, "leaderElectLeaseDuration": "15s"}},
     ["--leader-elect-lease-duration=15s", "--leader-elect=false", "--v=2"]),
])
def test_flag_builder(table, values, expected):
    assert manifests.build_flags(table, values) == expected


@pytest.mark.parametrize("text, expected", [("1m0s", "1m0s"), ("60s", "1m0s"), ("90m", "1h30m0s"), ("0", "0s"),
                                            ("500ms", "500ms"), ("1.5s", "1.5s"), ("2h", "2h0m0s")])
def test_go_durations(text, expected):
    assert manifests.format_go_duration(manifests.parse_go_duration(text)) == expected


def test_bad_duration_names_the_value():
    with pytest.raises(ValueError, match="'5 minutes' is not a Go duration"):
        manifests.build_flags("KUBE_APISERVER", {"eventTTL": "5 minutes"})


def test_apiserver_certificate_names():
    config = _kops_config("minimal-aws", "master-us-test-1a")
    dns_names, ips = credentials.apiserver_names(config)
    assert dns_names == ["kubernetes", "kubernetes.default", "kubernetes.default.svc",
                         "kubernetes.default.svc.cluster.local", "api.minimal-aws.example.com",
                         "api.internal.minimal-aws.example.com"]
    assert ips == ["100.64.0.1", "127.0.0.1"]
    requests = credentials.control_plane_requests(config, "ip-10-0-0-1.ec2.internal")
    by_cn = {r["common_name"]: r for r in requests}
    assert by_cn["system:node:ip-10-0-0-1.ec2.internal"]["organizations"] == ["system:nodes"]
    assert by_cn["kube-apiserver"]["signer"] == "etcd-clients-ca"
    assert {r["signer"] for r in requests} == {"kubernetes-ca", "apiserver-aggregator-ca", "etcd-clients-ca"}
    assert credentials.control_plane_requests(_kops_config("minimal-aws", "nodes"), "n") == []


def test_worker_kube_proxy_uses_the_kubelet_certificate():
    config = _kops_config("minimal-aws", "nodes")
    config["kubeops"] = {"apiServer": {"host": "api.internal.minimal-aws.example.com", "port": 443},
                         "kubeletBootstrap": {"tokenSecret": "kubelet-bootstrap-token"}}
    written = {f.path: f for f in files.node_files(config, {"name": "n1"}, bootstrap_token="abc.def")}
    kubeconfig = yaml.safe_load(written["/var/lib/kube-proxy/kubeconfig"].content)
    assert kubeconfig["users"][0]["user"] == {"client-certificate": manifests.KUBELET_CLIENT_CERT,
                                              "client-key": manifests.KUBELET_CLIENT_CERT}
    assert kubeconfig["clusters"][0]["cluster"]["server"] == "https://api.internal.minimal-aws.example.com:443"
    assert written["/var/lib/kube-proxy/kubeconfig"].mode == 0o400
    assert written["/var/log/kube-proxy.log"].if_missing
    assert "/etc/kubernetes/manifests/kube-apiserver.manifest" not in written


def test_hooks_are_kops_units():
    """The unit kops' nodeup writes for an execContainer hook (its golden test hooks-containerd-exec)."""
    config = _kops_config("minimal-aws", "nodes")
    config["Hooks"] = [None, [{"execContainer": {"image": "busybox", "command": [
        "sh", "-c", "chroot /rootfs apt-get update && chroot /rootfs apt-get install -y ceph-common"]}}]]
    written = {f.path: f for f in files.node_files(dict(config, kubeops={}), {"name": "n1"})
               if f.path.startswith("/etc/systemd/system/kops-hook")}
    unit = written["/etc/systemd/system/kops-hook-0.service"]
    assert unit.restarts == ("kops-hook-0.service",)
    assert unit.content.decode() == (
        "[Unit]\nDescription=Kops Hook kops-hook-0\nRequires=containerd.service\n\n[Service]\n"
        "ExecStartPre=/usr/bin/ctr --namespace k8s.io image pull docker.io/library/busybox:latest\n"
        "ExecStart=/usr/bin/ctr --namespace k8s.io run --rm --mount type=bind,src=/,dst=/rootfs,options=rbind:rslave "
        "--mount type=bind,src=/var/run/dbus,dst=/var/run/dbus,options=rbind:rprivate "
        "--mount type=bind,src=/run/systemd,dst=/run/systemd,options=rbind:rprivate --net-host --privileged "
        "docker.io/library/busybox:latest kops-hook-0 sh -c \"chroot /rootfs apt-get update && chroot /rootfs "
        "apt-get install -y ceph-common\"\nType=oneshot\n\n[Install]\nWantedBy=multi-user.target\n")


def test_hook_names_manifests_and_disabled_hooks():
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import hooks
    config = {"Hooks": [
        [{"manifest": "Type=oneshot\nExecStart=/bin/true", "before": ["kubelet.service"]}],
        [{"name": "raw.service", "useRawManifest": True, "manifest": "[Unit]\nDescription=raw\n"},
         {"name": "off", "disabled": True, "manifest": "ExecStart=/bin/false"},
         {"manifest": "ExecStart=/bin/true"}]]}
    units = dict(hooks.hook_units(config))
    assert sorted(units) == ["kops-hook-0-ig.service", "kops-hook-2.service", "raw.service"]  # kops numbers by position
    assert units["raw.service"] == "[Unit]\nDescription=raw\n"
    assert units["kops-hook-0-ig.service"] == ("[Unit]\nDescription=Kops Hook kops-hook-0-ig\nBefore=kubelet.service"
                                               "\n\n[Service]\nType=oneshot\nExecStart=/bin/true\n")
    with pytest.raises(ValueError, match=r"hooks\[bad\].execContainer.image is empty"):
        hooks.hook_units({"Hooks": [[{"name": "bad", "execContainer": {"image": " "}}]]})


def test_anonymous_requests_reach_only_the_health_paths():
    """With anonymousAuth false the kubelet's probes (no credentials) got 401 from a real kube-apiserver 1.36, which was
    killed when its startup probe gave up: the health paths are let in through KEP-4633's configuration instead."""
    config = _kops_config("minimal-aws", "master-us-test-1a")
    text = manifests.health_authentication_config(config)
    document = yaml.safe_load(text)
    assert document["kind"] == "AuthenticationConfiguration" and document["anonymous"]["enabled"] is True
    assert [c["path"] for c in document["anonymous"]["conditions"]] == ["/healthz", "/livez", "/readyz"]
    written = {f.path: f for f in files.node_files(config, {"name": "n", "address": None, "arch": "amd64"})}
    assert written[manifests.HEALTH_AUTHN_CONFIG].content.decode() == text
    assert written[manifests.HEALTH_AUTHN_CONFIG].mode == 0o600
    # Where it does not apply, kops' flag stays: anonymous allowed, the user's own config, OIDC flags, before 1.32.
    for change in ({"anonymousAuth": True}, {"authenticationConfigFile": "/x.yaml"},
                   {"oidcIssuerURL": "https://issuer"}):
        changed = yaml.safe_load(yaml.safe_dump(config))
        changed["APIServerConfig"]["KubeAPIServer"].update(change)
        assert manifests.health_authentication_config(changed) is None
        args = manifests.kube_apiserver_pod(changed)["spec"]["containers"][0]["args"]
        assert "--authentication-config=%s" % manifests.HEALTH_AUTHN_CONFIG not in args
    old = yaml.safe_load(yaml.safe_dump(config))
    old["KubernetesVersion"] = "1.31.4"
    assert manifests.health_authentication_config(old) is None
    assert "--anonymous-auth=false" in manifests.kube_apiserver_pod(old)["spec"]["containers"][0]["args"]
