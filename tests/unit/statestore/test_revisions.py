"""The git loop's check (module_utils/revisions.py): the revision annotation and the three-way comparison."""

from __future__ import annotations

import copy
import re

import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils import clusters, revisions
from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import vfs

NAME = "rev.example.com"
OPTIONS = {"cluster_name": NAME, "cloud_provider": "aws", "networking": "cni", "kubernetes_version": "v1.34.2",
           "zones": ["us-east-1a"], "control_plane_zones": ["us-east-1a"]}
NODES = "instancegroup/nodes-us-east-1a"
# Kubernetes' qualified name (apimachinery validation.IsQualifiedName): an optional DNS-subdomain prefix, then at most
# 63 characters beginning and ending with an alphanumeric.
QUALIFIED_NAME = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                            r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")


def _obj(**spec):
    return {"apiVersion": "kops.k8s.io/v1alpha2", "kind": "Cluster", "metadata": {"name": NAME}, "spec": spec}


def test_a_change_stored_since_that_the_file_holds_is_not_undone():
    base = {"config": _obj(kubernetesVersion="v1.34.2", sshAccess=["0.0.0.0/0"])}
    theirs = {"config": _obj(kubernetesVersion="v1.34.3", sshAccess=["0.0.0.0/0"])}
    # The file's own edit (sshAccess) beside the other change, taken in: nothing undone.
    ours = {"config": _obj(kubernetesVersion="v1.34.3", sshAccess=["10.0.0.0/8"])}
    assert revisions.unseen_changes(base, theirs, ours, clusters.comparable) == []
    # The file's second edit after its own replace: base -> theirs is the file's first edit, still in it.
    second_edit = {"config": _obj(kubernetesVersion="v1.34.3", sshAccess=["10.0.0.0/8"], nonMasqueradeCIDR="x")}
    assert revisions.unseen_changes(base, ours, second_edit, clusters.comparable) == []


def test_a_change_the_file_has_not_seen_is_named_with_its_three_values():
    base = {"config": _obj(kubernetesVersion="v1.34.2", sshAccess=["0.0.0.0/0"], api={"dns": {}}),
            NODES: {"kind": "InstanceGroup", "metadata": {"name": "nodes-us-east-1a"}, "spec": {"maxSize": 1}}}
    theirs = copy.deepcopy(base)
    theirs["config"]["spec"]["sshAccess"] = ["10.0.0.0/8", "10.1.0.0/16"]  # lists compare whole
    theirs[NODES]["spec"]["maxSize"] = 4
    theirs["instancegroup/extra"] = {"kind": "InstanceGroup", "metadata": {"name": "extra"}, "spec": {}}
    ours = copy.deepcopy(base)
    ours["config"]["spec"]["kubernetesVersion"] = "v1.35.0"  # the file's own edit
    ours["instancegroup/extra"] = None  # a prune would remove the group another run added
    undone = revisions.unseen_changes(base, theirs, ours, clusters.comparable)
    assert [(where, field) for where, field, _was, _now, _would in undone] == [
        ("Cluster", "spec.sshAccess"), ("InstanceGroup extra", ""), ("InstanceGroup nodes-us-east-1a", "spec.maxSize")]
    assert revisions.describe(undone) == (
        "spec.sshAccess (was ['0.0.0.0/0'], now ['10.0.0.0/8', '10.1.0.0/16'], the definition has ['0.0.0.0/0']); "
        "InstanceGroup extra (was absent, now present, the definition has absent); "
        "InstanceGroup nodes-us-east-1a spec.maxSize (was 1, now 4, the definition has 1)")


def test_the_annotation_is_kubernetes_valid_and_loads_as_kops_reads_it():
    assert QUALIFIED_NAME.match(revisions.ANNOTATION)
    text = objects.dump_objects([revisions.annotate(_obj(kubernetesVersion="v1.34.2"), "4 (unrecorded 0a1b2c)")])
    assert 'kubeops.kops/revision: 4 (unrecorded 0a1b2c)' in text
    number = objects.dump_objects([revisions.annotate(_obj(), 12)])
    assert 'kubeops.kops/revision: "12"' in number  # a string, as ObjectMeta's map[string]string needs
    loaded = objects.load_objects(text)  # the schema check that mirrors kops' strict decoding
    assert revisions.of_objects(loaded) == "4 (unrecorded 0a1b2c)"
    assert revisions.without_annotation(loaded[0])["metadata"] == {"name": NAME}
    kept = revisions.annotate(_obj(), 3)
    kept["metadata"]["annotations"]["other"] = "x"
    assert revisions.without_annotation(kept)["metadata"]["annotations"] == {"other": "x"}


