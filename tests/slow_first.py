"""Run the slowest tests first, so that `make test`'s two xdist workers finish together.

pytest-xdist's `load` scheduling hands tests out in collection order, in chunks a worker is committed to: a 3-minute
test that is collected late (or sits in a committed chunk) keeps one worker busy while the other has nothing left.
Here the collected tests are ordered by the time they took in a recorded run (tests/durations.json, written by
hack/test_durations.py from a junit report or pytest's --durations output), longest first, and under xdist the
scheduler hands them out two at a time (--maxschedchunk 2): the longest-processing-time-first rule, whose finish is
within the last short tests' time of the best possible.

Tests that share a module- or class-scoped fixture stay together, in their own order, as one unit weighed by their
sum (apart, the fixture would be set up again each time the unit is entered).  Tests the table does not know keep
their collection order after the known ones (they are the fast majority; a new slow test is placed by the next
refresh of the table).
"""

from __future__ import annotations

import json
import pathlib

TABLE = pathlib.Path(__file__).resolve().parent / "durations.json"
SHARED_SCOPES = ("class", "module", "package")
CHUNK = 2


def recorded_durations(path=TABLE):
    """{test node id: seconds} of the recorded run; {} without a table."""
    try:
        return json.loads(path.read_text())["durations"]
    except (OSError, ValueError, KeyError):
        return {}


def unit_of(item):
    """The scheduling unit of a test: its module or class when it uses a fixture of that scope, else itself."""
    info = getattr(item, "_fixtureinfo", None)
    scopes = set()
    for name in getattr(item, "fixturenames", ()):
        for definition in (info.name2fixturedefs.get(name, ()) if info is not None else ()):
            scopes.add(definition.scope)
    if scopes & {"module", "package"}:
        return item.nodeid.split("::", 1)[0]
    if "class" in scopes and "::" in item.nodeid.split("::", 1)[1]:
        return item.nodeid.rsplit("::", 1)[0]
    return item.nodeid


def slowest_first(items, durations):
    """items reordered: units by recorded seconds, descending; a unit's tests in their collected order; ties and
    unknown tests in collection order (the sort is stable, so every xdist worker computes the same order)."""
    units, order = {}, []
    for item in items:
        key = unit_of(item)
        if key not in units:
            units[key] = []
            order.append(key)
        units[key].append(item)
    weight = {key: sum(durations.get(item.nodeid, 0.0) for item in members) for key, members in units.items()}
    ranked = sorted(order, key=lambda key: -weight[key])
    return [item for key in ranked for item in units[key]]


def pytest_configure(config):
    # Small chunks, so that no worker is committed to a slow test the other could start sooner.  Only when xdist
    # runs and the command line did not choose.
    if getattr(config.option, "numprocesses", None) and getattr(config.option, "maxschedchunk", "unset") is None:
        config.option.maxschedchunk = CHUNK


def pytest_collection_modifyitems(session, config, items):
    if config.getoption("--slow-first", default="yes") == "no":
        return
    items[:] = slowest_first(items, recorded_durations())


def pytest_addoption(parser):
    parser.addoption("--slow-first", choices=("yes", "no"), default="yes",
                     help="order tests by tests/durations.json, slowest first (tests/slow_first.py); no: collection order")
