"""kops' GCE names: dashes for dots, and a cut with a hash where a name would pass its limit."""

from __future__ import annotations

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names import gce as names

LONG = "minimal-gce-with-a-very-very-very-very-very-long-name.example.com"


@pytest.mark.parametrize("function, args, expected", [
    # Values read from kops' fixtures (minimal_gce*, many-addons-gce).
    (names.network_name, (LONG,), "minimal-gce-with-a-very-very-very-very-very-long-name-ex-96dqvi"),
    (names.cluster_suffixed, ("us-test1", LONG), "us-test1-minimal-gce-with-a-very-very-very-very-very-lon-96dqvi"),
    (names.cluster_suffixed, ("https-api-ipv6", LONG), "https-api-ipv6-minimal-gce-with-a-very-very-very-very-ve-96dqvi"),
    (names.instance_group_manager_name, (LONG, "master-us-test1-a", "us-test1-a"),
     "a-master-us-test1-a-minimal-gce-with-a-very-very-very-ve-j0fh8f"),
    (names.instance_group_manager_name, ("minimal-gce.example.com", "nodes", "us-test1-b"), "b-nodes-minimal-gce-example-com"),
    (names.template_name_prefix, ("master-us-test1-a", "minimal-gce.example.com"), "master-us-test1-a-minimal-do16cp"),
    (names.template_name_prefix, ("nodes", "minimal-gce.example.com"), "nodes-minimal-gce-example-com"),
    (names.service_account_id, ("control-plane", "minimal-gce.example.com"), "control-plane-minimal-g-fu1mg6"),
    (names.service_account_id, ("node", "minimal-gce.example.com"), "node-minimal-gce-example-com"),
    (names.etcd_disk_name, ("a", "main", LONG), "a-etcd-main-minimal-gce-with-a-very-very-very-very-very--96dqvi"),
    (names.role_tag, ("minimal-gce.example.com", "control-plane"), "minimal-gce-example-com-k8s-io-role-control-plane"),
])
def test_names_are_kops_names(function, args, expected):
    assert function(*args) == expected
    assert len(expected) <= names.MAX_NAME


def test_disk_names_start_with_a_letter():
    assert names.etcd_disk_name("1", "main", "c.example.com") == "d1-etcd-main-c-example-com"


def test_labels_are_encoded_as_kops_encodes_them():
    assert names.encode_label("a/a") == "a-2fa"
    assert names.encode_label("Ab.c") == "-41b-2ec"


def test_a_new_instance_template_name_is_past_the_newest_of_its_prefix(monkeypatch):
    """kops' prefix + time in seconds; a second change within the same second (a no-op run is that fast) takes
    the next number instead of a name GCE already has (alreadyExists)."""
    import types
    from ansible_collections.kubeops.kops.plugins.module_utils.tasks.gce import compute
    monkeypatch.setattr(compute.time, "time", lambda: 1795668281.4)
    existing = [{"name": "nodes-a-c-1795668281"}, {"name": "nodes-a-c-1795668200"}, {"name": "other-1795668290"}]
    task = types.SimpleNamespace(fields={"name_prefix": "nodes-a-c-"}, _templates=lambda cloud: existing)
    assert compute.InstanceTemplate.new_name(task, None) == "nodes-a-c-1795668282"
    task = types.SimpleNamespace(fields={"name_prefix": "nodes-a-c-"}, _templates=lambda cloud: existing[1:])
    assert compute.InstanceTemplate.new_name(task, None) == "nodes-a-c-1795668281"