def test_objects_naming_different_revisions_are_refused():
    group = {"kind": "InstanceGroup", "metadata": {"name": "a", "annotations": {revisions.ANNOTATION: "3"}}}
    with pytest.raises(revisions.RevisionError, match=r"name different revisions .* \(3, 4\)"):
        revisions.of_objects([revisions.annotate(_obj(), 4), group])
    assert revisions.of_objects([revisions.annotate(_obj(), 3), group]) == "3"
    assert revisions.of_objects([_obj()]) is None


def _get(url):
    """What get_cluster.yml writes: the YAML with the Cluster annotated."""
    run = clusters.ClusterService(url)
    cluster, groups = run.read(NAME)
    return objects.dump_objects([revisions.annotate(cluster, run.revision(NAME))] + groups)


def _replace(url, text, **options):
    run = clusters.ClusterService(url)
    run.execute(run.plan_replace(objects.load_objects(text), **options))
    return str(clusters.ClusterService(url).revision(NAME))


def test_the_same_file_replaced_twice_then_refused_for_an_unseen_change(store):
    url = store.base_url
    run = clusters.ClusterService(url)
    run.execute(run.plan_create(OPTIONS))
    mine = _get(url)
    mine = mine.replace("sshAccess:\n  - 0.0.0.0/0", "sshAccess:\n  - 10.0.0.0/8")
    assert _replace(url, mine) == "2"
    mine = mine.replace("kubernetesApiAccess:\n  - 0.0.0.0/0", "kubernetesApiAccess:\n  - 10.1.0.0/16")
    assert _replace(url, mine) == "3"
    assert "annotations" not in clusters.ClusterService(url).read(NAME)[0]["metadata"]
    assert _replace(url, _get(url).replace("kubernetesVersion: v1.34.2", "kubernetesVersion: v1.34.3")) == "4"
    before = {p: vfs.open_store(url).read(p) for p in vfs.open_store(url).list("")}
    with pytest.raises(clusters.ClusterError, match=r"read at revision 1 \(it is at revision 4 now\): replacing would "
                                                    r"undo .*: spec.kubernetesVersion \(was v1.34.2, now v1.34.3"):
        _replace(url, "maxSize: 2\n".join(mine.rsplit("maxSize: 1\n", 1)))  # the nodes
    assert {p: vfs.open_store(url).read(p) for p in vfs.open_store(url).list("")} == before
    # Comments dropped by a YAML tool: the annotation is data, the check still runs.
    dumped = yaml.safe_dump_all(list(yaml.safe_load_all(mine)))
    with pytest.raises(clusters.ClusterError, match="spec.kubernetesVersion"):
        _replace(url, dumped)
    assert _replace(url, dumped.replace("kubernetesVersion: v1.34.2", "kubernetesVersion: v1.34.3")) == "4"


def test_a_revision_the_history_no_longer_keeps_cannot_be_compared(tmp_path):
    url = "file://%s" % (tmp_path / "state")
    run = clusters.ClusterService(url)
    run.store.history_limit = 2
    run.execute(run.plan_create(OPTIONS))
    mine = _get(url)
    for cidr in ("10.1.0.0/16", "10.2.0.0/16"):
        later = clusters.ClusterService(url)
        later.store.history_limit = 2
        later.execute(later.plan_replace(objects.load_objects(
            _get(url).replace("sshAccess:\n  - 0.0.0.0/0", "sshAccess:\n  - " + cidr)
            .replace("sshAccess:\n  - 10.1.0.0/16", "sshAccess:\n  - " + cidr))))
    with pytest.raises(clusters.ClusterError, match="the history no longer keeps revision 1, so what changed since "
                                                    "cannot be told"):
        _replace(url, mine)
    assert _replace(url, mine, force=True) == "4"


def test_a_change_by_another_tool_is_compared_from_the_state_it_read(tmp_path):
    """A file read at an unrecorded state (kops changed the spec): the next write here records that state, so a
    later replace of the file compares with it."""
    url = "file://%s" % (tmp_path / "state")
    run = clusters.ClusterService(url)
    run.execute(run.plan_create(OPTIONS))
    config = tmp_path / "state" / NAME / "config"
    config.write_text(config.read_text().replace("kubernetesVersion: v1.34.2", "kubernetesVersion: v1.34.3"))
    mine = _get(url)
    assert "(unrecorded " in next(yaml.safe_load_all(mine))["metadata"]["annotations"][revisions.ANNOTATION]
    mine = mine.replace("sshAccess:\n  - 0.0.0.0/0", "sshAccess:\n  - 10.0.0.0/8")
    assert _replace(url, mine) == "3"  # 2 records kops' change, 3 is this one
    mine = mine.replace("kubernetesApiAccess:\n  - 0.0.0.0/0", "kubernetesApiAccess:\n  - 10.1.0.0/16")
    assert _replace(url, mine) == "4"
