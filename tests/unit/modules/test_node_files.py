"""node_files on a control-plane config: static pods (YAML, as kops writes them), log files created once."""

from __future__ import annotations

import os
import stat

import yaml

from ansible_collections.kubeops.kops.plugins.modules import node_files

from tests.unit.modules.test_node_certificates import _control_plane_config

MANIFESTS = ("kube-apiserver", "kube-controller-manager", "kube-proxy", "kube-scheduler")


def test_control_plane_files_once_and_log_files_kept(run_module, store_url, tmp_path):
    config = _control_plane_config(store_url)
    root = tmp_path / "node"
    args = dict(nodeup_config=config, node_name="cp-1", node_address="10.0.0.5", root=str(root))
    first = run_module(node_files, **args)
    for name in MANIFESTS:
        path = "/etc/kubernetes/manifests/%s.manifest" % name
        assert path in first["changed_files"]
        pod = yaml.safe_load((root / path.lstrip("/")).read_text())
        assert pod["metadata"]["name"] == name and pod["spec"]["hostNetwork"] is True
    apiserver = yaml.safe_load((root / "etc/kubernetes/manifests/kube-apiserver.manifest").read_text())
    # As kops': AWS workers get their certificates from the bootstrap service, no bootstrap token.
    assert not [a for a in apiserver["spec"]["containers"][0]["args"] if a.startswith("--enable-bootstrap-token-auth")]
    # The control plane's kubeconfigs carry the certificates node_certificates issues: it writes them.
    assert not (root / "var/lib/kube-scheduler/kubeconfig").exists()
    assert stat.S_IMODE(os.stat(root / "var/lib/kube-scheduler/config.yaml").st_mode) == 0o440  # a file asset
    assert stat.S_IMODE(os.stat(root / "srv/kubernetes/ca.crt").st_mode) == 0o600
    assert "kubelet" not in first["restart"] or "/var/lib/kubelet/kubelet.conf" in first["changed_files"]
    # A log file the pod has written to is never truncated by a later run.
    log = root / "var/log/kube-apiserver.log"
    os.chmod(log, 0o600)
    log.write_text("I1122 started\n")
    again = run_module(node_files, **args)
    assert again["changed"] is False and log.read_text() == "I1122 started\n"


def test_rendered_files_from_a_role(run_module, tmp_path):
    """roles/protokube hands its own rendered files over: one call, units to restart reported per file."""
    root = tmp_path / "node"
    files = [{"path": "/etc/kubeops/etcd-main.env", "content": "ETCD_NAME=etcd-a\n", "restarts": ["etcd-main"]},
             {"path": "/etc/systemd/system/etcd-main-backup.timer", "content": "[Timer]\n", "mode": "0600",
              "restarts": ["etcd-main-backup.timer"]}]
    first = run_module(node_files, files=files, root=str(root))
    assert first["changed"] and sorted(first["restart"]) == ["etcd-main", "etcd-main-backup.timer"]
    assert stat.S_IMODE(os.stat(root / "etc/systemd/system/etcd-main-backup.timer").st_mode) == 0o600
    files[0]["content"] = "ETCD_NAME=etcd-b\n"
    second = run_module(node_files, files=files, root=str(root))
    assert second["changed_files"] == ["/etc/kubeops/etcd-main.env"] and second["restart"] == ["etcd-main"]
    assert run_module(node_files, files=files, root=str(root))["changed"] is False
    bad = run_module(node_files, files=[dict(files[0], mode="rw")], root=str(root))
    assert bad["failed"] and "mode must be octal" in bad["msg"]
    assert "give nodeup_config, files or both" in run_module(node_files, root=str(root))["msg"]
