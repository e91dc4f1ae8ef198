"""The nodes' wheels: the size the first download announces is what pip fetches, and the prefetch entry point the
Makefile and docs/awx.md's execution environment run exists in the collection (and ships in the tarball)."""

from __future__ import annotations

import importlib
import os
import pathlib
import re

import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils import waits
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import boot_artifacts

REPO = pathlib.Path(__file__).resolve().parents[3]


def test_the_announced_size_is_the_wheelhouse_s():
    given = os.environ.get(boot_artifacts.WHEELHOUSE_ENV)
    if not given:
        pytest.skip("%s is not set (make exports it after `make venv` downloads the wheels)" % boot_artifacts.WHEELHOUSE_ENV)
    files = sorted(pathlib.Path(given).glob("*.whl"))
    assert (len(files), sum(f.stat().st_size for f in files)) == boot_artifacts.WHEELS_EXPECTED


def test_a_download_says_what_it_fetches_and_its_size_then_what_it_got(tmp_path, monkeypatch):
    notices = tmp_path / "notices"
    monkeypatch.setenv(waits.NOTICE_ENV, str(notices))
    monkeypatch.delenv(boot_artifacts.WHEELHOUSE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))

    def download(requirements, targets, dest):
        assert notices.read_text().startswith("downloading the nodes' wheels")  # said before it starts
        (dest / "a-1.0-py3-none-any.whl").write_bytes(b"x" * 2000000)

    boot_artifacts.wheelhouse(download=download)
    first, done = notices.read_text().splitlines()
    assert re.match(r"downloading the nodes' wheels \(23 pinned packages for CPython 3\.11/3\.12/3\.13 on "
                    r"aarch64/x86_64: 44 files, 38\.0 MB, once\) from the package index into .*boot-wheels-\w+; "
                    r"prefetch them with `make wheels` in a checkout or `python -m "
                    r"ansible_collections\.kubeops\.kops\.plugins\.plugin_utils\.boot_wheels`", first), first
    assert re.match(r"downloaded 1 wheels, 2\.0 MB, in \d+ s$", done), done


def test_the_prefetch_entry_point_of_the_makefile_and_the_execution_environment():
    module = importlib.import_module(boot_artifacts.PREFETCH_MODULE)
    assert callable(module.main) and callable(module.prefetch)
    assert "-m %s" % boot_artifacts.PREFETCH_MODULE in (REPO / "Makefile").read_text()
    awx = (REPO / "docs" / "awx.md").read_text()
    definition = yaml.safe_load(re.search(r"```yaml\n(---\nversion: 3\n.*?)```", awx, re.S).group(1))
    steps = " ".join(definition["additional_build_steps"]["append_final"])
    assert "python3 -m %s /usr/share/kubeops-kops/boot-wheels" % boot_artifacts.PREFETCH_MODULE in steps
    assert "ENV KUBEOPS_BOOT_WHEELHOUSE=/usr/share/kubeops-kops/boot-wheels" in steps
