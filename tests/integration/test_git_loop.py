"""The git loop (issue 31 item 3): get_cluster.yml -> edit -> replace_cluster.yml, again and again, from a user's
directory, with relative paths, as a kops user keeps the cluster's YAML in git.

The file carries the revision it was read at in the Cluster's annotation kubeops.kops/revision; a replace is a
three-way comparison with the spec at that revision: accepted when the file holds every change stored since (its own
earlier replaces included), refused naming the fields when it would undo another run's change it has not seen."""

from __future__ import annotations

import json
import pathlib
import re

import yaml

from tests.integration.conftest import REPO, task_results

PLAYBOOKS = REPO / "playbooks"
NAME = "loop.example.com"
OPTIONS = {"cluster_name": NAME, "cloud_provider": "aws", "networking": "cni", "zones": ["us-east-1a"],
           "kubernetes_version": "v1.34.2"}
NODES = "nodes-us-east-1a"


def _files(root):
    root = pathlib.Path(root)
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _edit(path, obj_name, field, value):
    """Set spec.<field> of the object named obj_name, as an editor would: the one line, the rest byte for byte."""
    text = path.read_text()
    documents = text.split("\n---\n")
    for index, document in enumerate(documents):
        if re.search(r"^  name: %s$" % re.escape(obj_name), document, re.MULTILINE):
            line = "  %s: %s" % (field, value)
            edited, count = re.subn(r"^  %s:.*(?:\n  - .*)*$" % re.escape(field), line, document, flags=re.MULTILINE)
            if not count:
                edited = document.replace("\nspec:\n", "\nspec:\n%s\n" % line, 1)
            documents[index] = edited
    path.write_text("\n---\n".join(documents))


def _stored(store_dir, relpath="config"):
    return yaml.safe_load((store_dir / NAME / relpath).read_text())


def test_edit_and_replace_the_same_file_again_and_again(playbook, tmp_path):
    store_dir = tmp_path / "state"
    store = "state_store=file://%s" % store_dir
    run = dict(cwd=tmp_path)  # the user's directory: spec_file and output are relative to it
    assert playbook(PLAYBOOKS / "create_cluster.yml", "-e", store, "-e", json.dumps({"cluster_options": OPTIONS}),
                    **run)[0] == 0
    code, got = playbook(PLAYBOOKS / "get_cluster.yml", "-e", store, "-e", "cluster_name=" + NAME,
                         "-e", "output=mine.yaml", **run)
    assert code == 0, got
    mine = tmp_path / "mine.yaml"
    cluster = next(yaml.safe_load_all(mine.read_text()))
    assert cluster["metadata"]["annotations"] == {"kubeops.kops/revision": "1"}

    def replace(path, *extra):
        code, result = playbook(PLAYBOOKS / "replace_cluster.yml", "-e", store, "-e", "spec_file=%s" % path.name,
                                *extra, **run)
        return code, task_results(result, "Replace the cluster spec with %s" % path.name)

    # Three edits of one file in a row, each replaced: every change stored since revision 1 is the file's own.
    for number, (obj, field, value) in enumerate([(NAME, "sshAccess", "[10.0.0.0/8]"), (NODES, "maxSize", "3"),
                                                  (NAME, "kubernetesApiAccess", "[10.1.0.0/16]")], start=2):
        _edit(mine, obj, field, value)
        code, result = replace(mine)
        assert code == 0 and result["changed"] is True, result
        assert result["revision"] == str(number) and not result.get("warnings"), result
    assert _stored(store_dir)["spec"]["sshAccess"] == ["10.0.0.0/8"]
    assert _stored(store_dir, "instancegroup/" + NODES)["spec"]["maxSize"] == 3
    assert "annotations" not in _stored(store_dir)["metadata"]  # the revision is never stored

    # Another run reads the cluster now and changes the Kubernetes version; this file has not seen it.
    code, got = playbook(PLAYBOOKS / "get_cluster.yml", "-e", store, "-e", "cluster_name=" + NAME,
                         "-e", "output=theirs.yaml", **run)
    assert code == 0, got
    theirs = tmp_path / "theirs.yaml"
    _edit(theirs, NAME, "kubernetesVersion", "v1.34.3")
    code, result = replace(theirs)
    assert code == 0 and result["revision"] == "5", result

    _edit(mine, NODES, "minSize", "2")
    before = _files(store_dir)
    code, refused = replace(mine)
    assert code != 0 and refused["failed"] is True
    message = refused["msg"]
    assert "\n" not in message
    assert message.startswith("cluster 'loop.example.com' changed in the state store since this definition was read "
                              "at revision 1 (it is at revision 5 now): replacing would undo what changed since, which "
                              "this definition has not seen: spec.kubernetesVersion (was v1.34.2, now v1.34.3, the "
                              "definition has v1.34.2)"), message
    assert "minSize" not in message and "sshAccess" not in message  # the file's own changes are not conflicts
    assert _files(store_dir) == before  # nothing written

    # The user takes the other change into the file (as a git merge would): now nothing is undone.
    _edit(mine, NAME, "kubernetesVersion", "v1.34.3")
    code, result = replace(mine)
    assert code == 0 and result["revision"] == "6", result
    assert _stored(store_dir)["spec"]["kubernetesVersion"] == "v1.34.3"
    assert _stored(store_dir, "instancegroup/" + NODES)["spec"]["minSize"] == 2

    # Through a YAML tool that drops comments and reorders nothing it need not: the annotation survives, so the
    # check still runs.  Another run changes the nodes' machine type meanwhile; the tool's output would undo it.
    passed = tmp_path / "passed.yaml"
    passed.write_text(yaml.safe_dump_all(list(yaml.safe_load_all(mine.read_text()))))
    assert "#" not in passed.read_text()
    assert playbook(PLAYBOOKS / "get_cluster.yml", "-e", store, "-e", "cluster_name=" + NAME,
                    "-e", "output=theirs.yaml", **run)[0] == 0
    _edit(theirs, NODES, "machineType", "m6i.xlarge")
    code, result = replace(theirs)
    assert code == 0 and result["revision"] == "7", result
    code, refused = replace(passed)
    assert code != 0 and ("InstanceGroup nodes-us-east-1a spec.machineType (was " in refused["msg"]
                          and "now m6i.xlarge, the definition has " in refused["msg"]), refused["msg"]
    assert "kubernetesVersion" not in refused["msg"]
    code, forced = replace(passed, "-e", "force=true")
    assert code == 0 and forced["changed"] is True and not forced.get("warnings")
    assert _stored(store_dir, "instancegroup/" + NODES)["spec"]["machineType"] != "m6i.xlarge"

    # A file without the annotation (never from get_cluster.yml): kops' rule, last writer wins, and one line says
    # that no check was made.
    bare = tmp_path / "bare.yaml"
    documents = list(yaml.safe_load_all(mine.read_text()))
    del documents[0]["metadata"]["annotations"]
    documents[0]["spec"]["sshAccess"] = ["10.9.0.0/16"]
    bare.write_text(yaml.safe_dump_all(documents))
    code, result = replace(bare)
    assert code == 0 and result["changed"] is True
    assert result["warnings"] == ["bare.yaml names no revision it was read at (metadata.annotations "
                                  "kubeops.kops/revision, as get_cluster.yml writes it): replaced without checking "
                                  "for changes stored since it was read"]
    code, text = playbook(PLAYBOOKS / "replace_cluster.yml", "-e", store, "-e", "spec_file=bare.yaml",
                          json_output=False, **run)
    assert code == 0 and len([line for line in text.splitlines() if "[WARNING]" in line]) == 1, text
