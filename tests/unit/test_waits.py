"""module_utils/waits.py: a wait past 10 s says what it waits for; the AWS clients' requests are such waits, named
with the setting that chose their endpoint."""

from __future__ import annotations

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils import waits
from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws


class Clock(object):
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_a_wait_is_announced_within_ten_seconds_then_every_ten():
    clock = Clock()
    watcher = waits._Watcher("/dev/null", clock=clock)
    watcher.thread = object()  # no thread: the test drives the clock
    watcher.waits["k"] = ["AWS S3 at http://127.0.0.1:1", clock.now, 63, clock.now + waits.NOTICE_AFTER]
    clock.now += 9.4
    assert watcher.due() == []
    clock.now += 0.2  # the watcher's tick: written a little before 10 s, printed by then
    assert watcher.due() == ["waiting for AWS S3 at http://127.0.0.1:1: 10 s so far; gives up after 63 s"]
    assert watcher.due() == []
    clock.now += 9.4
    assert watcher.due() == []
    clock.now += 0.2
    assert watcher.due() == ["waiting for AWS S3 at http://127.0.0.1:1: 19 s so far; gives up after 63 s"]
    watcher.stop("k")
    clock.now += 5
    assert watcher.due() == []


def test_a_silence_of_ten_seconds_says_what_the_module_is_still_at(tmp_path):
    clock = Clock()
    path = tmp_path / "notices"
    watcher = waits._Watcher(str(path), clock=clock)
    watcher.thread = object()
    clock.now += 9.4
    assert watcher.due() == []
    clock.now += 0.2
    assert watcher.due() == ["still working: 10 s so far"]
    clock.now += 2
    watcher.write("[   12.0s] nodes i-1 drain: evicting pods from node n1", step=True)
    clock.now += 9.4
    assert watcher.due() == []
    clock.now += 0.2
    assert watcher.due() == ["still working, 10 s since: [   12.0s] nodes i-1 drain: evicting pods from node n1"]
    assert watcher.due() == []
    clock.now += 9.6
    assert watcher.due() == ["still working, 19 s since: [   12.0s] nodes i-1 drain: evicting pods from node n1"]
    assert path.read_text() == "[   12.0s] nodes i-1 drain: evicting pods from node n1\n"


def test_a_wait_begun_since_the_last_line_is_said_when_the_silence_is_up():
    """A wait that began 5 s after the last line would first be announced 14.5 s after it: the silence is broken
    with the wait itself at 9.5 s."""
    clock = Clock()
    watcher = waits._Watcher("/dev/null", clock=clock)
    watcher.thread = object()
    watcher.write("[    1.0s] nodes i-1 terminate: terminating", step=True)
    clock.now += 5
    watcher.start("k", "the API at https://127.0.0.1:1", None)
    clock.now += 4.6
    assert watcher.due() == ["waiting for the API at https://127.0.0.1:1: 5 s so far"]
    clock.now += 9.6
    assert watcher.due() == ["waiting for the API at https://127.0.0.1:1: 14 s so far"]


def test_waits_write_to_the_notice_file_only_when_one_is_given(tmp_path, monkeypatch):
    monkeypatch.delenv(waits.NOTICE_ENV, raising=False)
    waits.notice("nobody reads this")  # no file: nothing written, nothing raised
    path = tmp_path / "notices"
    monkeypatch.setenv(waits.NOTICE_ENV, str(path))
    waits.notice("downloading the nodes' wheels (44 files, 38.0 MB)")
    assert path.read_text() == "downloading the nodes' wheels (44 files, 38.0 MB)\n"


@pytest.mark.parametrize("env, explicit, named", [
    ({"AWS_ENDPOINT_URL_S3": "http://127.0.0.1:1", "AWS_ENDPOINT_URL": "http://127.0.0.1:2"}, None,
     "AWS_ENDPOINT_URL_S3"),
    ({"AWS_ENDPOINT_URL": "http://127.0.0.1:2"}, None, "AWS_ENDPOINT_URL"),
    ({"AWS_ENDPOINT_URL_S3": "http://127.0.0.1:1"}, "http://127.0.0.1:3", "the state store's endpoint option"),
    ({}, None, "the region's AWS endpoint"),
])
def test_an_endpoint_is_named_by_the_setting_that_chose_it(monkeypatch, env, explicit, named):
    for variable in ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(variable, raising=False)
    for variable, value in env.items():
        monkeypatch.setenv(variable, value)
    aws.configure({})
    assert aws.endpoint_source("S3", explicit).startswith(named)


def test_the_option_is_named_when_it_set_the_endpoint(monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL_EC2", "http://127.0.0.1:1")
    aws.configure({"endpoint_url": "http://127.0.0.1:2"})
    try:
        assert aws.endpoint_source("EC2") == "endpoint_url (or AWS_URL)"
    finally:
        aws.configure({})


def test_the_documented_deadline():
    class Config(object):
        connect_timeout, read_timeout = aws.DEFAULT_CONNECT_TIMEOUT, aws.DEFAULT_READ_TIMEOUT
    assert aws.deadline(Config) == 63  # the doc fragment kubeops.kops.aws and docs/playbooks.md say 63 seconds
