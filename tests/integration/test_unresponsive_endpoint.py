"""An endpoint that accepts connections and never answers (a socket on 127.0.0.1 that reads nothing back): the
task says what it waits for within 10 s, while it waits, and gives up within the documented deadline (3 tries of
KOPS_AWS_READ_TIMEOUT and botocore's back-off of at most 3 s), naming the variable that chose the endpoint."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import threading
import time

import pytest

from tests.integration.conftest import BIN, REPO, ansible_env

READ_TIMEOUT = 6  # a shorter read timeout than the default 20 s keeps the test short; the rule is the same
DEADLINE = 3 * READ_TIMEOUT + 3


@pytest.fixture
def silent_endpoint():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held = []
    stop = threading.Event()

    def accept():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])  # accepted, never read, never answered
            except socket.timeout:
                continue
    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield "http://127.0.0.1:%d" % server.getsockname()[1]
    stop.set()
    thread.join()
    for connection in held:
        connection.close()
    server.close()


def test_an_unresponsive_s3_endpoint_is_announced_then_given_up(silent_endpoint, tmp_path):
    env = ansible_env(REPO / "build" / "collections")
    env.update({"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
                "AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
                "AWS_ENDPOINT_URL_S3": silent_endpoint, "AWS_ENDPOINT_URL": "http://127.0.0.1:9",
                "KOPS_AWS_READ_TIMEOUT": str(READ_TIMEOUT)})
    env.pop("AWS_PROFILE", None)
    started = time.monotonic()
    proc = subprocess.Popen([str(BIN / "ansible-playbook"), str(REPO / "playbooks" / "get_cluster.yml"),
                             "-e", "cluster_name=k8s.example.com", "-e", "state_store=s3://bucket"],
                            env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []  # (seconds since the task began, line)
    task_began = None
    for line in proc.stdout:
        now = time.monotonic() - started
        if task_began is None and line.startswith("TASK [Read the cluster"):
            task_began = now
        lines.append((now - (task_began or 0), line.rstrip("\n")))
    assert proc.wait(timeout=120) != 0
    text = "\n".join(line for _when, line in lines)
    notices = [(at, line) for at, line in lines if "waiting for AWS S3" in line]
    assert notices, text
    at, first = notices[0]
    assert re.search(r"waiting for AWS S3 \w+ at %s \(from AWS_ENDPOINT_URL_S3\): 10 s so far; gives up after "
                     r"%d s" % (re.escape(silent_endpoint), DEADLINE), first), first
    failure = [(at, line) for at, line in lines if "did not answer within" in line]
    assert failure and "check AWS_ENDPOINT_URL_S3" in failure[0][1], text
    # The notice came while the module waited (within 10 s of the wait's start: written at 9.5 s, so that it is
    # printed by 10 s; plus the module's own start-up), and the failure within the deadline (plus start-up and the
    # module's return).
    assert 9.5 <= at < failure[0][0], (at, failure[0][0])
    assert failure[0][0] < DEADLINE + 15, text
