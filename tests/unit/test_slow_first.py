"""tests/slow_first.py (the run's order) and hack/test_durations.py (its table)."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import types

from tests import slow_first

REPO = pathlib.Path(__file__).resolve().parents[2]


def _item(nodeid, scopes=()):
    """A collected test as slow_first sees it: node id, fixture names and their definitions' scopes."""
    names = ["fixture_%d" % n for n in range(len(scopes))]
    definitions = {name: [types.SimpleNamespace(scope=scope)] for name, scope in zip(names, scopes)}
    return types.SimpleNamespace(nodeid=nodeid, fixturenames=names,
                                 _fixtureinfo=types.SimpleNamespace(name2fixturedefs=definitions))


def test_slowest_first_and_unknown_tests_keep_their_order():
    items = [_item("tests/a.py::fast"), _item("tests/a.py::slow"), _item("tests/b.py::new1"),
             _item("tests/b.py::middle"), _item("tests/b.py::new2")]
    durations = {"tests/a.py::fast": 0.6, "tests/a.py::slow": 200.0, "tests/b.py::middle": 30.0}
    ordered = [i.nodeid for i in slow_first.slowest_first(items, durations)]
    assert ordered == ["tests/a.py::slow", "tests/b.py::middle", "tests/a.py::fast", "tests/b.py::new1",
                       "tests/b.py::new2"]


def test_tests_sharing_a_module_fixture_stay_together_weighed_by_their_sum():
    items = [_item("tests/m.py::one", ["module"]), _item("tests/x.py::alone"), _item("tests/m.py::two", ["module"]),
             _item("tests/c.py::K::a", ["class"]), _item("tests/c.py::K::b", ["class", "function"])]
    durations = {"tests/m.py::one": 10.0, "tests/m.py::two": 10.0, "tests/x.py::alone": 15.0,
                 "tests/c.py::K::a": 1.0, "tests/c.py::K::b": 1.0}
    ordered = [i.nodeid for i in slow_first.slowest_first(items, durations)]
    assert ordered == ["tests/m.py::one", "tests/m.py::two", "tests/x.py::alone", "tests/c.py::K::a",
                       "tests/c.py::K::b"]


def test_the_recorded_table_is_read_and_names_collected_tests():
    table = slow_first.recorded_durations()
    assert table, "tests/durations.json is missing or empty: refresh it with hack/test_durations.py"
    assert all(seconds >= 0.5 for seconds in table.values())
    # Every entry names a test file of this checkout (a renamed file is caught here, not by a silently slower run).
    assert sorted(n for n in table if not (REPO / n.split("::", 1)[0]).is_file()) == []
    assert slow_first.recorded_durations(REPO / "no-such-table.json") == {}


def _hack():
    spec = importlib.util.spec_from_file_location("test_durations", REPO / "hack" / "test_durations.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_table_is_refreshed_from_junit_and_from_durations_output(tmp_path, monkeypatch):
    hack = _hack()
    junit = tmp_path / "report.xml"
    junit.write_text('<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">'
                     '<testcase classname="tests.unit.test_slow_first" name="test_a[x]" time="3.5"/>'
                     '<testcase classname="tests.unit.test_slow_first" name="test_skipped" time="9">'
                     '<skipped message="no"/></testcase>'
                     '<testcase classname="tests.unit.test_slow_first" name="test_fast" time="0.1"/>'
                     '</testsuite></testsuites>')
    output = tmp_path / "ci.log"
    output.write_text("===== slowest 25 durations =====\n"
                      "6.50s call     tests/unit/test_slow_first.py::test_a[x]\n"
                      "1.00s setup    tests/unit/test_slow_first.py::test_a[x]\n"
                      "2.00s call     tests/nodes/test_x.py::test_y\n")
    table = tmp_path / "durations.json"
    monkeypatch.setattr(hack, "TABLE", table)
    monkeypatch.setattr(hack, "REPO", REPO)
    hack.main([str(junit), str(output)])
    written = json.loads(table.read_text())["durations"]
    # test_a: (3.5 + 7.5) / 2; the skipped and the fast test are left out.
    assert written == {"tests/unit/test_slow_first.py::test_a[x]": 5.5, "tests/nodes/test_x.py::test_y": 2.0}
